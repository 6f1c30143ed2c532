/**
 * Settling an inference request (SPEC "Billing" 5, DESIGN.md section 10): the vendor's counts (completed by our own
 * count where it reported nothing, see docs/decisions.md), priced by the live price point of the model that served,
 * charged and recorded with its bill in ONE transaction; idempotent by request id (the ledger's settle and the bill's
 * insert both are).
 */
import type { InboundFormatName } from "../../domain/exchange/traits.ts"
import { Clock, Effect } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import type { RequestId } from "../../domain/accounts/ids.ts"
import { type Bill, priceUsage } from "../../domain/exchange/billing.ts"
import type { ChatResult, Usage } from "../../domain/exchange/canonical.ts"
import type { RoutableModel } from "../../domain/exchange/routing.ts"
import { ROUTING_MARKUP, type Usd18 } from "../../domain/money.ts"
import type { ConfirmedRevision } from "../../domain/oracle/inputs.ts"
import { Ledger, type SettleInput, type Settlement } from "../accounts/Ledger.ts"
import { makeGroupCommit } from "../platform/GroupCommit.ts"
import { recordSettleBatch } from "../platform/metrics.ts"
import { Generations, type GenerationRow } from "./Generations.ts"

export interface Attempt {
  readonly model: string
  readonly provider: string
  readonly key: string | null
  readonly outcome: string
  readonly status: number | null
  readonly message: string | null
  readonly ms: number
}

export interface SettleRequest {
  readonly requestId: RequestId
  readonly accountId: string
  readonly apiKeyId: string
  /** Who issued the request's key or grant (its spending pool counts the charge, should the hold be gone). */
  readonly memberCfId: string | null
  readonly format: InboundFormatName | "embeddings"
  readonly stream: boolean
  readonly completed: boolean
  readonly modelRequested: string
  readonly served: RoutableModel
  readonly upstreamKey: string
  readonly chooser: string | null
  /** What the reply delivered (for our own count where the vendor reported nothing). */
  readonly result: ChatResult
  /** The input estimate (our count of what was sent), taken only when the vendor reported no input. */
  readonly estimatedInputTokens: () => number
  readonly attempts: ReadonlyArray<Attempt>
  readonly holdWei: bigint
  readonly pegUsd18: Usd18
  readonly revision: ConfirmedRevision | undefined
  readonly createdAt: Date
}

export interface Settled {
  readonly bill: Bill
  readonly usage: Usage
  readonly settlement: Settlement
}

const countTokens = (text: string) => (text === "" ? 0 : encode(text).length)

/**
 * The counts billed. A vendor's report wins field by field. When it reported no input at all, the input we sent is
 * billed at our estimate; when it reported no output, what we delivered is counted with o200k (reasoning and tool
 * arguments included). On a stream that did not complete, a reported output below what we delivered is a running
 * count the cut left stale (Anthropic's `message_start` says 1): what we delivered is billed instead. Nothing the
 * client did not receive is invented.
 */
export const billedUsage = (
  reported: Usage,
  result: ChatResult,
  estimatedInputTokens: () => number,
  completed = true
): { usage: Usage; estimated: boolean } => {
  const inputReported = [reported.freshInput, reported.cacheRead, reported.cacheWrite5m, reported.cacheWrite1h].some((n) => n !== undefined)
  const delivered = () =>
    countTokens(result.text) + countTokens(result.reasoning) +
    result.toolCalls.reduce((sum, call) => sum + countTokens(call.name) + countTokens(call.arguments), 0)
  const staleOutput = !completed && reported.output !== undefined && reported.output < delivered()
  const outputReported = reported.output !== undefined && !staleOutput
  if (inputReported && outputReported) return { usage: reported, estimated: false }
  return {
    usage: {
      ...reported,
      freshInput: inputReported ? reported.freshInput : estimatedInputTokens(),
      output: outputReported ? reported.output : delivered(),
      reasoning: outputReported ? reported.reasoning : result.reasoning === "" ? undefined : countTokens(result.reasoning)
    },
    estimated: true
  }
}

