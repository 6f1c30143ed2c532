/**
 * Invitations (SPEC.md "Organization and invitation", "States and transitions"): a one-time token per link (only its
 * SHA-256 is stored), 7 days to accept, at most 50 open per organization. Pure. The token's format, which the API
 * checks, is in formats.ts: the browser shares the API modules and must not reach node:crypto through them.
 */
import { createHash } from "node:crypto"

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000
export const MAX_PENDING_INVITATIONS = 50

export type InvitationState = "pending" | "expired" | "accepted" | "revoked"

/** Stored status plus time: a pending invitation past its expiry is expired. */
export const invitationState = (status: "pending" | "accepted" | "revoked", expiresAt: Date, now: Date): InvitationState =>
  status === "pending" && expiresAt.getTime() <= now.getTime() ? "expired" : status

/** `cfi_` + 32 random bytes in base64url: what the link carries. */
export const invitationToken = (random: Uint8Array): string => `cfi_${Buffer.from(random).toString("base64url")}`

export const tokenHash = (token: string): string => createHash("sha256").update(token).digest("hex")

export const invitationMessage = (invitation: {
  readonly organization: string
  readonly inviter: string
  readonly role: "admin" | "member"
  readonly link: string
  readonly expiresAt: Date
}): { readonly subject: string; readonly text: string } => ({
  subject: `${invitation.inviter} invited you to ${invitation.organization} on Compute Exchange`,
  text: [
    `${invitation.inviter} invited you to join ${invitation.organization} on Compute Exchange as ${invitation.role === "admin" ? "an admin" : "a member"}.`,
    "",
    "Open this link, signed in with this e-mail address, to accept:",
    "",
    `  ${invitation.link}`,
    "",
    `The link works once and expires on ${invitation.expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC.`
  ].join("\n")
})
