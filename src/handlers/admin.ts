/**
 * Maintainer operations over HTTP: the same publish, approve, discard, refork, scan and credit grant as the CLI,
 * behind the maintainer token. The services take the job locks; a job already running answers 409 conflict.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { Unauthorized } from "../../domain/errors.ts"
import { ApiKeys } from "../../services/accounts/ApiKeys.ts"
import { AutoRouter, catalogNames } from "../../services/exchange/AutoRouter.ts"
import { Exchange } from "../../services/exchange/Exchange.ts"
import { Ledger } from "../../services/accounts/Ledger.ts"
import { PriceScan } from "../../services/oracle/PriceScan.ts"
import { Publisher } from "../../services/oracle/Publisher.ts"
import { RevisionRepository, type StoredRevision } from "../../services/oracle/RevisionRepository.ts"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import { MaintainerAuth } from "../api/AdminApi.ts"
import { ServerApi } from "../api/ServerApi.ts"

const digest = (text: string) => createHash("sha256").update(text).digest()

/** Compares Bearer tokens in constant time; with no MAINTAINER_TOKEN configured, nothing is accepted. */
export const MaintainerAuthLive = Layer.effect(
  MaintainerAuth,
  Effect.map(AppConfig, (config) =>
    MaintainerAuth.of({
      bearer: (token) =>
        Option.match(config.revisions.maintainerToken, {
          onNone: () => Effect.fail(new Unauthorized({ message: "Maintainer operations are disabled: no MAINTAINER_TOKEN is configured." })),
          onSome: (expected) =>
            timingSafeEqual(digest(Redacted.value(token)), digest(Redacted.value(expected)))
              ? Effect.void
              : Effect.fail(new Unauthorized({ message: "A valid maintainer token is required." }))
        })
    })
  )
)

const view = (r: StoredRevision) => ({
  revisionVersion: r.revisionVersion,
  status: r.status,
  methodologyVersion: r.methodologyVersion,
  scuUsd18: r.scuUsd18.toString(),
  contentHash: r.contentHash,
  metadataHash: r.metadataHash,
  summary: r.summary,
  requiresApproval: r.requiresApproval,
  txHash: r.txHash,
  publishedAt: r.publishedAt?.toISOString() ?? null,
  confirmedAt: r.confirmedAt?.toISOString() ?? null,
  failureReason: r.failureReason,
  failureMessage: r.failureMessage
})

export const AdminHandlers = HttpApiBuilder.group(ServerApi, "admin", (handlers) =>
  Effect.gen(function* () {
    const publisher = yield* Publisher
    const repository = yield* RevisionRepository
    const priceScan = yield* PriceScan
    const ledger = yield* Ledger
    const keys = yield* ApiKeys
    const autoRouter = yield* AutoRouter
    const exchange = yield* Exchange
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    return handlers
      .handle("revisions", () =>
        Effect.gen(function* () {
          const confirmed = yield* repository.confirmed
          const inFlight = yield* repository.inFlight
          return { revisions: [...confirmed, ...Option.toArray(inFlight)].map(view) }
        })
      )
      .handle("publish", () =>
        now.pipe(
          Effect.flatMap(publisher.publish),
          Effect.map((revision) => ({ revision: Option.getOrNull(Option.map(revision, view)) }))
        )
      )
      .handle("approve", ({ path }) => Effect.map(publisher.approve(path.revision), view))
      .handle("discard", ({ path }) => Effect.map(publisher.discard(path.revision), view))
      .handle("refork", () =>
        Effect.flatMap(now, (asOf) =>
          Effect.map(publisher.refork(asOf), (revision) => ({ revision: Option.getOrNull(Option.map(revision, view)) }))
        )
      )
      .handle("scan", () =>
        Effect.map(priceScan.run("admin"), (report) => ({
          scanId: report.scanId,
          outcome: report.outcome,
          catalogChanges: report.changes.length,
          basketChanges: report.basket.changes.map((c) => ({ type: c.type, family: c.family, modelKey: c.modelKey, description: c.description }))
        }))
      )
      .handle("grantCredits", ({ path, payload }) =>
        Effect.gen(function* () {
          const { accountId, cfId } = yield* ledger.resolveAccount(path.cfId)
          const { entry, balanceWei } = yield* ledger.grant(accountId, payload.amountWei, payload.note ?? null)
          return {
            cfId,
            accountId,
            entryId: entry.id,
            amountWei: entry.amountWei.toString(),
            balanceWei: balanceWei.toString(),
            note: entry.note,
            createdAt: entry.createdAt.toISOString()
          }
        })
      )
      .handle("freezeKey", ({ path }) =>
        Effect.map(keys.freezeByAdmin(path.id), (key) => ({ id: key.id, status: key.status, frozenBy: key.frozenBy }))
      )
      .handle("autoRoutingList", () => autoRouter.getList)
      .handle("setAutoRoutingList", ({ payload }) =>
        Effect.flatMap(exchange.routable, ({ catalog }) => autoRouter.setList(payload.models, catalogNames(catalog)))
      )
  })
).pipe(Layer.provide(MaintainerAuthLive))
