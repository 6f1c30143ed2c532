/**
 * The pure rules of identity (issue 9): CF IDs and referral codes, display-name masking, e-mail codes, the
 * signed-request canonical text and its header checks; disposable e-mail domains (issue 12, optional).
 */
import { Either } from "effect"
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { isDisposable, parseDisposableDomains } from "../domain/accounts/disposableEmail.ts"
import { codeFrom, codeMessage, hashCode, sameDigest } from "../domain/accounts/emailCode.ts"
import {
  base32,
  CF_ID_PATTERN,
  CF_ID_RANDOM_BYTES,
  cfIdFrom,
  defaultDisplayName,
  maskEmail,
  normalizeEmail,
  REFERRAL_CODE_PATTERN,
  REFERRAL_CODE_RANDOM_BYTES,
  referralCodeFrom,
  shortWallet
} from "../domain/accounts/ids.ts"
import { retryAfterSeconds, SIGNUPS_PER_IP } from "../domain/accounts/policies.ts"
import { canonicalMessage, carriesSignature, isFresh, parseSignedRequestHeaders, sha256Hex } from "../domain/accounts/signedRequest.ts"
import { codeIn } from "./support/mailbox.ts"

describe("ids", () => {
  it("encodes base32 (RFC 4648, lower-case) from the leading bits", () => {
    expect(base32(new Uint8Array([0, 0, 0, 0, 0]), 8)).toBe("aaaaaaaa")
    expect(base32(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff]), 8)).toBe("77777777")
    // "fooba" -> MZXW6YTB (RFC 4648 test vector)
    expect(base32(new TextEncoder().encode("fooba"), 8)).toBe("mzxw6ytb")
    expect(() => base32(new Uint8Array(2), 8)).toThrow()
  })

  it("makes a cf_id of 12 and a referral code of 8 base32 characters", () => {
    const cfId = cfIdFrom(new Uint8Array(CF_ID_RANDOM_BYTES).fill(0xa5))
    expect(cfId).toMatch(CF_ID_PATTERN)
    expect(cfId).toHaveLength(15)
    const code = referralCodeFrom(new Uint8Array(REFERRAL_CODE_RANDOM_BYTES).fill(0x3c))
    expect(code).toMatch(REFERRAL_CODE_PATTERN)
    expect(code).toHaveLength(15)
  })

  it("masks e-mails and shortens wallets for the default display name", () => {
    expect(maskEmail("alice@example.com")).toBe("al***@example.com")
    expect(maskEmail("al@example.com")).toBe("a***@example.com")
    expect(maskEmail("a@example.com")).toBe("a***@example.com")
    expect(shortWallet("0x12ab34cd56ef7890aa12bb34cc56dd78ee90ef90")).toBe("0x12ab...ef90")
    expect(defaultDisplayName({ email: "alice@example.com", walletAddress: "0x12ab34cd56ef7890aa12bb34cc56dd78ee90ef90" })).toBe("al***@example.com")
    expect(defaultDisplayName({ email: null, walletAddress: "0x12ab34cd56ef7890aa12bb34cc56dd78ee90ef90" })).toBe("0x12ab...ef90")
    expect(normalizeEmail("  Alice@Example.COM ")).toBe("alice@example.com")
  })
})

describe("e-mail codes", () => {
  it("are six digits, zero-padded", () => {
    expect(codeFrom(42)).toBe("000042")
    expect(codeFrom(999_999)).toBe("999999")
    expect(() => codeFrom(1_000_000)).toThrow()
  })

  it("are stored as an HMAC bound to the address and purpose", () => {
    const base = { email: "a@example.com", purpose: "sign_in" as const, code: "123456" }
    const digest = hashCode("pepper", base)
    expect(digest).toMatch(/^[0-9a-f]{64}$/)
    expect(digest).not.toContain("123456")
    expect(sameDigest(digest, hashCode("pepper", base))).toBe(true)
    expect(sameDigest(digest, hashCode("other pepper", base))).toBe(false)
    expect(sameDigest(digest, hashCode("pepper", { ...base, email: "b@example.com" }))).toBe(false)
    expect(sameDigest(digest, hashCode("pepper", { ...base, purpose: "add_email" }))).toBe(false)
  })

  it("travel in a message a reader (and a test) finds them in", () => {
    const message = codeMessage("012345", "sign_in")
    expect(message.subject).toContain("012345")
    expect(codeIn(message.text)).toBe("012345")
  })
})

