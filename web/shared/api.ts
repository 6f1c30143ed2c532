/**
 * The pages' one way to read the API: the typed client over the SAME HttpApi definitions the server serves
 * (src/api/*), so a field renamed there fails this build instead of a page at run time. Relative to the page, so a
 * path prefix in front of the service works.
 *
 * A visitor's browser is one client of the oracle's per-IP rate limit (SPEC "Limits": 5 per second, 20 per 10
 * seconds). So reads are shared (one request per distinct read and page load), started in the order the page asks
 * for them (the figures at the top first), paced below that limit, and a 429 is waited out and retried.
 */
import { FetchHttpClient, HttpApi, HttpApiClient } from "@effect/platform"
import { Effect } from "effect"
import { OracleGroup } from "../../src/api/OracleApi.ts"

export class WebApi extends HttpApi.make("web").add(OracleGroup) {}

/** The service's root, as seen from this page: every page lives one level below it. */
export const baseUrl = new URL(".", document.baseURI).href.replace(/\/$/, "")

const client = Effect.runPromise(HttpApiClient.make(WebApi, { baseUrl }).pipe(Effect.provide(FetchHttpClient.layer)))

export type OracleClient = Awaited<typeof client>["oracle"]

/** Under the documented limits, with room for a request the visitor makes meanwhile. */
const WINDOWS = [
  { spanMs: 1_000, most: 4 },
  { spanMs: 10_000, most: 18 }
] as const
/**
 * When this tab's recent reads started (wall-clock ms), kept across reloads of the tab: a visitor who reloads
 * within seconds is still one client to the rate limit.
 */
const PACING_KEY = "cx:oracle-reads"
const started: Array<number> = (() => {
  try {
    const kept = JSON.parse(sessionStorage.getItem(PACING_KEY) ?? "[]") as unknown
    return Array.isArray(kept) ? kept.filter((at): at is number => typeof at === "number" && at > Date.now() - 10_000) : []
  } catch {
    return []
  }
})()
let queue: Promise<void> = Promise.resolve()

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Resolves when one more request fits every window; requests start in the order they asked. */
const slot = (): Promise<void> => {
  const turn = queue.then(async () => {
    for (;;) {
      const now = Date.now()
      const delay = Math.max(
        0,
        ...WINDOWS.map(({ spanMs, most }) => {
          const inWindow = started.filter((at) => at > now - spanMs)
          return inWindow.length < most ? 0 : inWindow[inWindow.length - most]! + spanMs - now
        })
      )
      if (delay === 0) break
      await wait(delay + 5)
    }
    started.push(Date.now())
    if (started.length > 100) started.splice(0, started.length - 100)
    try {
      sessionStorage.setItem(PACING_KEY, JSON.stringify(started.slice(-20)))
    } catch {
      // Storage refused (private mode): pacing still holds within this load.
    }
  })
  queue = turn
  return turn
}

const isRateLimited = (error: unknown) => typeof error === "object" && error !== null && "_tag" in error && error._tag === "RateLimited"

const reads = new Map<string, Promise<unknown>>()

/**
 * One read with the oracle's client, shared by every part of the page that asks for the same `key`. A failure
 * rejects with an Error whose message says what went wrong (the API's own message when it sent one).
 */
export const read = <A, E>(key: string, call: (oracle: OracleClient) => Effect.Effect<A, E>): Promise<A> => {
  const known = reads.get(key)
  if (known !== undefined) return known as Promise<A>
  const attempt = async (retries: number): Promise<A> => {
    await slot()
    const oracle = (await client).oracle
    const exit = await Effect.runPromise(Effect.either(call(oracle)))
    if (exit._tag === "Right") return exit.right
    if (isRateLimited(exit.left) && retries > 0) {
      await wait(1_100)
      return attempt(retries - 1)
    }
    const error = exit.left
    throw new Error(typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error))
  }
  const pending = attempt(3)
  reads.set(key, pending)
  pending.catch(() => reads.delete(key))
  return pending
}

/** A link to an API resource, relative to the page (downloads, manifests). */
export const apiHref = (path: string) => `${baseUrl}${path}`
