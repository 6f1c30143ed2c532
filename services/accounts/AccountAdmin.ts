/**
 * What the calling identity manages on the account of its active context: its API keys and its spending caps. In an
 * organization these are the Owner's and Admins' (SPEC "Organization rules", the `manageKeys` action); in the
 * personal context the identity may do all of it. ApiKeys and the Ledger stay the account-level operations other
 * callers (an app grant's tools, the operator) use; this is the caller-facing side, with the policy applied.
 */
import { Effect } from "effect"
import { ApiKeys, type KeyFields } from "./ApiKeys.ts"
import { CurrentIdentity } from "./CurrentIdentity.ts"
import { type AccountLimits, Ledger } from "./Ledger.ts"
import { requireActiveRole } from "./Policy.ts"

export class AccountAdmin extends Effect.Service<AccountAdmin>()("AccountAdmin", {
  effect: Effect.gen(function* () {
    const keys = yield* ApiKeys
    const ledger = yield* Ledger
    /** The active context's account, once the caller's role there allows managing keys and limits. */
    const managed = (what: string) => Effect.zipRight(requireActiveRole("manageKeys", what), Effect.map(CurrentIdentity, (identity) => identity.accountId))

    return {
      issueKey: Effect.fn("AccountAdmin.issueKey")(function* (fields: KeyFields) {
        const accountId = yield* managed("Issuing API keys")
        return yield* keys.issue(accountId, (yield* CurrentIdentity).cfId, fields)
      }),
      /** Every member may see the account's keys. */
      listKeys: Effect.fn("AccountAdmin.listKeys")(function* () {
        return yield* keys.list((yield* CurrentIdentity).accountId)
      }),
      updateKey: Effect.fn("AccountAdmin.updateKey")(function* (id: string, fields: KeyFields) {
        return yield* keys.update(yield* managed("Managing API keys"), id, fields)
      }),
      freezeKey: Effect.fn("AccountAdmin.freezeKey")(function* (id: string) {
        return yield* keys.freeze(yield* managed("Managing API keys"), id)
      }),
      reactivateKey: Effect.fn("AccountAdmin.reactivateKey")(function* (id: string) {
        return yield* keys.reactivate(yield* managed("Managing API keys"), id)
      }),
      revokeKey: Effect.fn("AccountAdmin.revokeKey")(function* (id: string) {
        return yield* keys.revoke(yield* managed("Managing API keys"), id)
      }),
      setLimits: Effect.fn("AccountAdmin.setLimits")(function* (limits: AccountLimits) {
        return yield* ledger.setLimits(yield* managed("Setting spending limits"), limits)
      })
    } as const
  })
}) {}
