/**
 * Sign-in with a wallet (EIP-4361 through the browser's injected EIP-1193 provider): the wallet names its address,
 * the service issues a one-use nonce and the domain, URI and chain the message must carry, the wallet signs the
 * message, the service checks the signature and sets the session cookie. The page never sees a private key.
 */
import { useSignal } from "@preact/signals"
import { getAddress, stringToHex } from "viem"
import { createSiweMessage } from "viem/siwe"
import { call } from "./api.ts"
import { refreshIdentity } from "./session.ts"

/** The EIP-1193 surface this needs; wallets inject it as `window.ethereum`. */
interface Eip1193Provider {
  readonly request: (args: { readonly method: string; readonly params?: ReadonlyArray<unknown> }) => Promise<unknown>
}

const injectedWallet = (): Eip1193Provider | undefined => {
  const candidate = (window as { ethereum?: Partial<Eip1193Provider> }).ethereum
  return typeof candidate?.request === "function" ? (candidate as Eip1193Provider) : undefined
}

/** A wallet's refusal (EIP-1193 error 4001) reads as such; anything else keeps its own message. */
const walletMessage = (failure: unknown): string => {
  const code = typeof failure === "object" && failure !== null && "code" in failure ? (failure as { code: unknown }).code : undefined
  if (code === 4001) return "The wallet declined the request: nothing was signed."
  return failure instanceof Error ? failure.message : String(failure)
}

export const WalletSignIn = () => {
  const busy = useSignal(false)
  const step = useSignal<string | null>(null)
  const error = useSignal<string | null>(null)
  const wallet = injectedWallet()

  const signIn = async () => {
    if (wallet === undefined) return
    busy.value = true
    error.value = null
    try {
      step.value = "Asking the wallet for its address…"
      const accounts = (await wallet.request({ method: "eth_requestAccounts" })) as ReadonlyArray<string>
      if (accounts.length === 0 || accounts[0] === undefined) throw new Error("The wallet shared no address.")
      const address = getAddress(accounts[0])
      step.value = "Getting a one-use sign-in nonce…"
      const issued = await call((c) => c.auth.siweNonce())
      const message = createSiweMessage({
        address,
        chainId: issued.chainId,
        domain: issued.domain,
        uri: issued.uri,
        nonce: issued.nonce,
        version: issued.version,
        issuedAt: new Date(),
        expirationTime: new Date(issued.expiresAt),
        statement: "Sign in to Compute Exchange"
      })
      step.value = "Waiting for the wallet's signature…"
      const signature = (await wallet.request({ method: "personal_sign", params: [stringToHex(message), address] })) as string
      step.value = "Checking the signature…"
      await call((c) => c.auth.siweVerify({ payload: { message, signature } }))
      await refreshIdentity()
    } catch (failure) {
      error.value = walletMessage(failure)
    } finally {
      busy.value = false
      step.value = null
    }
  }

  return (
    <div class="stack" aria-labelledby="wallet-sign-in">
      <h2 id="wallet-sign-in">Or with a wallet</h2>
      {wallet === undefined ? (
        <p class="empty">No wallet in this browser: install one that injects an Ethereum provider (EIP-1193), or sign in by e-mail above.</p>
      ) : (
        <>
          <p>Your wallet signs a Sign-In with Ethereum message (EIP-4361) for this service; it costs nothing and sends no transaction.</p>
          <button type="button" onClick={signIn} disabled={busy.value}>Sign in with a wallet</button>
        </>
      )}
      {step.value !== null && <p role="status">{step.value}</p>}
      {error.value !== null && <p class="error" role="alert">{error.value}</p>}
    </div>
  )
}
