/**
 * Service methods are spans (`Effect.fn` with "<Service>.<method>"), so a tracer shows a request's steps: here a
 * recording tracer over the live Organizations and Invitations services on a scratch database sees an invitation's
 * steps nested under it, and a refusal's step too.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Tracer } from "effect"
import { actingAs } from "../services/accounts/CurrentIdentity.ts"
import { Invitations } from "../services/accounts/Invitations.ts"
import { Organizations } from "../services/accounts/Organizations.ts"
import { createIdentity } from "./support/ledger.ts"
import { Teams } from "./support/teams.ts"

/** Runs `effect` under a tracer that records each span as "parent > name" (the service spans only). */
const traced = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const base = yield* Effect.tracer
    const spans: Array<string> = []
    const recording = Tracer.make({
      span: (name, parent, context, links, startTime, kind, options) => {
        const parentName = Option.match(parent, { onNone: () => "", onSome: (p) => (p._tag === "Span" ? p.name : "") })
        if (/^[A-Z]\w+\.\w+$/.test(name)) spans.push(parentName === "" ? name : `${parentName} > ${name}`)
        return base.span(name, parent, context, links, startTime, kind, options)
      },
      context: base.context
    })
    const exit = yield* Effect.exit(Effect.withTracer(effect, recording))
    return { exit, spans }
  })

layer(Teams, { timeout: 60_000 })("service spans", (it) => {
  it.effect("an invitation's steps are spans nested under it, a refused one's too", () =>
    Effect.gen(function* () {
      const orgs = yield* Organizations
      const invitations = yield* Invitations
      const owner = yield* createIdentity
      const outsider = yield* createIdentity
      const org = yield* orgs.create("Acme").pipe(actingAs(owner))

      const invited = yield* traced(invitations.invite(org.id, "someone@example.com", "member").pipe(actingAs(owner)))
      expect(invited.exit._tag).toBe("Success")
      expect(invited.spans).toEqual(["Invitations.invite", "Invitations.invite > Organizations.authorised"])

      const refused = yield* traced(invitations.list(org.id).pipe(actingAs(outsider)))
      expect(refused.exit._tag).toBe("Failure")
      expect(refused.spans).toEqual(["Invitations.list", "Invitations.list > Organizations.authorised"])
    }))
})
