/**
 * The exchange's orchestration (DESIGN.md section 10): plan the candidates -> estimate -> reserve -> call with
 * fallback -> settle. Everything after the reservation runs in a fiber of its own that the client cannot interrupt:
 * a client that disconnects stops receiving, not the bill (the upstream is read on to its usage for at most
 * STREAM_DRAIN_TIMEOUT_MS), and the hold is settled or released on every exit.
 */
import { Deferred, Effect, Either, Option, Queue, Redacted, Stream } from "effect"
import { createHmac, randomBytes } from "node:crypto"
import { type Bill, holdWei } from "../../domain/exchange/billing.ts"
import {
  type ChatEvent,
  type ChatRequest,
  type ChatResult,
  foldEvents,
  type ReplyBill,
  type ReplyMeta,
  type RouteRequest,
  type StreamFailure,
  type Usage
} from "../../domain/exchange/canonical.ts"
import { estimateOutputTokens } from "../../domain/exchange/estimate.ts"
import { checkKeyBudgets, checkWindows, planCandidates } from "../../domain/exchange/routing.ts"
import { AllKeysExhausted, InternalError, RateLimited, ServiceUnavailable, ValidationFailed } from "../../domain/errors.ts"
import { USD18_SCALE } from "../../domain/money.ts"
import { latestRevision } from "../../domain/oracle/inputs.ts"
import type { Credential } from "../accounts/Credentials.ts"
import { Ledger } from "../accounts/Ledger.ts"
import { Usage as UsageReports } from "../accounts/Usage.ts"
import { OracleSnapshot } from "../oracle/OracleSnapshot.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { type RateLimitDecision, rateLimitHeaders, RateLimits } from "../platform/RateLimits.ts"
import { AutoRouter } from "./AutoRouter.ts"
import { makeInputEstimator } from "./inputEstimate.ts"
import { Providers } from "./Providers.ts"
import { SettlementService } from "./Settlement.ts"
import type { UpstreamFailure } from "./upstreamHttp.ts"
import { UpstreamRouter } from "./UpstreamRouter.ts"

export type InboundFormat = "chat" | "messages"

/** Renders replies in one inbound format (domain/exchange/translate/*Inbound.ts). */
export interface Renderer<Body> {
  readonly whole: (result: ChatResult, meta: ReplyMeta, bill: ReplyBill) => Body
  readonly stream: (meta: ReplyMeta) => {
    readonly event: (event: ChatEvent) => string
    readonly finish: (usage: Usage, bill: ReplyBill) => string
    readonly interrupted: (failure: StreamFailure) => string
  }
}

export interface InferenceCall {
  readonly format: InboundFormat
  readonly chat: ChatRequest
  readonly route: RouteRequest
  readonly stream: boolean
  readonly endUser: string | undefined
  /** An API key or an app grant (services/accounts/Credentials.ts); a grant's id is recorded where a key's goes. */
  readonly apiKey: Credential
}

export type InferenceAnswer<Body> =
  | { readonly _tag: "Whole"; readonly headers: Readonly<Record<string, string>>; readonly body: Body }
  | { readonly _tag: "Stream"; readonly headers: Readonly<Record<string, string>>; readonly frames: Stream.Stream<string> }

const END = "\u0000end"

const newRequestId = () => `gen_${randomBytes(12).toString("hex")}`

/** wei as a decimal number of credits (for `x_credits_*`; the exact figures are the X-Compute-* headers). */
const credits = (wei: bigint) => Number(wei) / Number(USD18_SCALE)

