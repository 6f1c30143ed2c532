/**
 * `POST /v1/embeddings` through the exchange (DESIGN.md section 10, "Agents' dialects"): admitted, held, called with
 * fallback, settled and logged as a chat request is, with what differs for vectors:
 * - the candidates are embedding models only (domain/exchange/embeddingRouting.ts): named, never `auto`;
 * - the input is counted before anything is reserved (o200k; a token-id input is its length), and the hold is that
 *   count at the costliest candidate's input price (billing.ts `holdWei` with no output);
 * - the inputs go in batches of the model's `maxBatchInputs`, in order, each batch on a key its pool admits; a key
 *   failing (5xx, 429, timeout) rests and the batch goes to the next key, then the whole request to the next candidate
 *   (vectors of two models never mix: the batches a failed candidate answered are the operator's cost);
 * - the bill is the vendor's prompt_tokens summed over the batches, our count where it reports none (Gemini): an
 *   input-only bill, stored with inbound format `embeddings`.
 * The hold is released on every exit the settlement did not close; the settlement, once the vectors are in, runs
 * uninterruptibly (a client that leaves then still pays for what was made).
 */
import { Clock, Effect, Either } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import { randomBytes } from "node:crypto"
import { RequestId } from "../../domain/accounts/ids.ts"
import { takesDimensions } from "../../domain/catalog/embeddingCard.ts"
import { holdWei } from "../../domain/exchange/billing.ts"
import type { ChatResult } from "../../domain/exchange/canonical.ts"
import { planEmbeddingCandidates } from "../../domain/exchange/embeddingRouting.ts"
import { retryAfterMs } from "../../domain/exchange/keyPool.ts"
import type { RoutableModel } from "../../domain/exchange/routing.ts"
import { batchesOf, type DecodedEmbeddings, type EmbeddingText } from "../../domain/exchange/translate/embeddings.ts"
import { AllKeysExhausted, ValidationFailed } from "../../domain/errors.ts"
import { latestRevision } from "../../domain/oracle/inputs.ts"
import type { Credential } from "../../domain/accounts/credential.ts"
import { Ledger } from "../accounts/Ledger.ts"
import { Usage as UsageReports } from "../accounts/Usage.ts"
import { OracleSnapshot } from "../oracle/OracleSnapshot.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { RateLimits } from "../platform/RateLimits.ts"
import { admitKey, keyRemainingOf } from "./admission.ts"
import type { RouteFacts } from "./Exchange.ts"
import { KeyPools } from "./KeyPools.ts"
import { adapterFor } from "./providers/index.ts"
import { Providers } from "./Providers.ts"
import { type Attempt, SettlementService } from "./Settlement.ts"
import { failureKind, vendorMessage } from "./UpstreamRouter.ts"
import { recordInference } from "../platform/metrics.ts"

/**
 * The `dimensions` sent upstream: none to a model that takes none (routing let through only its own size, which is
 * what it answers anyway; its vendor refuses the field, as OpenAI does for text-embedding-ada-002).
 */
const upstreamDimensions = (model: RoutableModel, dimensions: number | undefined): number | undefined =>
  dimensions !== undefined && takesDimensions(model.card.embedding!) ? dimensions : undefined

/** A batch size when the card states none: OpenAI's limit. */
export const DEFAULT_BATCH_INPUTS = 2048

export interface EmbeddingsCall {
  readonly decoded: DecodedEmbeddings
  readonly apiKey: Credential
}

export interface EmbeddedReply {
  /** In input order. */
  readonly vectors: ReadonlyArray<ReadonlyArray<number>>
  /** The catalog key of the model that made them. */
  readonly model: string
  /** The tokens billed. */
  readonly promptTokens: number
  readonly route: RouteFacts
  readonly chargeWei: bigint
  readonly balanceWei: bigint
  readonly requestsRemaining: number | null
}

/** The model that answered every batch, with its vectors and the tokens its vendor reported (or we counted). */
interface Answered {
  readonly model: RoutableModel
  readonly keyId: string
  readonly vectors: ReadonlyArray<ReadonlyArray<number>>
  readonly tokens: number
}

const countTokens = (input: EmbeddingText): number => ("tokens" in input ? input.tokens.length : encode(input.text).length)

