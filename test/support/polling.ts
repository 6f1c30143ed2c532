/**
 * Waiting, from outside, for something another process does in its own time (a replica's cache poll, a sweeper, a
 * stream's settlement): polls `check` until it yields a value, or fails naming what it waited for.
 */
export const waitFor = async <A>(what: string, check: () => Promise<A | undefined | false>, ms = 5_000, everyMs = 25): Promise<A> => {
  const until = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
