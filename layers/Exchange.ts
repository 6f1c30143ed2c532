/**
 * The inference exchange (issue 10): the providers and their key pools, the orchestration, settlement and stored
 * bills, the stored responses of `/v1/responses` and the job purging them, the `auto` routing state, and the routable
 * model list. The ledger, API keys, the oracle's snapshot and AppConfig come from around it.
 */
import { Layer } from "effect"
import { AutoRouter } from "../services/exchange/AutoRouter.ts"
import { Embeddings } from "../services/exchange/Embeddings.ts"
import { Exchange } from "../services/exchange/Exchange.ts"
import { GenerationLogs } from "../services/exchange/GenerationLogs.ts"
import { Generations } from "../services/exchange/Generations.ts"
import { Headroom } from "../services/exchange/Headroom.ts"
import { KeyPools } from "../services/exchange/KeyPools.ts"
import { ModelCatalog } from "../services/exchange/ModelCatalog.ts"
import { Providers } from "../services/exchange/Providers.ts"
import { Quotes } from "../services/exchange/Quotes.ts"
import { ReasoningSeal } from "../services/exchange/ReasoningSeal.ts"
import { Responses } from "../services/exchange/Responses.ts"
import { SettlementService } from "../services/exchange/Settlement.ts"
import { StoredResponsePurgeLive } from "../services/exchange/StoredResponsePurge.ts"
import { StoredResponses } from "../services/exchange/StoredResponses.ts"
import { TokenCounter } from "../services/exchange/TokenCounter.ts"
import { UpstreamCalls } from "../services/exchange/UpstreamCalls.ts"
import { UpstreamRouter } from "../services/exchange/UpstreamRouter.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { RateLimitsLive } from "./RateLimit.ts"
import { whenRole } from "./Roles.ts"

/**
 * The exchange with its vendors behind `upstream`: `UpstreamCalls.Default` (HTTP) in the service, layers/Test.ts
 * `ScriptedUpstream` for a program or a test that scripts the vendors; the rest is the same.
 */
export const exchangeWithUpstream = (upstream: Layer.Layer<UpstreamCalls>) => Layer.mergeAll(
  ModelCatalog.Default,
  // POST /v1/embeddings: held, called and settled as chat, with its own candidates and batches.
  Embeddings.Default,
  Quotes.Default,
  // The Responses format's conversations, sealed reasoning and token count.
  Responses.Default.pipe(Layer.provideMerge(TokenCounter.Default), Layer.provideMerge(ReasoningSeal.Default)),
  // One replica at a time (a Jobs advisory lock), every STORED_RESPONSE_PURGE_INTERVAL_SECONDS, among those that run
  // the jobs role (SERVICE_ROLES).
  whenRole("jobs", StoredResponsePurgeLive.pipe(Layer.provide(Jobs.Default)))
).pipe(
  Layer.provideMerge(Exchange.Default),
  // One per replica, shared by the planner and the orchestration.
  Layer.provideMerge(Headroom.Default),
  Layer.provideMerge(UpstreamRouter.Default),
  // The vendors over HTTP; layers/Test.ts `ScriptedUpstream` answers from a script instead.
  Layer.provideMerge(upstream),
  Layer.provideMerge(SettlementService.Default),
  Layer.provideMerge(Generations.Default),
  Layer.provideMerge(GenerationLogs.Default),
  Layer.provideMerge(StoredResponses.Default),
  Layer.provideMerge(AutoRouter.Default),
  Layer.provideMerge(KeyPools.Default),
  Layer.provideMerge(Providers.Default),
  // The same store as the oracle's limits (memory, or Redis across replicas): the per-key inference rate.
  Layer.provide(RateLimitsLive)
)

export const ExchangeLive = exchangeWithUpstream(UpstreamCalls.Default)
