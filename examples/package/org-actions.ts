/**
 * An organization's actions embedded in another program, from the installed package: the services that act for
 * someone read who from `CurrentIdentity`, which `actingAs(identity)` provides, and check the role matrix themselves.
 * Two people sign in (created on first sign-in), the owner is granted credits, creates an organization, moves
 * credits into it and invites a member (the mail waits in the outbox without SMTP_URL); the other person, not a
 * member, is refused the invitation list. test/package-install.test.ts runs it on a scratch database.
 *
 *   DATABASE_URL=postgres://user@host:5432/scratch node org-actions.js
 */
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer, Logger, LogLevel } from "effect"
import {
  AccountsLive,
  actingAs,
  DetachedChainLive,
  Identities,
  Invitations,
  Ledger,
  OrganizationCredits,
  Organizations
} from "compute-exchange/accounts"
import { AppConfig, OracleReadsLive } from "compute-exchange/oracle"
import { TestDatabase } from "compute-exchange/testing"

const CREDIT = 10n ** 18n

const program = Effect.gen(function* () {
  const identities = yield* Identities
  const ledger = yield* Ledger
  const orgs = yield* Organizations
  const credits = yield* OrganizationCredits
  const invitations = yield* Invitations

  const owner = yield* identities.signInAs({ email: "owner@example.com", clientIp: undefined })
  const outsider = yield* identities.signInAs({ email: "outsider@example.com", clientIp: undefined })
  yield* ledger.grant(owner.accountId, 5n * CREDIT, "example grant")

  const org = yield* orgs.create("Acme Research").pipe(actingAs(owner))
  console.log(`created ${org.name} (${org.id}), ${owner.email} is ${org.role}`)
  yield* credits.contribute(org.id, 2n * CREDIT).pipe(actingAs(owner))
  console.log(`owner's balance after moving 2 credits in: ${(yield* ledger.account(owner.accountId)).balanceWei} wei`)

  const invited = yield* invitations.invite(org.id, "member@example.com", "member").pipe(actingAs(owner))
  console.log(`invited ${invited.email} as ${invited.role}`)
  const members = yield* orgs.members(org.id).pipe(actingAs(owner))
  console.log(`members: ${members.map((m) => m.role).join(", ")}`)

  const refused = yield* Effect.flip(invitations.list(org.id).pipe(actingAs(outsider)))
  console.log(`${outsider.email} listing the invitations: refused (${refused._tag})`)
})

/** The scratch database with the product's migrations applied. */
const Database = Layer.unwrapEffect(Effect.map(Config.string("DATABASE_URL"), (url) => TestDatabase(url, 2)))

program.pipe(
  Effect.provide(
    AccountsLive.pipe(
      // The accounts read prices from the oracle's snapshot and funding from a chain: here, none.
      Layer.provideMerge(Layer.merge(OracleReadsLive, DetachedChainLive)),
      Layer.provideMerge(AppConfig.Default),
      Layer.provideMerge(Database)
    )
  ),
  Logger.withMinimumLogLevel(LogLevel.Error),
  NodeRuntime.runMain
)
