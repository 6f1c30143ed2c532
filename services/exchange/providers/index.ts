/**
 * The adapter of each upstream format: a provider's configured `format` picks it. A new format is one more file and
 * one more entry here (the Record makes a missing one a type error).
 */
import type { UpstreamFormat } from "../../../domain/exchange/providers.ts"
import { anthropic } from "./anthropic.ts"
import { gemini } from "./gemini.ts"
import { openaiCompatible } from "./openaiCompatible.ts"
import type { ProviderAdapter } from "./ProviderAdapter.ts"

export type { CountTarget, ProviderAdapter, UpstreamTarget } from "./ProviderAdapter.ts"

const adapters: Record<UpstreamFormat, ProviderAdapter> = {
  "openai-chat": openaiCompatible,
  "anthropic-messages": anthropic,
  gemini
}

export const adapterFor = (format: UpstreamFormat): ProviderAdapter => adapters[format]
