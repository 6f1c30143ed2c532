/**
 * Methodology records (data/methodology.yaml): the definitions behind each methodologyVersion.
 */
import { Either, ParseResult, Schema } from "effect"
import { PositiveIntText, BooleanText } from "../catalog/card.ts"

const RawRecord = Schema.Struct({
  version: PositiveIntText,
  title: Schema.String,
  meanType: Schema.String,
  weighting: Schema.String,
  familyRule: Schema.Struct({
    oneFamilyOneSlot: BooleanText,
    familyKeyScheme: Schema.String,
    representativeSelection: Schema.String
  }),
  referenceWorkload: Schema.Struct({ inputTokens: PositiveIntText, outputTokens: PositiveIntText }),
  cacheReasoningInIndex: BooleanText,
  formulaSummary: Schema.String,
  rationale: Schema.String,
  specUrl: Schema.String
})

export const RawMethodologies = Schema.Struct({ methodologies: Schema.Array(RawRecord).pipe(Schema.minItems(1)) })
export type MethodologyRecord = typeof RawRecord.Type

export const checkMethodologies = (source: string, raw: unknown): Either.Either<ReadonlyArray<MethodologyRecord>, string> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(RawMethodologies)(raw),
    (error) => `${source}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
  ).pipe(Either.map((file) => [...file.methodologies].sort((a, b) => a.version - b.version)))
