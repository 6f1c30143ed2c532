/**
 * The exchange's orchestration (DESIGN.md section 10), one request's story: admit it -> plan it -> hold its credit ->
 * call upstream with fallback -> settle what it used. It knows nothing of HTTP: `serve` answers a `Reply` (the reply's
 * meta and routing facts, its events, and its settlement) that src/http/ renders per inbound format.
 *
 * Everything from the hold on runs detached from the client's fiber, in a scope of its own that holds the credit: a
 * client that disconnects stops receiving, not the bill. A whole answer is settled in that one fiber (its one fork,
 * besides the upstream call's when it overlaps the reservation) and returned; a stream is returned at its first event
 * and relayed through a bounded buffer (./streamRelay.ts) by its continuation, a second fiber that settles it and
 * closes its scope; after a disconnect it is read on to its usage for at most STREAM_DRAIN_TIMEOUT_MS. The hold is
 * released when the scope closes on any exit but the settled one.
 */
import { Cause, Clock, Effect, Exit, Fiber, FiberSet, LogLevel, Option, Scope, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { RequestId } from "../../domain/accounts/ids.ts"
import type { Bill } from "../../domain/exchange/billing.ts"
import { droppedParameters } from "../../domain/exchange/droppedParameters.ts"
import { type ChatEvent, type ChatResult, foldEvents, type ReplyMeta, type SettledFigures, type StreamFailure, type Usage } from "../../domain/exchange/canonical.ts"
import { AllKeysExhausted, type InsufficientBalance, InternalError, type RateLimited, ServiceUnavailable, type SpendingLimitReached } from "../../domain/errors.ts"
import type { Credential } from "../../domain/accounts/credential.ts"
import { Ledger } from "../accounts/Ledger.ts"
import { Usage as UsageReports } from "../accounts/Usage.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { type RateLimitDecision, RateLimits } from "../platform/RateLimits.ts"
import { admitKey, type KeyRemaining, keyRemainingOf } from "./admission.ts"
import { AutoRouter } from "./AutoRouter.ts"
import { Headroom } from "./Headroom.ts"
import { KeyPools } from "./KeyPools.ts"
import { type InferenceCall, type PlannedRequest, RequestPlanner } from "./RequestPlanner.ts"
import { type SettleRequest, SettlementService } from "./Settlement.ts"
import { relayStream } from "./streamRelay.ts"
import { type Served, UpstreamRouter } from "./UpstreamRouter.ts"
import { recordInference, recordInferenceFirstEvent } from "../platform/metrics.ts"

export type { InboundFormatName, InferenceCall } from "./RequestPlanner.ts"

/** What the client is told about the route before any byte of the answer (src/http/ makes headers of it). */
export interface RouteFacts {
  readonly requestId: string
  readonly modelRequested: string
  readonly modelUsed: string
  readonly provider: string
  readonly strategy: "sticky" | "failover"
  readonly chooser: string | undefined
  /** The key's request-rate decision; undefined when rate limits are off. */
  readonly rate: RateLimitDecision | undefined
  /** What the key's caps leave (its live holds counted), in wei, or "unlimited"; undefined when they could not be read. */
  readonly keyRemaining: KeyRemaining | undefined
  /** What the request asked for that the serving upstream did not get (domain/exchange/droppedParameters.ts). */
  readonly dropped: ReadonlyArray<string>
}

/** The settlement as the exchange reports it; the inbound format makes its wire figures (`replyBillOf`). */
export interface SettledReply extends SettledFigures {
  /** False for a stream that ended before its end (cut upstream, or the client left and the drain ran out). */
  readonly completed: boolean
  readonly usage: Usage
  /** Why a stream was interrupted; undefined when it completed. */
  readonly failure: StreamFailure | undefined
}

export type Reply =
  | {
    readonly _tag: "Whole"
    readonly meta: ReplyMeta
    readonly route: RouteFacts
    readonly result: ChatResult
    readonly settled: SettledReply
  }
  | {
    readonly _tag: "Stream"
    readonly meta: ReplyMeta
    readonly route: RouteFacts
    /** The vendor's events as they arrive; ends with the upstream (or when the client stops reading). */
    readonly events: Stream.Stream<ChatEvent>
    /** Succeeds once the request is settled, after the last event. */
    readonly settled: Effect.Effect<SettledReply>
  }

/** What the settlement needs of the request beyond its plan: its attempts, when it began, the key's rate decision. */
interface SettleContext {
  readonly attempts: SettleRequest["attempts"]
  readonly createdAt: Date
  readonly rate: RateLimitDecision | undefined
}

const isRefusal = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error &&
  (error._tag === "InsufficientBalance" || error._tag === "SpendingLimitReached")

const newRequestId = (): RequestId => RequestId.make(`gen_${randomBytes(12).toString("hex")}`)

/**
 * What `exclude` withholds: the reasoning text. The signature stays, so a Messages client can replay the (empty)
 * thinking block Anthropic requires before a tool_use when thinking is on, as Anthropic's own `display: "omitted"`.
 */
const isReasoningText = (event: ChatEvent) => event.type === "reasoning_delta"

/**
 * Why a request could not start, as the client's answer (nothing was charged; its hold was released when its scope
 * closed): a refusal (no capacity, a vendor refusing the request, a cap) as it is; the database unreachable
 * (services/platform/Database.ts makes it a ServiceUnavailable defect, logged as a warning there) as 503, as on every
 * other route; anything else logged and answered as an internal error.
 */
const refusalOf = (cause: Cause.Cause<ServeFailure>): Effect.Effect<never, ServeFailure> => {
  const refusal = Cause.failureOption(cause)
  if (Option.isSome(refusal)) return Effect.fail(refusal.value)
  const unavailable = Option.filter(Cause.dieOption(cause), (defect): defect is ServiceUnavailable => defect instanceof ServiceUnavailable)
  if (Option.isSome(unavailable)) return Effect.fail(unavailable.value)
  return Effect.zipRight(
    Effect.logError("an inference request failed unexpectedly", cause),
    Effect.fail(new InternalError({ message: "The request failed unexpectedly; nothing was charged for it." }))
  )
}

export class Exchange extends Effect.Service<Exchange>()("Exchange", {
  scoped: Effect.gen(function* () {
    const config = yield* AppConfig
    const planner = yield* RequestPlanner
    const ledger = yield* Ledger
    const settlement = yield* SettlementService
    const usage = yield* UsageReports
    const autoRouter = yield* AutoRouter
    const rateLimits = yield* RateLimits
    const router = yield* UpstreamRouter
    const headroom = yield* Headroom
    const keyPools = yield* KeyPools
    const logsInference = LogLevel.greaterThanEqual(LogLevel.Info, config.logLevel)
    // The requests in flight: those not yet answered, and the streams relayed and settled after their answer started.
    // At shutdown they are given the drain timeout to settle before they are interrupted (an interrupted one releases
    // its hold; the sweeper is the last resort).
    const serviceScope = yield* Effect.scope
    const answering = yield* FiberSet.make<Reply, ServeFailure>()
    const finishing = yield* FiberSet.make<SettledReply, never>()
    yield* Effect.addFinalizer(() =>
      Effect.ignore(Effect.timeout(
        Effect.zipRight(FiberSet.awaitEmpty(answering), FiberSet.awaitEmpty(finishing)),
        config.exchange.drainTimeoutMs + config.exchange.firstByteTimeoutMs
      ))
    )

    /**
     * One request, top to bottom: admitted by its key's rate, planned, then handed to its detached fiber (`answer`:
     * hold, call, settle), whose reply it waits for. Below: `answer`, then the steps it takes.
     */
    const serve = Effect.fn("Exchange.serve")(function* (call: InferenceCall): Effect.fn.Return<Reply, ServeFailure> {
      const rate = yield* admit(call.apiKey)
      const planned = yield* planner.plan(call)
      // Not the client's to interrupt (FiberSet.run forks outside the caller): a client that leaves stops waiting, not
      // the request. Inside, races and timeouts still work.
      return yield* Fiber.join(yield* FiberSet.run(answering, answer(call, planned, rate)))
    })

    /**
     * From the hold to the settlement, in the request's detached fiber. The request's scope (which holds its credit)
     * is made here and outlives this fiber for a stream: a whole answer is settled, its scope closed, then returned; a
     * stream is returned at its first event, and its continuation (relay, settle, close the scope) runs on in a fiber
     * of the in-flight set, which the reply's `settled` joins.
     */
    const answer = (call: InferenceCall, planned: PlannedRequest, rate: RateLimitDecision | undefined): Effect.Effect<Reply, ServeFailure> =>
      Effect.flatMap(Scope.make(), (scope) =>
        Effect.gen(function* () {
          const { requestId, served, meta, routeFacts, context } = yield* Scope.extend(begin(call, planned, rate), scope)
          const excludesReasoning = planned.chat.reasoning?.exclude === true

          if (served.reply._tag === "Whole") {
            // Read and parsed whole inside the call: its events are folded as they are, no stream in between.
            const events = served.reply.events
            const result = foldEvents(excludesReasoning ? events.filter((e) => !isReasoningText(e)) : events)
            const settled = yield* settle(call, planned, requestId, served, context, result, true)
            yield* Scope.close(scope, Exit.void)
            const route = routeFacts(yield* keyRemaining(call.apiKey))
            return { _tag: "Whole", meta, route, result, settled } satisfies Reply
          }

          recordInferenceFirstEvent(call.format, served.model.vendor, ((yield* Clock.currentTimeMillis) - context.createdAt.getTime()) / 1000)
          const relay = yield* relayStream({
            upstream: served.reply.events,
            withheld: (event) => excludesReasoning && isReasoningText(event),
            drainTimeoutMs: config.exchange.drainTimeoutMs
          })
          // The bill is not known when a stream starts: the final chunk carries it (x_credits_used).
          const route = routeFacts(yield* keyRemaining(call.apiKey))
          const settling = yield* FiberSet.run(finishing, finishStream(relay, scope, call, planned, requestId, served, context))
          return { _tag: "Stream", meta, route, events: relay.events, settled: Fiber.join(settling) } satisfies Reply
        }).pipe(
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
          Effect.catchAllCause(refusalOf)
        ))

    const admit = (apiKey: Credential) => admitKey(rateLimits, apiKey)
    const keyRemaining = (apiKey: Credential): Effect.Effect<KeyRemaining | undefined> => keyRemainingOf(usage, apiKey)

    /**
     * The request's credit, held for as long as the scope: released on every exit but success, since a request that
     * ends well has settled its hold (the settlement closes it; releasing a closed hold would change nothing).
     */
    const holdCredit = (call: InferenceCall, planned: PlannedRequest, requestId: RequestId) =>
      Effect.acquireRelease(
        ledger.reserve({
          accountId: call.apiKey.accountId,
          requestId,
          amountWei: planned.holdWei,
          apiKey: { id: call.apiKey.id, dailyLimitWei: call.apiKey.dailyLimitWei, monthlyLimitWei: call.apiKey.monthlyLimitWei },
          memberCfId: call.apiKey.holderCfId
        }).pipe(
          // A key's account always exists (a foreign key says so) and request ids are fresh: either would be a defect.
          Effect.catchTags({ NotFound: Effect.die, Conflict: Effect.die }),
          Effect.tap((reserved) => Effect.sync(() => headroom.note(call.apiKey.accountId, reserved.headroomWei))),
          Effect.tapError(() => Effect.sync(() => headroom.note(call.apiKey.accountId, null))),
          Effect.asVoid
        ),
        (_, exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.ignore(ledger.release(requestId)))
      )

    /**
     * The hold, then the upstream call; or both at once when the headroom allows (DESIGN.md section 10, "Overlap").
     * Nothing reaches the client before the hold is made either way: a refused reservation interrupts the call (its
     * connection is cut) or, when the call had already answered, closes its stream unread, and the refusal is the
     * client's answer. What the vendor did for it is the operator's cost, logged as such.
     */
    const holdAndRoute = (call: InferenceCall, planned: PlannedRequest, requestId: RequestId) => {
      const route = router.route({
        chat: planned.chat,
        plan: planned.plan,
        stream: call.stream,
        inputTokens: planned.heldInputTokens,
        outputTokens: planned.outputTokens,
        pin: planned.pin
      })
      if (!headroom.allows(call.apiKey.accountId, planned.holdWei)) return Effect.zipRight(holdCredit(call, planned, requestId), route)
      return Effect.gen(function* () {
        const calling = yield* Effect.fork(route)
        const held = yield* Effect.exit(holdCredit(call, planned, requestId))
        if (Exit.isSuccess(held)) return yield* Fiber.join(calling)
        const refused = Option.filter(Cause.failureOption(held.cause), isRefusal)
        // Interrupting a call that already answered gives back its answer, whose stream is then closed unread.
        const called = yield* Fiber.interrupt(calling)
        if (Option.isSome(refused)) {
          yield* Effect.logInfo("an upstream call overlapped with a reservation that was refused: cancelled, the operator's cost").pipe(
            Effect.annotateLogs({ requestId, operatorCost: true, answered: Exit.isSuccess(called), model: planned.plan.candidates[0]!.key })
          )
        }
        if (Exit.isSuccess(called) && Option.isSome(called.value.served) && called.value.served.value.reply._tag === "Stream") {
          yield* Effect.ignore(Stream.runHead(called.value.served.value.reply.events))
        }
        return yield* Effect.failCause(held.cause)
      })
    }

    /** Charges what the reply used, stores its bill, and gives the vendor key's pool its actual tokens. */
    const settle = (
      call: InferenceCall,
      planned: PlannedRequest,
      requestId: RequestId,
      served: Served,
      context: SettleContext,
      result: ChatResult,
      completed: boolean
    ) =>
      Effect.gen(function* () {
        const done = yield* settlement.settle({
          requestId,
          accountId: call.apiKey.accountId,
          apiKeyId: call.apiKey.id,
          memberCfId: call.apiKey.holderCfId ?? null,
          format: call.format,
          stream: call.stream,
          completed,
          modelRequested: planned.plan.candidates[0]!.key,
          served: served.model,
          upstreamKey: served.keyId,
          chooser: planned.plan.chooser ?? null,
          result,
          // Counted only if the vendor reports no input, after the answer: the hold may have been sized on a bound.
          estimatedInputTokens: () => planned.countedInputTokensOf(served.model),
          attempts: context.attempts,
          holdWei: planned.holdWei,
          pegUsd18: planned.pegUsd18,
          revision: planned.revision,
          createdAt: context.createdAt
        })
        // Every input bucket counts towards a vendor's TPM, cache writes included.
        const u = done.usage
        yield* keyPools.reconcile(served.admission, (u.freshInput ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite5m ?? 0) + (u.cacheWrite1h ?? 0) + (u.output ?? 0))
        recordInference({
          format: call.format,
          model: served.model.key,
          provider: served.model.vendor,
          completed,
          seconds: ((yield* Clock.currentTimeMillis) - context.createdAt.getTime()) / 1000,
          legs: done.bill.legs,
          chargeWei: done.bill.chargeWei
        })
        // Built only when it will be written: its annotations cost as much as the rest of the settlement's bookkeeping.
        if (logsInference) yield* logLine(requestId, served.model.key, completed, done.bill, context.createdAt)
        return {
          completed,
          usage: done.usage,
          chargeWei: done.bill.chargeWei,
          balanceWei: done.settlement.balanceWei,
          requestsRemaining: context.rate?.remaining ?? null,
          failure: undefined
        } satisfies SettledReply
      })

    /**
     * The request's first part, inside its scope: the hold and the upstream call, the conversation's pin, and what
     * the client will be told of the route.
     */
    const begin = (call: InferenceCall, planned: PlannedRequest, rate: RateLimitDecision | undefined) =>
      Effect.gen(function* () {
        const requestId = newRequestId()
        const createdAt = new Date(yield* Clock.currentTimeMillis)
        const { attempts, served: found } = yield* holdAndRoute(call, planned, requestId)
        if (Option.isNone(found)) {
          return yield* new AllKeysExhausted({
            message: `Every upstream key for ${planned.plan.candidates.map((m) => m.key).join(", ")} is unavailable, limited or cooling down; retry shortly.`
          })
        }
        const served = found.value
        // The conversation's next turns go where this one went: pinned before the answer starts, so a client's next
        // turn (which may follow at once) finds it. One round trip, on requests with a conversation_id only.
        if (planned.conversationId !== undefined) {
          yield* Effect.ignore(
            autoRouter.savePin(
              call.apiKey.accountId,
              planned.conversationId,
              { model: served.model.key, provider: served.model.provider.name, upstreamKey: served.keyId },
              call.route.routingBias
            )
          )
        }
        const meta: ReplyMeta = { id: requestId, model: served.model.key, created: Math.floor(createdAt.getTime() / 1000) }
        const routeFacts = (remaining: RouteFacts["keyRemaining"]): RouteFacts => ({
          requestId,
          modelRequested: planned.plan.candidates[0]!.key,
          modelUsed: served.model.key,
          provider: served.model.provider.name,
          strategy: planned.plan.chooser === "pin" && planned.pin?.modelKey === served.model.key ? "sticky" : "failover",
          chooser: planned.plan.chooser,
          rate,
          keyRemaining: remaining,
          dropped: [...(call.dropped ?? []), ...droppedParameters(planned.chat, served.model, call.format)]
        })
        return { requestId, served, meta, routeFacts, context: { attempts, createdAt, rate } }
      })

    /**
     * A stream's continuation, after its answer started: relays the vendor's events to their end (or the drain
     * timeout), settles what they used, closes the request's scope, then ends the client's stream.
     */
    const finishStream = (
      relay: Effect.Effect.Success<ReturnType<typeof relayStream>>,
      scope: Scope.CloseableScope,
      call: InferenceCall,
      planned: PlannedRequest,
      requestId: RequestId,
      served: Served,
      context: SettleContext
    ): Effect.Effect<SettledReply> =>
      Effect.gen(function* () {
        const relayed = yield* relay.run
        const billed = yield* Effect.exit(settle(call, planned, requestId, served, context, relayed.result, relayed.completed))
        yield* relay.end
        if (Exit.isSuccess(billed)) yield* Scope.close(scope, billed) // settled: the hold is closed
        else {
          // The settlement could not be written (the database unreachable): the stream ends with the interrupted frame
          // instead of never ending. Nothing is charged. The hold's release is tried beside it, not before it (it
          // would wait out the database's connect timeout); the sweeper is the last resort.
          yield* Effect.forkIn(Scope.close(scope, billed), serviceScope)
          yield* Effect.logError("an inference request failed after its answer started", billed.cause)
          return {
            completed: false,
            usage: relayed.result.usage,
            chargeWei: 0n,
            balanceWei: 0n,
            requestsRemaining: context.rate?.remaining ?? null,
            failure: {
              code: "stream_interrupted",
              message: "The answer could not be billed (the service's database is unreachable), so it ends here and is not charged; retry shortly."
            }
          } satisfies SettledReply
        }
        if (relayed.completed) return billed.value
        return {
          ...billed.value,
          failure: { code: "stream_interrupted", message: `The upstream stream was interrupted: ${relayed.why}. Billed for what was delivered.` }
        } satisfies SettledReply
      }).pipe(
        // Interrupted (at shutdown, past the drain timeout): the hold is released.
        Effect.onExit((exit) => (Exit.isInterrupted(exit) ? Scope.close(scope, exit) : Effect.void))
      )

    return { serve, routable: planner.routable } as const
  }),
  dependencies: [RequestPlanner.Default]
}) {}

/** What a request fails with before its answer starts. */
export type ServeFailure =
  | RateLimited
  | Effect.Effect.Error<ReturnType<RequestPlanner["plan"]>>
  | InsufficientBalance
  | SpendingLimitReached
  | Effect.Effect.Error<ReturnType<UpstreamRouter["route"]>>
  | AllKeysExhausted
  | InternalError

const logLine = (requestId: string, model: string, completed: boolean, bill: Bill, createdAt: Date) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.logInfo("inference").pipe(
      Effect.annotateLogs({
        requestId,
        model,
        status: completed ? "completed" : "interrupted",
        chargeWei: bill.chargeWei.toString(),
        ms: now - createdAt.getTime()
      })
    ))
