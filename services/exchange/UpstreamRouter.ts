/**
 * Calling upstream with fallback (DESIGN.md section 10): each candidate in order, each of its provider's keys the pool
 * admits (a pinned conversation's key first), until one answers. A 429, 5xx, timeout or cut before the first event
 * rests the key and moves on; a vendor's 4xx refusing the request itself aborts with 422 carrying its words. The
 * attempts made are returned with the outcome, for the stored bill.
 */
import { Clock, Effect, Either, Option } from "effect"
import type { ChatRequest } from "../../domain/exchange/canonical.ts"
import { type FailureKind, retryAfterMs } from "../../domain/exchange/keyPool.ts"
import { type CandidatePlan, requestFor, type RoutableModel } from "../../domain/exchange/routing.ts"
import { ValidationFailed } from "../../domain/errors.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { recordUpstreamAttempt } from "../platform/metrics.ts"
import type { Pin } from "./AutoRouter.ts"
import { KeyPools, type PoolAdmission } from "./KeyPools.ts"
import { Providers } from "./Providers.ts"
import type { Attempt } from "./Settlement.ts"
import { type Reply, UpstreamCalls } from "./UpstreamCalls.ts"
import type { UpstreamFailure } from "./upstreamHttp.ts"

export interface RouteAttempt {
  readonly chat: ChatRequest
  readonly plan: CandidatePlan
  readonly stream: boolean
  /** The input each candidate's key admission counts (by catalog key), as the plan held it. */
  readonly inputTokens: ReadonlyMap<string, number>
  readonly outputTokens: number
  readonly pin: Pin | undefined
}

export type { Reply } from "./UpstreamCalls.ts"

export interface Served {
  readonly model: RoutableModel
  readonly keyId: string
  readonly reply: Reply
  /** The key pool's admission: corrected to the vendor's count once the answer is settled (`KeyPools.reconcile`). */
  readonly admission: PoolAdmission
}

/** Every attempt made, in order (the last is the one that served, if one did). */
export interface Routed {
  readonly attempts: ReadonlyArray<Attempt>
  readonly served: Option.Option<Served>
}

/** How a failed attempt rests its key; undefined: the vendor refused the request itself (abort, no cooldown). */
export const failureKind = (failure: UpstreamFailure): FailureKind | undefined => {
  if (failure.kind === "timeout") return "timeout"
  if (failure.kind !== "status") return "serverError"
  const status = failure.status ?? 0
  if (status === 429) return "rateLimited"
  if (status >= 500 || status === 408 || status === 401 || status === 403) return "serverError"
  return undefined
}

/** The vendor's own words from an error body, for a refusal passed on to the client. */
export const vendorMessage = (failure: UpstreamFailure): string => {
  try {
    const parsed = JSON.parse(failure.body ?? "") as { error?: { message?: unknown }; message?: unknown }
    const message = parsed.error?.message ?? parsed.message
    if (typeof message === "string") return message
  } catch {
    // not JSON: fall through
  }
  return failure.message
}

export class UpstreamRouter extends Effect.Service<UpstreamRouter>()("UpstreamRouter", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfig
    const providers = yield* Providers
    const keyPools = yield* KeyPools
    const upstream = yield* UpstreamCalls

    /** Tries each candidate's keys in order until one answers; the attempts are returned either way. */
    const route = Effect.fn("UpstreamRouter.route")(function* ({ chat, inputTokens, outputTokens, pin, plan, stream }: RouteAttempt): Effect.fn.Return<Routed, ValidationFailed> {
      const attempts: Array<Attempt> = []
      for (const model of plan.candidates) {
        if (providers.pool(model.provider.name) === undefined) continue
        const tried = new Set<string>()
        const tokens = (inputTokens.get(model.key) ?? 0) + outputTokens
        for (;;) {
          const admission = yield* keyPools.admit(model.provider.name, tokens, tried, pin?.modelKey === model.key ? pin.upstreamKey : undefined)
          if (admission === undefined) {
            attempts.push({ model: model.key, provider: model.provider.name, key: null, outcome: "no_capacity", status: null, message: null, ms: 0 })
            break
          }
          tried.add(admission.key.id)
          const started = yield* Clock.currentTimeMillis
          const outcome = yield* Effect.either(
            upstream.call(requestFor(chat, model), {
              provider: model.provider,
              key: admission.key,
              upstreamModel: model.card.sdkId,
              vendor: model.vendor,
              traits: model.traits,
              defaultMaxTokens: outputTokens,
              firstByteTimeoutMs: config.exchange.firstByteTimeoutMs,
              idleTimeoutMs: config.exchange.idleTimeoutMs
            }, stream).pipe(
              Effect.tapBoth({
                onFailure: (failure) => Effect.annotateCurrentSpan({ "cx.upstream.outcome": failure.kind, "cx.upstream.status": failure.status ?? "" }),
                onSuccess: () => Effect.annotateCurrentSpan("cx.upstream.outcome", "served")
              }),
              Effect.withSpan("upstream.attempt", {
                kind: "client",
                attributes: { "cx.model": model.key, "cx.vendor": model.vendor, "cx.provider": model.provider.name, "cx.upstream.key": admission.key.id, "cx.stream": stream }
              })
            )
          )
          const ended = yield* Clock.currentTimeMillis
          recordUpstreamAttempt(model.provider.name, admission.key.id, Either.isRight(outcome) ? "served" : outcome.left.kind, (ended - started) / 1000)
          if (Either.isRight(outcome)) {
            attempts.push({ model: model.key, provider: model.provider.name, key: admission.key.id, outcome: "served", status: 200, message: null, ms: ended - started })
            return { attempts, served: Option.some<Served>({ model, keyId: admission.key.id, reply: outcome.right, admission }) }
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
          if (kind === undefined) {
            yield* keyPools.reconcile(admission, 0)
            return yield* new ValidationFailed({ message: `${model.key} refused the request: ${vendorMessage(failure)}` })
          }
          yield* keyPools.cooldown(model.provider.name, admission.key.id, kind, retryAfterMs(failure.retryAfter, ended))
          yield* Effect.logWarning("an upstream attempt failed; trying the next key or model").pipe(
            Effect.annotateLogs({ model: model.key, key: admission.key.id, kind: failure.kind, status: failure.status ?? "", message: failure.message })
          )
        }
      }
      return { attempts, served: Option.none<Served>() }
    })

    return { route } as const
  })
}) {}
