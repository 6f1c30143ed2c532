/**
 * Sign-in with Ethereum (issue 9): viem signs the EIP-4361 message for the server's nonce; wrong chain, reused or
 * unknown nonce, bad signatures; a wallet-only CF ID adds an e-mail by a code mailed to it; PATCH /v1/me.
 */
import { getAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { createSiweMessage } from "viem/siwe"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient, signInByEmail, signInByWallet, siweSignature } from "./support/accounts.ts"
import type { Mailbox } from "./support/mailbox.ts"
import { startAccountServer } from "./support/accountServer.ts"
import type { TestServer } from "./support/server.ts"

let mailbox: Mailbox
let server: TestServer
let client: ReturnType<typeof makeClient>
let close: (() => Promise<void>) | undefined

beforeAll(async () => {
  const started = await startAccountServer()
  ;({ mailbox, server, client } = started)
  close = started.close
}, 60_000)

afterAll(async () => {
  await close?.()
})

const newWallet = () => privateKeyToAccount(generatePrivateKey())
const verify = (body: unknown, ip = "10.1.0.1") => client.call("POST", "/v1/auth/siwe/verify", body, { ip })

describe("sign-in with a wallet (SIWE)", () => {
  it("issues a nonce for chain 8453 and signs in, creating the CF ID once", async () => {
    const nonce = await client.call("GET", "/v1/auth/siwe/nonce")
    expect(nonce.status).toBe(200)
    expect(nonce.body).toMatchObject({ chainId: 8453, version: "1", domain: `127.0.0.1:${server.port}`, nonce: expect.stringMatching(/^[A-Za-z0-9]+$/) })

    const wallet = newWallet()
    const first = await signInByWallet(client, wallet, "10.1.0.1")
    const lower = wallet.address.toLowerCase()
    expect(first.me).toEqual({
      cf_id: expect.stringMatching(/^cf_[a-z2-7]{12}$/),
      email: null,
      wallet_address: getAddress(wallet.address),
      display_name: `${lower.slice(0, 6)}...${lower.slice(-4)}`,
      referral_code: expect.stringMatching(/^cf_ref_[a-z2-7]{8}$/),
      points_balance: 0,
      active_context: { type: "personal" }
    })
    const me = await client.call("GET", "/v1/me", undefined, { cookie: first.cookie })
    expect(me.body).toEqual(first.me)
    const second = await signInByWallet(client, wallet, "10.1.0.1")
    expect(second.me.cf_id).toBe(first.me.cf_id)
  })

  it("refuses a message for another chain (422)", async () => {
    const signed = await siweSignature(client, newWallet(), { chainId: 1 })
    const answer = await verify({ message: signed.message, signature: signed.signature })
    expect(answer.status).toBe(422)
    expect(answer.body.error).toMatchObject({ code: "validation_failed", type: "invalid_request_error", param: "message" })
  })

  it("refuses a nonce used before (signature_reused) and one it never issued (unauthorized)", async () => {
    const wallet = newWallet()
    const signed = await siweSignature(client, wallet)
    expect((await verify({ message: signed.message, signature: signed.signature })).status).toBe(200)
    const replay = await verify({ message: signed.message, signature: signed.signature })
    expect(replay.status).toBe(409)
    expect(replay.body.error.code).toBe("signature_reused")
    const again = await siweSignature(client, wallet, { nonce: signed.nonce })
    expect((await verify({ message: again.message, signature: again.signature })).body.error.code).toBe("signature_reused")

    const invented = await siweSignature(client, wallet, { nonce: "abcdefgh12345678" })
    const unknown = await verify({ message: invented.message, signature: invented.signature })
    expect(unknown.status).toBe(401)
    expect(unknown.body.error.code).toBe("unauthorized")
  })

  it("refuses bad signatures (invalid_signature) without spending the nonce", async () => {
    const wallet = newWallet()
    const signed = await siweSignature(client, wallet)
    const byOther = await newWallet().signMessage({ message: signed.message })
    for (const signature of [byOther, "0x1234", `0x${"ab".repeat(65)}`, "not hex"]) {
      const answer = await verify({ message: signed.message, signature })
      expect(answer.status, signature).toBe(401)
      expect(answer.body.error.code, signature).toBe("invalid_signature")
    }
    expect((await verify({ message: signed.message, signature: signed.signature })).status).toBe(200)
  })

  it("refuses a message for another domain, and one that is not a sign-in message", async () => {
    const wallet = newWallet()
    const issued = (await client.call("GET", "/v1/auth/siwe/nonce")).body
    const message = createSiweMessage({
      address: wallet.address,
      chainId: 8453,
      domain: "evil.example",
      nonce: issued.nonce,
      uri: "https://evil.example",
      version: "1"
    })
    const answer = await verify({ message, signature: await wallet.signMessage({ message }) })
    expect(answer.status).toBe(401)
    expect(answer.body.error.code).toBe("unauthorized")
    const garbage = await verify({ message: "hello", signature: await wallet.signMessage({ message: "hello" }) })
    expect(garbage.status).toBe(422)
    expect(garbage.body.error.code).toBe("validation_failed")
  })
})

