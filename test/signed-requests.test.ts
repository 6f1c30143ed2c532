/**
 * Wallet-signed requests (issue 9), accepted wherever a session is: EIP-191 personal_sign of the canonical text,
 * signed here with viem. Freshness, tampering, malformed signatures, replays (also two at once), another wallet.
 */
import type { PrivateKeyAccount } from "viem/accounts"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient, signInByWallet } from "./support/accounts.ts"
import { type Signing as SignedRequest, signedHeaders as sign } from "./support/signing.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

let database: TestDatabase
let server: TestServer
let client: ReturnType<typeof makeClient>
let alice: PrivateKeyAccount
let bob: PrivateKeyAccount
let aliceCfId: string

beforeAll(async () => {
  database = await createTestDatabase()
  server = await startTestServer({ DATABASE_URL: database.url, TRUST_PROXY: "true" })
  client = makeClient(server.baseUrl)
  alice = privateKeyToAccount(generatePrivateKey())
  bob = privateKeyToAccount(generatePrivateKey())
  aliceCfId = (await signInByWallet(client, alice, "10.2.0.1")).me.cf_id
  await signInByWallet(client, bob, "10.2.0.2")
}, 60_000)

afterAll(async () => {
  await server?.close()
  await database?.close()
})

type Signing = Omit<SignedRequest, "signer"> & { readonly signer?: PrivateKeyAccount }

/** Alice's unless another signer is named. */
const signedHeaders = (options: Signing) => sign({ ...options, signer: options.signer ?? alice })

const send = async (options: Signing, headers?: Record<string, string>, sentBody?: string) =>
  client.call(options.method, options.path, sentBody ?? options.body, { headers: headers ?? (await signedHeaders(options)) })

describe("signed requests", () => {
  it("authenticate a fresh request as the wallet's CF ID, query string and body included", async () => {
    const me = await send({ method: "GET", path: "/v1/me?fields=all" })
    expect(me.status).toBe(200)
    expect(me.body.cf_id).toBe(aliceCfId)
    const renamed = await send({ method: "PATCH", path: "/v1/me", body: JSON.stringify({ display_name: "alice" }) })
    expect(renamed.status).toBe(200)
    expect(renamed.body.display_name).toBe("alice")
    // Lower-case X-CF-Address is the same wallet.
    expect((await send({ method: "GET", path: "/v1/me", address: alice.address.toLowerCase() })).status).toBe(200)
  })

  it("refuse a timestamp more than 5 minutes away (unauthorized)", async () => {
    for (const offset of [-301, 301]) {
      const answer = await send({ method: "GET", path: "/v1/me", timestamp: Math.floor(Date.now() / 1000) + offset })
      expect(answer.status, String(offset)).toBe(401)
      expect(answer.body.error.code).toBe("unauthorized")
    }
    expect((await send({ method: "GET", path: "/v1/me", timestamp: Math.floor(Date.now() / 1000) - 280 })).status).toBe(200)
  })

  it("refuse a tampered body, method or path (invalid_signature)", async () => {
    const body = JSON.stringify({ display_name: "alice" })
    const headers = await signedHeaders({ method: "PATCH", path: "/v1/me", body })
    const tampered = await send({ method: "PATCH", path: "/v1/me" }, headers, JSON.stringify({ display_name: "mallory" }))
    expect(tampered.status).toBe(401)
    expect(tampered.body.error.code).toBe("invalid_signature")
    const otherPath = await send({ method: "GET", path: "/v1/me?x=1" }, await signedHeaders({ method: "GET", path: "/v1/me" }))
    expect(otherPath.body.error.code).toBe("invalid_signature")
  })

  it("refuse garbage and incomplete headers (invalid_signature)", async () => {
    const good = await signedHeaders({ method: "GET", path: "/v1/me" })
    for (const headers of [
      { ...good, "x-cf-signature": "0xdeadbeef" },
      { ...good, "x-cf-signature": `0x${"00".repeat(65)}` },
      { ...good, "x-cf-address": "0x1234" },
      { ...good, "x-cf-timestamp": "yesterday" },
      { ...good, "x-cf-nonce": "a b" },
      { "x-cf-signature": good["x-cf-signature"]! }
    ]) {
      const answer = await send({ method: "GET", path: "/v1/me" }, headers)
      expect(answer.status, JSON.stringify(headers)).toBe(401)
      expect(answer.body.error.code, JSON.stringify(headers)).toBe("invalid_signature")
    }
  })

  it("refuse a nonce used twice (signature_reused)", async () => {
    const headers = await signedHeaders({ method: "GET", path: "/v1/me" })
    expect((await send({ method: "GET", path: "/v1/me" }, headers)).status).toBe(200)
    const replay = await send({ method: "GET", path: "/v1/me" }, headers)
    expect(replay.status).toBe(409)
    expect(replay.body.error.code).toBe("signature_reused")
    // The same nonce on another request is still a reuse.
    const reused = await send({ method: "PATCH", path: "/v1/me", body: "{}", nonce: headers["x-cf-nonce"]! })
    expect(reused.body.error.code).toBe("signature_reused")
  })

  it("let exactly one of two concurrent copies through", async () => {
    for (let round = 0; round < 5; round++) {
      const headers = await signedHeaders({ method: "GET", path: "/v1/me" })
      const answers = await Promise.all([0, 1].map(() => send({ method: "GET", path: "/v1/me" }, headers)))
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    }
  })

  it("refuse a request signed by another CF ID's wallet than X-CF-Address (forbidden)", async () => {
    const answer = await send({ method: "GET", path: "/v1/me", signer: bob, address: alice.address })
    expect(answer.status).toBe(403)
    expect(answer.body.error.code).toBe("forbidden")
  })

  it("refuse a correct signature by a wallet no CF ID has (unauthorized)", async () => {
    const stranger = privateKeyToAccount(generatePrivateKey())
    const answer = await send({ method: "GET", path: "/v1/me", signer: stranger })
    expect(answer.status).toBe(401)
    expect(answer.body.error.code).toBe("unauthorized")
  })
})