export class Exchange extends Effect.Service<Exchange>()("Exchange", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    const snapshots = yield* OracleSnapshot
    const providers = yield* Providers
    const ledger = yield* Ledger
    const settlement = yield* SettlementService
    const usage = yield* UsageReports
    const autoRouter = yield* AutoRouter
    const rateLimits = yield* RateLimits
    const router = yield* UpstreamRouter

    /**
     * The key's inference request rate (DESIGN.md section 12): refused with 429 before anything is planned or reserved;
     * undefined when rate limits are off.
     */
    const admitRequest = (apiKey: Credential): Effect.Effect<RateLimitDecision | undefined, RateLimited> =>
      !rateLimits.enabled
        ? Effect.succeed(undefined)
        : Effect.flatMap(rateLimits.check(`key:${apiKey.id}`, "inference"), (decision) =>
          decision.allowed
            ? Effect.succeed(decision)
            : Effect.fail(
              new RateLimited({
                message: `Too many inference requests with this ${apiKey.kind === "app_grant" ? "app grant" : "API key"}: retry after ${decision.retryAfterSeconds} second${decision.retryAfterSeconds === 1 ? "" : "s"}.`,
                details: { retryAfterSeconds: decision.retryAfterSeconds, limit: decision.limit, resetEpochSeconds: decision.resetEpochSeconds }
              })
            )
        )

    /** X-Key-*-Remaining: what the key's caps leave (its live holds counted), or `unlimited`; keys have no weekly cap. */
    const keyHeaders = (apiKey: Credential) =>
      apiKey.dailyLimitWei === null && apiKey.monthlyLimitWei === null
        ? Effect.succeed({ "x-key-daily-remaining": "unlimited", "x-key-weekly-remaining": "unlimited", "x-key-monthly-remaining": "unlimited" })
        : Effect.map(usage.key(apiKey), (key) => {
          const left = (limit: bigint | null, used: bigint) => (limit === null ? "unlimited" : (limit > used ? limit - used : 0n).toString())
          return {
            "x-key-daily-remaining": left(key.dailyLimitWei, key.dailyUsedWei),
            "x-key-weekly-remaining": "unlimited",
            "x-key-monthly-remaining": left(key.monthlyLimitWei, key.monthlyUsedWei)
          }
        })
    const fingerprintKey = Option.getOrUndefined(config.exchange.userFingerprintKey)

    // The routable catalog is built with the oracle's snapshot, once per change of it.
    const routable = Effect.map(snapshots.current, (snap) => ({ snap, catalog: snap.routableCatalog }))

    const fingerprint = (endUser: string | undefined): string | undefined =>
      endUser === undefined || fingerprintKey === undefined
        ? undefined
        : createHmac("sha256", Redacted.value(fingerprintKey)).update(endUser).digest("hex").slice(0, 32)

    const serve = <Body>(call: InferenceCall, renderer: Renderer<Body>) =>
      Effect.gen(function* () {
        const rate = yield* admitRequest(call.apiKey)
        const { snap, catalog } = yield* routable
        const chat: ChatRequest = { ...call.chat, userFingerprint: fingerprint(call.endUser) }
        const planned = yield* planCandidates(catalog, call.route, chat, call.apiKey.allowedModels, call.format)
        const input = makeInputEstimator(chat, providers.tokenRatio)
        const inputTokensOf = input.of
        // Named models are counted by their vendors before the window check; `auto` once narrowed (below).
        if (!planned.auto) yield* input.countWithVendors(planned.candidates)
        const outputTokens = estimateOutputTokens(chat)
        const windowed = yield* Either.flatMap(checkWindows(planned, inputTokensOf), (plan) =>
          checkKeyBudgets(plan, (m) => inputTokensOf(m) + outputTokens, (m) => providers.largestKeyBudget(m.provider.name))
        )
        const peg = snap.inputs.pegUsd18
        const conversationId = planned.auto ? call.route.conversationId : undefined
        const pin = conversationId === undefined
          ? undefined
          : Option.getOrUndefined(yield* autoRouter.findPin(call.apiKey.accountId, conversationId, call.route.routingBias))
        // `auto` tries at most AUTO_ATTEMPTS models that have capacity now, chosen by a pin, the operator's list or the
        // engine; the hold covers the costliest of those.
        const plan = planned.auto
          ? yield* autoRouter.choose({
            plan: windowed,
            hasCapacity: (m) => providers.hasCapacity(m.provider.name, inputTokensOf(m) + outputTokens),
            price: (m) => holdWei(m.listing.price, { inputTokens: inputTokensOf(m), outputTokens }, peg),
            bias: call.route.routingBias,
            send: { pinnedModel: pin?.modelKey, conversationId }
          })
          : windowed
        if (plan.auto) yield* input.countWithVendors(plan.candidates)
        if (plan.candidates.length === 0) {
          // Only `auto` drops candidates here (SPEC Model selection 3: no model with capacity is 503).
          return yield* new ServiceUnavailable({ message: "No model has capacity for this request right now; retry shortly." })
        }
        const hold = plan.candidates.reduce((max, m) => {
          const wei = holdWei(m.listing.price, { inputTokens: inputTokensOf(m), outputTokens }, peg)
          return wei > max ? wei : max
        }, 1n)
        // From the reservation to the fork nothing may interrupt: a client hanging up mid-reserve would otherwise leave a
        // transaction open on its connection, or a hold that nobody settles or releases (until the sweeper).
        const answer = yield* Effect.uninterruptible(
          Effect.gen(function* () {
          const requestId = newRequestId()
          const createdAt = new Date()
          yield* ledger.reserve({
            accountId: call.apiKey.accountId,
            requestId,
            amountWei: hold,
            apiKey: { id: call.apiKey.id, dailyLimitWei: call.apiKey.dailyLimitWei, monthlyLimitWei: call.apiKey.monthlyLimitWei },
            memberCfId: call.apiKey.holderCfId
          }).pipe(
            // A key's account always exists (a foreign key says so) and request ids are fresh: either would be a defect.
            Effect.catchTags({ NotFound: Effect.die, Conflict: Effect.die })
          )
          const answer = yield* Deferred.make<InferenceAnswer<Body>, AllKeysExhausted | ValidationFailed | InternalError>()
          let holdClosed = false
          const requested = plan.candidates[0]!.key
          const revision = latestRevision(snap.inputs)

          const run = Effect.gen(function* () {
            const routed = yield* Effect.either(router.route({ chat, plan, stream: call.stream, inputTokensOf, outputTokens, pin }))
            if (Either.isLeft(routed)) {
              // The vendor refused the request itself (a parameter it rejects): the request aborts, nothing is charged.
              yield* Effect.ignore(ledger.release(requestId))
              return yield* Deferred.fail(answer, routed.left)
            }
            const { attempts, served } = routed.right
            if (Option.isNone(served)) {
              // Released before the answer goes out, so a client that reads its account next sees nothing reserved.
              yield* Effect.ignore(ledger.release(requestId))
              return yield* Deferred.fail(
                answer,
                new AllKeysExhausted({ message: `Every upstream key for ${plan.candidates.map((m) => m.key).join(", ")} is unavailable, limited or cooling down; retry shortly.` })
              )
            }
            const { model, keyId, reply, reconcile } = served.value
            const meta: ReplyMeta = { id: requestId, model: model.key, created: Math.floor(createdAt.getTime() / 1000) }
            // The conversation's next turns go where this one went: pinned before the answer starts, so a client's next
            // turn (which may follow at once) finds it. One round trip, on requests with a conversation_id only.
            if (conversationId !== undefined) {
              yield* Effect.ignore(
                autoRouter.savePin(call.apiKey.accountId, conversationId, { model: model.key, provider: model.provider.name, upstreamKey: keyId }, call.route.routingBias)
              )
            }
            const headers: Record<string, string> = {
              "x-request-id": requestId,
              "x-model-used": model.key,
              "x-model-requested": requested,
              "x-fallback-used": String(model.key !== requested),
              "x-provider": model.provider.name,
              "x-routing-strategy": plan.chooser === "pin" && pin?.modelKey === model.key ? "sticky" : "failover",
              ...(plan.chooser !== undefined ? { "x-model-chooser": plan.chooser } : {}),
              ...(rate !== undefined ? rateLimitHeaders(rate) : {})
            }
            const settleWith = (result: ChatResult, completed: boolean) =>
              Effect.tap(
                settlement.settle({
                  requestId,
                  accountId: call.apiKey.accountId,
                  apiKeyId: call.apiKey.id,
                  memberCfId: call.apiKey.holderCfId ?? null,
                  format: call.format,
                  stream: call.stream,
                  completed,
                  modelRequested: requested,
                  served: model,
                  upstreamKey: keyId,
                  chooser: plan.chooser ?? null,
                  result,
                  estimatedInputTokens: inputTokensOf(model),
                  attempts,
                  holdWei: hold,
                  pegUsd18: peg,
                  revision,
                  createdAt
                }),
                (done) =>
                  Effect.sync(() => {
                    holdClosed = true
                    // Every input bucket counts towards a vendor's TPM, cache writes included.
                    const u = done.usage
                    reconcile((u.freshInput ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite5m ?? 0) + (u.cacheWrite1h ?? 0) + (u.output ?? 0))
                  }).pipe(
                    Effect.zipRight(logLine(requestId, model.key, completed, done.bill, createdAt))
                  )
              )
            const replyBill = (bill: Bill, balanceWei: bigint): ReplyBill => ({
              creditsUsed: credits(bill.chargeWei),
              creditsRemaining: credits(balanceWei),
              requestsRemaining: rate?.remaining ?? null
            })
            const excludesReasoning = chat.reasoning?.exclude === true
            const notReasoning = (e: ChatEvent) => e.type !== "reasoning_delta" && e.type !== "reasoning_signature"

            if (reply._tag === "Whole") {
              // A non-streaming answer arrives read and parsed inside the call: its events are folded as they are.
              const result = foldEvents(excludesReasoning ? reply.events.filter(notReasoning) : reply.events)
              const settled = yield* settleWith(result, true)
              return yield* Deferred.succeed(answer, {
                _tag: "Whole",
                headers: {
                  ...headers,
                  ...(yield* keyHeaders(call.apiKey)),
                  "x-compute-used": settled.bill.chargeWei.toString(),
                  "x-compute-remaining": settled.settlement.balanceWei.toString()
                },
                body: renderer.whole(result, meta, replyBill(settled.bill, settled.settlement.balanceWei))
              })
            }

            const withoutExcluded = excludesReasoning ? Stream.filter(reply.events, notReasoning) : reply.events
            const frames = yield* Queue.unbounded<string>()
            const clientGone = yield* Deferred.make<void>()
            const render = renderer.stream(meta)
            const seen: Array<ChatEvent> = []
            let stopped = false
            yield* Deferred.succeed(answer, {
              _tag: "Stream",
              // The bill is not known when a stream starts: the final chunk carries it (x_credits_used).
              headers: { ...headers, ...(yield* keyHeaders(call.apiKey)) },
              frames: Stream.fromQueue(frames).pipe(
                Stream.takeWhile((frame) => frame !== END),
                Stream.ensuring(Deferred.succeed(clientGone, undefined))
              )
            })
            const consume = Stream.runForEach(withoutExcluded, (event) => {
              seen.push(event)
              if (event.type === "stop") stopped = true
              const text = render.event(event)
              return text === "" ? Effect.void : Queue.offer(frames, text)
            })
            // After a disconnect the upstream is read on (for its usage) for at most the drain timeout.
            const drained: Effect.Effect<Either.Either<void, UpstreamFailure | "drain_timeout">> = Effect.raceFirst(
              Effect.either(consume),
              Effect.zipRight(Deferred.await(clientGone), Effect.sleep(config.exchange.drainTimeoutMs)).pipe(
                Effect.as(Either.left("drain_timeout" as const))
              )
            )
            const outcome = yield* drained
            const result = foldEvents(seen)
            const completed = Either.isRight(outcome) && stopped
            const settled = yield* settleWith(result, completed)
            const bill = replyBill(settled.bill, settled.settlement.balanceWei)
            if (completed) {
              yield* Queue.offer(frames, render.finish(settled.usage, bill))
            } else {
              const why = Either.isLeft(outcome)
                ? typeof outcome.left === "string" ? "the client left and the upstream did not finish in time" : outcome.left.message
                : "the upstream ended the stream before its end"
              yield* Queue.offer(frames, render.interrupted({ code: "stream_interrupted", message: `The upstream stream was interrupted: ${why}. Billed for what was delivered.` }))
            }
            yield* Queue.offer(frames, END)
          })

          // Not the client's to interrupt: it runs to the settlement; whatever happens, the hold does not outlive it.
          // The daemon itself is interruptible inside (its races and timeouts need that); only the client cannot reach it.
          yield* Effect.forkDaemon(
            Effect.interruptible(run).pipe(
              Effect.catchAllCause((cause) =>
                Effect.logError("an inference request failed unexpectedly", cause).pipe(
                  Effect.zipRight(Effect.ignore(ledger.release(requestId))),
                  Effect.zipRight(Deferred.fail(answer, new InternalError({ message: "The request failed unexpectedly; nothing was charged for it." })))
                )
              ),
              // A settled hold is closed already; only an unsettled one (a failure on the way) is released here.
            Effect.ensuring(Effect.suspend(() => (holdClosed ? Effect.void : Effect.ignore(ledger.release(requestId)))))
            )
          )
            return answer
          })
        )
        return yield* Deferred.await(answer)
      })

    return { serve, routable } as const
  })
}) {}

const logLine = (requestId: string, model: string, completed: boolean, bill: Bill, createdAt: Date) =>
  Effect.logInfo("inference").pipe(
    Effect.annotateLogs({
      requestId,
      model,
      status: completed ? "completed" : "interrupted",
      chargeWei: bill.chargeWei.toString(),
      ms: Date.now() - createdAt.getTime()
    })
  )
