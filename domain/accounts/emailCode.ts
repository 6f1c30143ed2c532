/**
 * One-time e-mail codes (DESIGN section 11): 6 digits, valid 10 minutes, 5 attempts, stored only as an HMAC keyed
 * with a server secret (the pepper), so the table alone never yields a usable code.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { CODE_DIGITS, CODE_LIFETIME_MS, MAX_CODE_ATTEMPTS } from "./formats.ts"

export { CODE_DIGITS, CODE_LIFETIME_MS, CODE_PATTERN, MAX_CODE_ATTEMPTS } from "./formats.ts"

export type CodePurpose = "sign_in" | "add_email"

/** A uniformly drawn integer in [0, 10^6) as the code's six digits. */
export const codeFrom = (n: number): string => {
  if (!Number.isInteger(n) || n < 0 || n >= 10 ** CODE_DIGITS) throw new Error("code: out of range")
  return String(n).padStart(CODE_DIGITS, "0")
}

/** Hex HMAC-SHA-256 of the code bound to its address and purpose: a code for one mailbox proves nothing for another. */
export const hashCode = (pepper: Uint8Array | string, input: { readonly email: string; readonly purpose: CodePurpose; readonly code: string }) =>
  createHmac("sha256", pepper).update(`${input.purpose}\n${input.email}\n${input.code}`).digest("hex")

/** Compares two hex digests in constant time. */
export const sameDigest = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"))

/** The message carrying a code. Tests read the code back out of the text, so it stands alone on its line. */
export const codeMessage = (code: string, purpose: CodePurpose): { readonly subject: string; readonly text: string } => {
  const minutes = CODE_LIFETIME_MS / 60_000
  const what = purpose === "sign_in" ? "sign in to Compute Exchange" : "add this address to your Compute Exchange account"
  return {
    subject: `Your Compute Exchange code: ${code}`,
    text: [
      `Use this code to ${what}:`,
      "",
      `    ${code}`,
      "",
      `It is valid for ${minutes} minutes and can be tried ${MAX_CODE_ATTEMPTS} times.`,
      "If you did not ask for it, ignore this message.",
      ""
    ].join("\n")
  }
}

/** The code a message made by `codeMessage` carries (read back from the local outbox); undefined for other mail. */
export const codeInMessage = (subject: string): string | undefined => /^Your Compute Exchange code: ([0-9]{6})$/.exec(subject)?.[1]
