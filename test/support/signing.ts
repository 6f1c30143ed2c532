/**
 * Wallet-signed requests as a client makes them (SPEC "Authentication" 7): the four X-CF-* headers over DESIGN's
 * canonical text, written out here independently of the service's code and signed with viem.
 */
import { createHash, randomBytes } from "node:crypto"
import type { PrivateKeyAccount } from "viem/accounts"

export interface Signing {
  readonly method: string
  readonly path: string
  readonly body?: string
  readonly signer: PrivateKeyAccount
  readonly address?: string
  readonly timestamp?: number
  readonly nonce?: string
}

export const signedHeaders = async (options: Signing): Promise<Record<string, string>> => {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000)
  const nonce = options.nonce ?? randomBytes(12).toString("hex")
  const bodyHash = createHash("sha256").update(options.body ?? "").digest("hex")
  const message = `CF-SIGNED-REQUEST\n${options.method}\n${options.path}\n${timestamp}\n${nonce}\n${bodyHash}`
  return {
    "x-cf-address": options.address ?? options.signer.address,
    "x-cf-timestamp": String(timestamp),
    "x-cf-nonce": nonce,
    "x-cf-signature": await options.signer.signMessage({ message })
  }
}
