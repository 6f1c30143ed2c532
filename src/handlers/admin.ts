/**
 * Maintainer operations over HTTP: the same publish, approve, discard, refork, scan and credit grant as the CLI,
 * behind the maintainer token. The services take the job locks; a job already running answers 409 conflict.
 */
import { HttpApiBuilder } from "@effect/platform"
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Effect, Layer, Mailbox, Option, Redacted, Schema, Stream } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { bearerTokenOf } from "../../domain/accounts/credentialToken.ts"
import { Unauthorized, ValidationFailed } from "../../domain/errors.ts"
import { Verify } from "../../services/oracle/Verify.ts"
import { OperatorCredential } from "../../services/platform/OperatorCredential.ts"
import { commandEffect, CommandOutput, type OperatorServices } from "../operator/commands.ts"
import { parseCommandLine } from "../operator/commandLine.ts"
import { ApiKeys } from "../../services/accounts/ApiKeys.ts"
import { AutoRouter, catalogNames } from "../../services/exchange/AutoRouter.ts"
import { Exchange } from "../../services/exchange/Exchange.ts"
import { Ledger } from "../../services/accounts/Ledger.ts"
import { PriceScan } from "../../services/oracle/PriceScan.ts"
import { Publisher } from "../../services/oracle/Publisher.ts"
import { RevisionRepository, type StoredRevision } from "../../services/oracle/RevisionRepository.ts"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import { MaintainerAuth, OperatorCommandRequest } from "../api/AdminApi.ts"
import { OperatorCommandEvent } from "../operator/protocol.ts"
import { ServerApi } from "../api/ServerApi.ts"

const digest = (text: string) => createHash("sha256").update(text).digest()

/**
 * Compares Bearer tokens in constant time: MAINTAINER_TOKEN, or this process's local operator credential (the one
 * DATA_DIR/operator.json holds for the command line); with neither presented, nothing is accepted.
 */
export const MaintainerAuthLive = Layer.effect(
  MaintainerAuth,
  Effect.zipWith(AppConfig, OperatorCredential, (config, local) =>
    MaintainerAuth.of({
      // The token read by the one rule every way in shares (domain/accounts/credentialToken.ts).
      bearer: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const token = Redacted.make(bearerTokenOf(request.headers.authorization) ?? "")
          return local.matches(token) ? Effect.void : Option.match(config.revisions.maintainerToken, {
            onNone: () => Effect.fail(new Unauthorized({ message: "Maintainer operations are disabled: no MAINTAINER_TOKEN is configured." })),
            onSome: (expected) =>
              timingSafeEqual(digest(Redacted.value(token)), digest(Redacted.value(expected)))
                ? Effect.void
                : Effect.fail(new Unauthorized({ message: "A valid maintainer token is required." }))
          })
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

type OperatorContext = Exclude<OperatorServices, CommandOutput>

const encodeEvent = Schema.encodeSync(OperatorCommandEvent)

/** A command's failure in one sentence, as the command line prints it. */
const messageOf = (error: unknown) =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : String(error)

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
    // What operator commands run on: the services of this process, so they share its locks, its database and chain.
    const operatorContext = yield* Effect.context<OperatorContext>()
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
      .handleRaw("command", ({ request }) =>
        Effect.gen(function* () {
          const payload = yield* request.json.pipe(
            Effect.flatMap(Schema.decodeUnknown(OperatorCommandRequest)),
            Effect.mapError(() =>
              ValidationFailed.fromIssues([{ param: "args", path: ["args"], message: "expected {\"args\": [the command's words]}" }])
            )
          )
          const parsed = parseCommandLine(payload.args)
          if (parsed._tag !== "Command") {
            return yield* ValidationFailed.fromIssues([{ param: "args", path: ["args"], message: `not an operator command: ${payload.args.join(" ")}` }])
          }
          const events = yield* Mailbox.make<string>()
          const emit = (event: typeof OperatorCommandEvent.Type) => events.offer(`${JSON.stringify(encodeEvent(event))}\n`)
          // Detached: a command the operator started finishes even if the command line goes away half-way.
          yield* commandEffect(parsed.command).pipe(
            Effect.provideService(CommandOutput, { line: (text) => Effect.asVoid(emit({ line: text })) }),
            Effect.provide(operatorContext),
            Effect.matchCauseEffect({
              onSuccess: () => emit({ exit: 0 }),
              onFailure: (cause) =>
                Effect.zipRight(
                  Cause.isFailType(cause) ? Effect.void : Effect.logError("operator command failed", cause),
                  emit({ exit: 1, error: Cause.isFailType(cause) ? messageOf(cause.error) : "internal error; see the service's log" })
                )
            }),
            Effect.zipRight(events.end),
            Effect.forkDaemon
          )
          return HttpServerResponse.stream(Mailbox.toStream(events).pipe(Stream.encodeText), {
            contentType: "application/x-ndjson",
            headers: { "cache-control": "no-store" }
          })
        })
      )
      .handle("autoRoutingList", () => autoRouter.getList)
      .handle("setAutoRoutingList", ({ payload }) =>
        Effect.flatMap(exchange.routable, ({ catalog }) => autoRouter.setList(payload.models, catalogNames(catalog)))
      )
  })
).pipe(Layer.provide(MaintainerAuthLive), Layer.provide(Verify.Default), Layer.provide(OperatorCredential.Default))