describe("signed requests", () => {
  it("sign DESIGN's canonical text", () => {
    const bodySha256 = sha256Hex(new TextEncoder().encode('{"a":1}'))
    expect(bodySha256).toBe(createHash("sha256").update('{"a":1}').digest("hex"))
    expect(canonicalMessage({ method: "post", pathWithQuery: "/v1/keys?x=1", timestamp: 1700000000, nonce: "n0nce-123", bodySha256 })).toBe(
      `CF-SIGNED-REQUEST\nPOST\n/v1/keys?x=1\n1700000000\nn0nce-123\n${bodySha256}`
    )
    expect(sha256Hex(new Uint8Array())).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })

  it("parse the four headers, refusing malformed ones with a reason", () => {
    const good = {
      "x-cf-address": "0x12AB34cd56ef7890aa12bb34cc56dd78ee90ef90",
      "x-cf-timestamp": "1700000000",
      "x-cf-nonce": "abcdefgh",
      "x-cf-signature": `0x${"11".repeat(65)}`
    }
    const parsed = parseSignedRequestHeaders(good)
    expect(parsed).toEqual({
      ok: true,
      value: { address: "0x12ab34cd56ef7890aa12bb34cc56dd78ee90ef90", timestamp: 1700000000, nonce: "abcdefgh", signature: `0x${"11".repeat(65)}` }
    })
    for (const bad of [
      { ...good, "x-cf-address": "0x12" },
      { ...good, "x-cf-timestamp": "-5" },
      { ...good, "x-cf-nonce": "short" },
      { ...good, "x-cf-signature": "0x11" },
      { "x-cf-nonce": "abcdefgh" }
    ]) {
      expect(parseSignedRequestHeaders(bad).ok).toBe(false)
    }
    expect(carriesSignature({ "x-cf-nonce": "abcdefgh" })).toBe(true)
    expect(carriesSignature({ cookie: "cf_session=x" })).toBe(false)
  })

  it("are fresh within 5 minutes either side", () => {
    const now = 1_700_000_000_000
    expect(isFresh(1_700_000_000 - 300, now)).toBe(true)
    expect(isFresh(1_700_000_000 + 300, now)).toBe(true)
    expect(isFresh(1_700_000_000 - 301, now)).toBe(false)
    expect(isFresh(1_700_000_000 + 301, now)).toBe(false)
  })
})

describe("policies", () => {
  it("say when a spent count admits one more", () => {
    const now = new Date("2026-01-02T00:00:00Z")
    expect(retryAfterSeconds(SIGNUPS_PER_IP, new Date("2026-01-01T01:00:00Z"), now)).toBe(3600)
    expect(retryAfterSeconds(SIGNUPS_PER_IP, now, now)).toBe(86400)
    expect(retryAfterSeconds(SIGNUPS_PER_IP, new Date("2025-01-01T00:00:00Z"), now)).toBe(1)
  })
})

describe("disposable e-mail domains", () => {
  const list = Either.getOrThrow(parseDisposableDomains("# a comment\n\nMailinator.com\n  yopmail.com   # trailing comment\r\nexample.\n"))

  it("parse one domain a line, lower-cased, skipping comments and blank lines", () => {
    expect([...list].sort()).toEqual(["example", "mailinator.com", "yopmail.com"])
    expect(Either.getOrThrow(parseDisposableDomains("")).size).toBe(0)
    expect(Either.getOrThrow(parseDisposableDomains("# only comments\n\n")).size).toBe(0)
  })

  it("refuse a line that is not a domain, naming the line", () => {
    expect(parseDisposableDomains("ok.com\nmailinator.com, yopmail.com\n")).toEqual(Either.left('line 2: "mailinator.com, yopmail.com" is not a domain (one domain per line)'))
    expect(Either.isLeft(parseDisposableDomains("someone@mailinator.com"))).toBe(true)
    expect(Either.isLeft(parseDisposableDomains("a..b.com"))).toBe(true)
    expect(Either.isLeft(parseDisposableDomains("https://mailinator.com/"))).toBe(true)
  })

  it("match the address's domain and every parent domain, in any case", () => {
    expect(isDisposable("someone@mailinator.com", list)).toBe(true)
    expect(isDisposable("Someone@MAILINATOR.Com", list)).toBe(true)
    expect(isDisposable("someone@x.mailinator.com", list)).toBe(true)
    expect(isDisposable("someone@a.b.yopmail.com", list)).toBe(true)
    expect(isDisposable("someone@mailinator.com.", list)).toBe(true)
    // A listed single label covers its whole zone.
    expect(isDisposable("someone@shop.example", list)).toBe(true)
  })

  it("match on label boundaries only, and the domain after the last @", () => {
    expect(isDisposable("someone@notmailinator.com", list)).toBe(false)
    expect(isDisposable("someone@mailinator.com.evil.org", list)).toBe(false)
    expect(isDisposable("someone@mailinator.co", list)).toBe(false)
    expect(isDisposable("mailinator.com@gmail.com", list)).toBe(false)
    expect(isDisposable("\"a@mailinator.com\"@gmail.com", list)).toBe(false)
    expect(isDisposable("no-at-sign", list)).toBe(false)
    expect(isDisposable("someone@mailinator.com", new Set())).toBe(false)
  })
})