/** The most settlements one statement applies; more queued wait for the next. */
const MAX_BATCH = 256

export class SettlementService extends Effect.Service<SettlementService>()("SettlementService", {
  scoped: Effect.gen(function* () {
    const ledger = yield* Ledger
    const generations = yield* Generations
    // This replica's settlements, group-committed (DESIGN.md section 10): one statement charges a batch and stores its
    // bills, so one WAL flush serves every request in it.
    const batches = yield* makeGroupCommit({
      run: (jobs: ReadonlyArray<{ readonly input: SettleInput; readonly bill: GenerationRow }>) =>
        Effect.zipRight(
          Effect.sync(() => recordSettleBatch(jobs.length)),
          ledger.settleBatch(jobs.map((job) => job.input), generations.insertBills(jobs.map((job) => job.bill)))
        ),
      maxBatch: MAX_BATCH
    })

    const settle = Effect.fn("Settlement.settle")(function* (request: SettleRequest): Effect.fn.Return<Settled> {
      const { usage, estimated } = billedUsage(request.result.usage, request.result, request.estimatedInputTokens, request.completed)
      const point = request.served.listing.price
      const bill = priceUsage(point, usage, request.pegUsd18)
      const row: GenerationRow = {
        id: request.requestId,
        accountId: request.accountId,
        apiKeyId: request.apiKeyId,
        inboundFormat: request.format,
        stream: request.stream,
        status: request.completed ? "completed" : "interrupted",
        modelRequested: request.modelRequested,
        modelUsed: request.served.key,
        provider: request.served.provider.name,
        upstreamKey: request.upstreamKey,
        chooser: request.chooser,
        usage: {
          freshInput: usage.freshInput ?? null,
          cacheRead: usage.cacheRead ?? null,
          cacheWrite5m: usage.cacheWrite5m ?? null,
          cacheWrite1h: usage.cacheWrite1h ?? null,
          output: usage.output ?? null,
          reasoning: usage.reasoning ?? null,
          source: estimated ? "partly_estimated" : "vendor"
        },
        bill: {
          legs: bill.legs.map((leg) => ({
            kind: leg.kind,
            tokens: leg.tokens,
            rateUsd18PerMillion: leg.rateUsd18PerMillion.toString(),
            provenance: leg.provenance,
            pricedAs: leg.pricedAs
          })),
          tierFromInputTokens: bill.tierFromInputTokens,
          subtotalUsd18: bill.subtotalUsd18.toString(),
          markup: { numerator: Number(ROUTING_MARKUP.numerator), denominator: Number(ROUTING_MARKUP.denominator) },
          pegUsd18: request.pegUsd18.toString(),
          priceEffectiveFrom: point.effectiveFrom.toISOString(),
          priceObservedAt: request.served.listing.price.observedAt.toISOString(),
          revision: request.revision === undefined
            ? null
            : { revisionVersion: request.revision.revisionVersion, metadataHash: request.revision.metadataHash }
        },
        attempts: request.attempts,
        holdWei: request.holdWei,
        chargeWei: bill.chargeWei,
        createdAt: request.createdAt,
        settledAt: new Date(yield* Clock.currentTimeMillis)
      }
      // The charge, the hold's closing and the bill are one statement (one transaction): all of it or none. Charged
      // whether or not the hold is still there, and once by request id.
      const settlement = yield* batches.submit({
        input: {
          requestId: request.requestId,
          chargeWei: bill.chargeWei,
          chargeTo: { accountId: request.accountId, apiKeyId: request.apiKeyId, memberCfId: request.memberCfId }
        },
        bill: row
      }).pipe(Effect.orDie)
      return { bill, usage, settlement }
    })

    return { settle } as const
  })
}) {}
