/**
 * Seals a vendor's reasoning into a Responses reasoning item's `encrypted_content` and opens it when a client replays
 * it (DESIGN.md section 10, "Reasoning across turns without state"): AES-256-GCM under the service's key, the account
 * bound in as associated data, so an item opens only for the account it was issued to, and a forged or altered one
 * does not open at all (it is then dropped, never forwarded).
 *
 * The form is `cx1.` + base64url(iv | ciphertext | tag); the plaintext is the JSON of the vendor, the reasoning text
 * and the vendor's signature.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import type { ReasoningSealer, SealedReasoning } from "../../domain/exchange/translate/responsesInbound.ts"
import { AppConfig } from "../platform/AppConfig.ts"

const PREFIX = "cx1."
const IV_BYTES = 12
const TAG_BYTES = 16

const Sealed = Schema.Struct({ vendor: Schema.String, thinking: Schema.String, signature: Schema.String })
const encodeSealed = Schema.encodeSync(Schema.parseJson(Sealed))
const decodeSealed = Schema.decodeUnknownOption(Schema.parseJson(Sealed))

export const makeSealer = (key: Buffer, accountId: string): ReasoningSealer => {
  const aad = Buffer.from(`account:${accountId}`)
  return {
    seal: (reasoning: SealedReasoning) => {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      cipher.setAAD(aad)
      const body = Buffer.concat([cipher.update(encodeSealed(reasoning), "utf8"), cipher.final()])
      return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url")
    },
    open: (sealed: string) => {
      if (!sealed.startsWith(PREFIX)) return undefined
      const bytes = Buffer.from(sealed.slice(PREFIX.length), "base64url")
      if (bytes.length < IV_BYTES + TAG_BYTES) return undefined
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES))
        decipher.setAAD(aad)
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
        const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()])
        return Option.getOrUndefined(decodeSealed(plain.toString("utf8")))
      } catch {
        return undefined
      }
    }
  }
}

export class ReasoningSeal extends Effect.Service<ReasoningSeal>()("ReasoningSeal", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    const key = Option.match(config.exchange.reasoningSealKey, {
      onSome: (secret) => createHash("sha256").update(Redacted.value(secret)).digest(),
      onNone: () => randomBytes(32)
    })
    return { sealerFor: (accountId: string): ReasoningSealer => makeSealer(key, accountId) }
  })
}) {}
