/**
 * The building blocks the oracle's response shapes share (schemas.ts, catalogSchemas.ts): instants, hashes, wei,
 * the provider object, price components and the cache and reasoning blocks. Kept apart so that the catalog's shapes
 * can live in their own module without an import cycle.
 */
import { Schema } from "effect"
import { Provenance } from "../catalog/card.ts"

export const Timestamp = Schema.String.annotations({ description: "ISO-8601 instant", jsonSchema: { format: "date-time" } })
export const Hash = Schema.String.pipe(Schema.pattern(/^0x[0-9a-f]{64}$/)).annotations({ description: "0x-prefixed 32-byte hex" })
export const WeiString = Schema.String.pipe(Schema.pattern(/^[0-9]+$/)).annotations({ description: "credit-token wei (18 decimals) as digits" })
export const UsdPerMillion = Schema.Number.annotations({ description: "USD per 1,000,000 tokens" })

export const ProvenancePair = Schema.Struct({ input: Provenance, output: Provenance })

export const Provider = Schema.Struct({ key: Schema.String, name: Schema.String }).annotations({ identifier: "Provider" })

export const PriceComponent = Schema.Struct({
  usdPerMillion: Schema.NullOr(Schema.Number),
  ratioOfInput: Schema.NullOr(Schema.Number),
  source: Schema.Literal("catalog"),
  sourceUrl: Schema.NullOr(Schema.String),
  provenance: Provenance,
  createdAt: Schema.NullOr(Timestamp)
}).annotations({ identifier: "PriceComponent" })

export const CacheBlock = Schema.NullOr(
  Schema.Struct({
    cachedInput: Schema.NullOr(PriceComponent),
    cacheWrite5m: Schema.NullOr(PriceComponent),
    cacheWrite1h: Schema.NullOr(PriceComponent),
    read_multiplier: Schema.NullOr(Schema.Number),
    write_multiplier_5m: Schema.NullOr(Schema.Number),
    write_multiplier_1h: Schema.NullOr(Schema.Number)
  })
).annotations({ identifier: "CacheBlock" })

export const ReasoningBlock = Schema.NullOr(Schema.Struct({ reasoningOutput: PriceComponent })).annotations({
  identifier: "ReasoningBlock"
})
