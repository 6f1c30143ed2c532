/**
 * Sign-in by e-mail code (the address, then the 6-digit code it received) or by wallet; the API's refusals shown
 * beside each step.
 */
import { useSignal } from "@preact/signals"
import { call } from "./api.ts"
import { refreshIdentity } from "./session.ts"
import { WalletSignIn } from "./WalletSignIn.tsx"

export const SignIn = () => {
  const email = useSignal("")
  const code = useSignal("")
  const sent = useSignal(false)
  const busy = useSignal(false)
  const error = useSignal<string | null>(null)

  const start = async (event: Event) => {
    event.preventDefault()
    busy.value = true
    error.value = null
    try {
      await call((c) => c.auth.emailStart({ payload: { email: email.value.trim() } }))
      sent.value = true
    } catch (failure) {
      error.value = (failure as Error).message
    } finally {
      busy.value = false
    }
  }
  const verify = async (event: Event) => {
    event.preventDefault()
    busy.value = true
    error.value = null
    try {
      await call((c) => c.auth.emailVerify({ payload: { email: email.value.trim(), code: code.value.trim() } }))
      await refreshIdentity()
    } catch (failure) {
      error.value = (failure as Error).message
    } finally {
      busy.value = false
    }
  }
  return (
    <section aria-labelledby="sign-in" class="narrow">
      <h1 id="sign-in">Sign in</h1>
      <p>With your e-mail address: we send you a 6-digit code, valid for 10 minutes. A first sign-in creates your CF ID.</p>
      {!sent.value ? (
        <form onSubmit={start}>
          <label for="email">E-mail address</label>
          <input id="email" type="email" autoComplete="email" required value={email.value} onInput={(e) => (email.value = (e.target as HTMLInputElement).value)} />
          <button type="submit" disabled={busy.value}>Send me a code</button>
        </form>
      ) : (
        <form onSubmit={verify}>
          <p role="status">A code is on its way to <strong>{email.value}</strong>.</p>
          <label for="code">The 6-digit code</label>
          <input id="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required value={code.value} onInput={(e) => (code.value = (e.target as HTMLInputElement).value)} />
          <button type="submit" disabled={busy.value}>Sign in</button>{" "}
          <button type="button" class="link" onClick={() => (sent.value = false)}>Use another address</button>
        </form>
      )}
      {error.value !== null && <p class="error" role="alert">{error.value}</p>}
      <WalletSignIn />
    </section>
  )
}
