/**
 * The key the playground spends: one the user creates for it here (issued in the active context, labelled
 * "playground"), or one the user already has and pastes. The secret lives in this tab's sessionStorage only, so a
 * reload keeps it and closing the tab forgets it; the console never stores a secret anywhere else.
 */
import { type Signal, useSignal } from "@preact/signals"
import { call } from "../api.ts"

const STORAGE = "cx:playground-key"
const SECRET = /^ct_live_[A-Za-z0-9_-]{20,}$/

export const storedSecret = (): string | null => sessionStorage.getItem(STORAGE)

export const PlaygroundKey = (props: { readonly secret: Signal<string | null> }) => {
  const pasted = useSignal("")
  const busy = useSignal(false)
  const error = useSignal<string | null>(null)

  const keep = (secret: string) => {
    sessionStorage.setItem(STORAGE, secret)
    props.secret.value = secret
  }
  const create = async () => {
    busy.value = true
    error.value = null
    try {
      const issued = await call((c) => c.keys.issueKey({ payload: { label: "playground" } }))
      keep(issued.secret)
    } catch (failure) {
      error.value = (failure as Error).message
    } finally {
      busy.value = false
    }
  }
  const use = (event: Event) => {
    event.preventDefault()
    const secret = pasted.value.trim()
    if (!SECRET.test(secret)) {
      error.value = "That is not an API key: keys start with ct_live_ (see the Keys page)."
      return
    }
    error.value = null
    pasted.value = ""
    keep(secret)
  }
  const forget = () => {
    sessionStorage.removeItem(STORAGE)
    props.secret.value = null
  }

  if (props.secret.value !== null) {
    return (
      <p data-testid="playground-key">
        Spending the key <code class="hash">{props.secret.value.slice(0, 12)}…</code> (kept in this tab only).{" "}
        <button type="button" class="link" onClick={forget}>Use another key</button>
      </p>
    )
  }
  return (
    <div class="stack" aria-labelledby="playground-key-heading">
      <h2 id="playground-key-heading">The key to spend</h2>
      <p>The playground sends real requests, billed to the active account like any other. Nothing is sent until you press Send.</p>
      <button type="button" onClick={create} disabled={busy.value}>Create a playground key</button>
      <form onSubmit={use}>
        <label for="playground-secret">Or paste a key you have</label>
        <input id="playground-secret" type="password" autoComplete="off" value={pasted.value} onInput={(e) => (pasted.value = (e.target as HTMLInputElement).value)} />
        <button type="submit">Use this key</button>
      </form>
      {error.value !== null && <p class="error" role="alert">{error.value}</p>}
    </div>
  )
}