const newRequestId = (): RequestId => RequestId.make(`gen_${randomBytes(12).toString("hex")}`)


export class Embeddings extends Effect.Service<Embeddings>()("Embeddings", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    const snapshots = yield* OracleSnapshot
    const ledger = yield* Ledger
    const settlement = yield* SettlementService
    const usage = yield* UsageReports
    const rateLimits = yield* RateLimits
    const keyPools = yield* KeyPools
    const providers = yield* Providers

    /** The request's credit for as long as the scope: released on every exit unless the settlement closed it. */
    const holdCredit = (apiKey: Credential, requestId: RequestId, amountWei: bigint) =>
      Effect.acquireRelease(
        ledger.reserve({
          accountId: apiKey.accountId,
          requestId,
          amountWei,
          apiKey: { id: apiKey.id, dailyLimitWei: apiKey.dailyLimitWei, monthlyLimitWei: apiKey.monthlyLimitWei },
          memberCfId: apiKey.holderCfId
        }).pipe(
          Effect.catchTags({ NotFound: Effect.die, Conflict: Effect.die }),
          Effect.as({ settled: false })
        ),
        (hold) => (hold.settled ? Effect.void : Effect.ignore(ledger.release(requestId)))
      )

    /**
     * Every batch on one candidate, each on a key its pool admits; the next key on a key's failure, the next candidate
     * when the keys run out. A vendor refusing the request itself (another 4xx) aborts with its words.
     */
    const callUpstream = (
      candidates: ReadonlyArray<RoutableModel>,
      decoded: DecodedEmbeddings,
      inputTokens: ReadonlyArray<number>,
      attempts: Array<Attempt>
    ) =>
      Effect.gen(function* () {
        for (const model of candidates) {
          const embed = adapterFor(model.provider.format).embed
          if (embed === undefined || providers.pool(model.provider.name) === undefined) continue
          const size = model.card.embedding?.maxBatchInputs ?? DEFAULT_BATCH_INPUTS
          const batches = batchesOf(decoded.inputs.map((input, i) => ({ input, tokens: inputTokens[i]! })), size)
          const vectors: Array<ReadonlyArray<number>> = []
          let tokens = 0
          let keyId = ""
          let failed = false
          for (const batch of batches) {
            const counted = batch.reduce((sum, b) => sum + b.tokens, 0)
            const tried = new Set<string>()
            let done = false
            while (!done) {
              const admission = yield* keyPools.admit(model.provider.name, counted, tried)
              if (admission === undefined) {
                attempts.push({ model: model.key, provider: model.provider.name, key: null, outcome: "no_capacity", status: null, message: null, ms: 0 })
                failed = true
                break
              }
              tried.add(admission.key.id)
              const started = yield* Clock.currentTimeMillis
              const outcome = yield* Effect.either(
                embed(batch.map((b) => b.input), upstreamDimensions(model, decoded.dimensions), {
                  provider: model.provider,
                  key: admission.key,
                  upstreamModel: model.card.sdkId,
                  traits: model.traits,
                  firstByteTimeoutMs: config.exchange.firstByteTimeoutMs,
                  idleTimeoutMs: config.exchange.idleTimeoutMs
                })
              )
              const ended = yield* Clock.currentTimeMillis
              if (Either.isRight(outcome)) {
                const reported = outcome.right.promptTokens ?? counted
                yield* keyPools.reconcile(admission, reported)
                attempts.push({ model: model.key, provider: model.provider.name, key: admission.key.id, outcome: "served", status: 200, message: null, ms: ended - started })
                vectors.push(...outcome.right.vectors)
                tokens += reported
                keyId = admission.key.id
                done = true
                continue
              }
              const failure = outcome.left
              attempts.push({
                model: model.key,
                provider: model.provider.name,
                key: admission.key.id,
                outcome: failure.kind,
                status: failure.status ?? null,
                message: failure.message,
                ms: ended - started
              })
              const kind = failureKind(failure)
              yield* keyPools.reconcile(admission, 0)
              if (kind === undefined) {
                return yield* new ValidationFailed({ message: `${model.key} refused the request: ${vendorMessage(failure)}` })
              }
              yield* keyPools.cooldown(model.provider.name, admission.key.id, kind, retryAfterMs(failure.retryAfter, ended))
              yield* Effect.logWarning("an upstream embeddings attempt failed; trying the next key or model").pipe(
                Effect.annotateLogs({ model: model.key, key: admission.key.id, kind: failure.kind, status: failure.status ?? "", message: failure.message })
              )
            }
            if (failed) break
          }
          if (!failed) return { model, keyId, vectors, tokens } satisfies Answered
        }
        return yield* new AllKeysExhausted({
          message: `Every upstream key for ${candidates.map((m) => m.key).join(", ")} is unavailable, limited or cooling down; retry shortly.`
        })
      })

    const embed = Effect.fn("Embeddings.embed")(function* (call: EmbeddingsCall) {
      const { apiKey, decoded } = call
      const rate = yield* admitKey(rateLimits, apiKey)
      const snap = yield* snapshots.current
      const inputTokens = decoded.inputs.map(countTokens)
      const candidates = yield* planEmbeddingCandidates(snap.routableCatalog, {
        route: decoded.route,
        inputs: decoded.inputs,
        dimensions: decoded.dimensions,
        allowedModels: apiKey.allowedModels,
        embeds: (format) => adapterFor(format).embed !== undefined,
        inputTokens
      })
      const counted = inputTokens.reduce((sum, n) => sum + n, 0)
      const peg = snap.inputs.pegUsd18
      const held = candidates.reduce((max, m) => {
        const wei = holdWei(m.listing.price, { inputTokens: counted, outputTokens: 0 }, peg)
        return wei > max ? wei : max
      }, 1n)
      const requestId = newRequestId()
      const createdAt = new Date(yield* Clock.currentTimeMillis)
      return yield* Effect.scoped(
        Effect.gen(function* () {
          const hold = yield* holdCredit(apiKey, requestId, held)
          const attempts: Array<Attempt> = []
          const answered = yield* callUpstream(candidates, decoded, inputTokens, attempts)
          const result: ChatResult = {
            text: "",
            reasoning: "",
            reasoningSignature: null,
            toolCalls: [],
            usage: { freshInput: answered.tokens, output: 0 },
            stopReason: "stop",
            stopSequence: null
          }
          const done = yield* Effect.uninterruptible(
            Effect.tap(
              settlement.settle({
                requestId,
                accountId: apiKey.accountId,
                apiKeyId: apiKey.id,
                memberCfId: apiKey.holderCfId ?? null,
                format: "embeddings",
                stream: false,
                completed: true,
                modelRequested: candidates[0]!.key,
                served: answered.model,
                upstreamKey: answered.keyId,
                chooser: null,
                result,
                estimatedInputTokens: () => counted,
                attempts,
                holdWei: held,
                pegUsd18: peg,
                revision: latestRevision(snap.inputs),
                createdAt
              }),
              () => Effect.sync(() => (hold.settled = true))
            )
          )
          const now = yield* Clock.currentTimeMillis
          recordInference({
            format: "embeddings",
            model: answered.model.key,
            provider: answered.model.vendor,
            completed: true,
            seconds: (now - createdAt.getTime()) / 1000,
            legs: done.bill.legs,
            chargeWei: done.bill.chargeWei
          })
          yield* Effect.logInfo("embeddings").pipe(
            Effect.annotateLogs({ requestId, model: answered.model.key, inputs: decoded.inputs.length, chargeWei: done.bill.chargeWei.toString(), ms: now - createdAt.getTime() })
          )
          const route: RouteFacts = {
            requestId,
            modelRequested: candidates[0]!.key,
            modelUsed: answered.model.key,
            provider: answered.model.provider.name,
            strategy: "failover",
            chooser: undefined,
            rate,
            keyRemaining: yield* keyRemainingOf(usage, apiKey),
            dropped: []
          }
          return {
            vectors: answered.vectors,
            model: answered.model.key,
            promptTokens: answered.tokens,
            route,
            chargeWei: done.bill.chargeWei,
            balanceWei: done.settlement.balanceWei,
            requestsRemaining: rate?.remaining ?? null
          } satisfies EmbeddedReply
        })
      )
    })

    return { embed } as const
  })
}) {}
