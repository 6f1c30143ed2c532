/**
 * Governance over the stored catalog: the basket the catalog supports at an instant, against a previous basket.
 * Liveness comes from the scans for the present; a replay of the past treats every model as seen.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type BasketMember, type GovernanceRules, type ModelState, proposeBasket } from "../../domain/catalog/governance.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { CatalogRepository } from "./CatalogRepository.ts"

export type Liveness = { readonly _tag: "Scans"; readonly upToScan: string | null } | { readonly _tag: "AllSeen" }

export class BasketGovernance extends Effect.Service<BasketGovernance>()("BasketGovernance", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* CatalogRepository
    const rules: GovernanceRules = (yield* AppConfig).oracle.rules

    const inputs = (liveness: Liveness) =>
      Effect.gen(function* () {
        const models = yield* catalog.modelsWithHistory
        let oldestLiveScan = 0n
        if (liveness._tag === "Scans") {
          const upToScan = liveness.upToScan
          const window = yield* SqlSchema.findAll({
            Request: Schema.Void,
            Result: Schema.Struct({ id: Schema.BigInt }),
            execute: () => sql`
              SELECT id FROM price_scans WHERE ${upToScan === null ? sql`true` : sql`id <= ${upToScan}`}
              ORDER BY id DESC LIMIT ${rules.livenessScans}`
          })(undefined).pipe(orDieAtRepository)
          oldestLiveScan = window.length === 0 ? 0n : window[window.length - 1]!.id
        }
        const states: Array<ModelState> = models.map((model) => ({
          card: model.card,
          deletedAt: model.deletedAt,
          live: liveness._tag === "AllSeen" || model.lastSeenScan >= oldestLiveScan
        }))
        return { states, families: yield* catalog.families, decisions: yield* catalog.decisions }
      })

    const propose = (asOf: Date, previous: ReadonlyArray<BasketMember>, liveness: Liveness) =>
      Effect.map(inputs(liveness), ({ decisions, families, states }) =>
        proposeBasket({ asOf, families, models: states, decisions, rules, previous })
      )

    return { inputs, propose, rules } as const
  }),
  dependencies: [CatalogRepository.Default, AppConfig.Default]
}) {}
