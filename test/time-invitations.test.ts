/**
 * Invitations in time (SPEC "Organization and invitation": a link is good for 7 days; resending gives a new link and a
 * new week), driven by TestClock over the live Invitations and Organizations services on a scratch PostgreSQL
 * database, with the mail captured in memory. Nothing is back-dated and nothing sleeps.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { INVITATION_TTL_MS } from "../domain/accounts/invitations.ts"
import { MailCapture } from "../layers/Test.ts"
import { actingAs } from "../services/accounts/CurrentIdentity.ts"
import { Invitations } from "../services/accounts/Invitations.ts"
import { Organizations } from "../services/accounts/Organizations.ts"
import { createIdentity } from "./support/ledger.ts"
import { Teams } from "./support/teams.ts"

/** The token of the last invitation mailed to `email`. */
const linkTo = (email: string) =>
  Effect.map(Effect.flatMap(MailCapture, (capture) => capture.to(email)), (mails) => {
    const token = /\/console\/invitations\/(cfi_[A-Za-z0-9_-]{43})/.exec(mails[mails.length - 1]?.text ?? "")?.[1]
    if (token === undefined) throw new Error(`no invitation mailed to ${email}`)
    return token
  })

const outcome = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.match(effect, { onSuccess: () => "accepted", onFailure: (error) => error._tag })

layer(Teams, { timeout: 60_000 })("invitations in time", (it) => {
  it.effect("a link is good until 7 days after it was sent and not at 7 days; a resend gives a new link and a new week", () =>
    Effect.gen(function* () {
      const invitations = yield* Invitations
      const owner = yield* createIdentity
      const org = yield* (yield* Organizations).create("Acme").pipe(actingAs(owner))
      const early = yield* createIdentity
      const late = yield* createIdentity
      const resent = yield* createIdentity
      for (const invitee of [early, late, resent]) yield* invitations.invite(org.id, invitee.email, "member").pipe(actingAs(owner))
      const [earlyLink, lateLink, firstLink] = [yield* linkTo(early.email), yield* linkTo(late.email), yield* linkTo(resent.email)]

      yield* TestClock.adjust(INVITATION_TTL_MS - 1)
      expect((yield* invitations.page(lateLink, undefined)).state).toBe("pending")
      expect(yield* outcome(invitations.accept(earlyLink).pipe(actingAs(early)))).toBe("accepted")
      // Resent a millisecond before it lapses: the old link stops working, the new one has a week of its own.
      const list = yield* invitations.list(org.id).pipe(actingAs(owner))
      yield* invitations.resend(org.id, list.find((i) => i.email === resent.email)!.id).pipe(actingAs(owner))
      const secondLink = yield* linkTo(resent.email)
      expect(secondLink).not.toBe(firstLink)

      yield* TestClock.adjust(1)
      expect((yield* invitations.page(lateLink, undefined)).state).toBe("expired")
      expect(yield* outcome(invitations.accept(lateLink).pipe(actingAs(late)))).toBe("InvitationExpired")
      expect(yield* outcome(invitations.accept(firstLink).pipe(actingAs(resent)))).toBe("NotFound")

      yield* TestClock.adjust(INVITATION_TTL_MS - 2)
      expect(yield* outcome(invitations.accept(secondLink).pipe(actingAs(resent)))).toBe("accepted")
    }))
})