describe("a wallet-only CF ID", () => {
  it("adds an e-mail by a code sent to it; the e-mail then signs in to the same CF ID", async () => {
    const { cookie, me } = await signInByWallet(client, newWallet(), "10.1.1.1")
    const started = await client.call("POST", "/v1/me/email/start", { email: "Wallet.Owner@example.com" }, { cookie, ip: "10.1.1.1" })
    expect(started.status).toBe(202)
    const code = await mailbox.codeFor("wallet.owner@example.com")

    const wrong = await client.call("POST", "/v1/me/email/verify", { email: "wallet.owner@example.com", code: code === "000000" ? "999999" : "000000" }, { cookie })
    expect(wrong.status).toBe(401)
    const added = await client.call("POST", "/v1/me/email/verify", { email: "wallet.owner@example.com", code }, { cookie })
    expect(added.status).toBe(200)
    expect(added.body).toMatchObject({ cf_id: me.cf_id, email: "wallet.owner@example.com", wallet_address: me.wallet_address })

    const byEmail = await signInByEmail(client, mailbox, "wallet.owner@example.com", "10.1.1.1")
    expect(byEmail.me.cf_id).toBe(me.cf_id)

    const second = await client.call("POST", "/v1/me/email/start", { email: "other@example.com" }, { cookie })
    expect(second.status).toBe(409)
    expect(second.body.error.code).toBe("conflict")
  })

  it("cannot take an e-mail another CF ID has (409 already_exists), and nothing is mailed", async () => {
    await signInByEmail(client, mailbox, "taken@example.com", "10.1.2.1")
    const mailed = mailbox.delivered.length
    const { cookie } = await signInByWallet(client, newWallet(), "10.1.2.1")
    const answer = await client.call("POST", "/v1/me/email/start", { email: "TAKEN@example.com" }, { cookie })
    expect(answer.status).toBe(409)
    expect(answer.body.error).toMatchObject({ code: "already_exists", param: "email" })
    expect(mailbox.delivered.length).toBe(mailed)
  })

  it("needs a session: /v1/me and its e-mail calls answer 401 without one", async () => {
    for (const [method, path, body] of [
      ["GET", "/v1/me", undefined],
      ["PATCH", "/v1/me", { display_name: "x" }],
      ["POST", "/v1/me/email/start", { email: "a@example.com" }],
      ["POST", "/v1/me/email/verify", { email: "a@example.com", code: "123456" }]
    ] as const) {
      const answer = await client.call(method, path, body)
      expect(answer.status, `${method} ${path}`).toBe(401)
      expect(answer.body.error.code).toBe("unauthorized")
    }
  })
})

describe("PATCH /v1/me", () => {
  it("changes the display name, and refuses a bad one (422 with issues) without writing", async () => {
    const { cookie } = await signInByWallet(client, newWallet(), "10.1.3.1")
    const renamed = await client.call("PATCH", "/v1/me", { display_name: "  Satoshi  " }, { cookie })
    expect(renamed.status).toBe(200)
    expect(renamed.body.display_name).toBe("Satoshi")
    for (const display_name of ["", "x".repeat(65), "a\u0007b", 7]) {
      const answer = await client.call("PATCH", "/v1/me", { display_name }, { cookie })
      expect(answer.status, JSON.stringify(display_name)).toBe(422)
      expect(answer.body.error).toMatchObject({ code: "validation_failed", type: "validation_error", param: "display_name" })
    }
    expect((await client.call("GET", "/v1/me", undefined, { cookie })).body.display_name).toBe("Satoshi")
  })
})
