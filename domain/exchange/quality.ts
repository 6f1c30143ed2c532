/**
 * The per-model quality score the routing engine weighs against price (DESIGN.md section 10 "Routing"), read from
 * data/exchange/quality.yaml. Every score carries its source; a model the file does not list scores DEFAULT_QUALITY.
 */
import { Either, ParseResult, Schema } from "effect"
import { parse as parseYaml } from "yaml"

export const QUALITY_PATH = "data/exchange/quality.yaml"

/** A model without a recorded score sits in the middle: neither favoured nor penalised by `better`. */
export const DEFAULT_QUALITY = 50

export interface QualityScore {
  readonly score: number
  readonly source: string
}

const QualityFile = Schema.Struct({
  sources: Schema.Record({ key: Schema.String, value: Schema.String.pipe(Schema.minLength(1)) }),
  models: Schema.Record({
    key: Schema.String.pipe(Schema.pattern(/^[a-z0-9-]+\/[a-z0-9][a-z0-9.:-]*$/)),
    value: Schema.Struct({
      score: Schema.Number.pipe(Schema.between(0, 100)),
      source: Schema.String
    })
  })
})

/** The file's scores by model key, or a sentence naming what is wrong (an unknown source is wrong). */
export const parseQuality = (text: string): Either.Either<ReadonlyMap<string, QualityScore>, string> => {
  let raw: unknown
  try {
    raw = parseYaml(text)
  } catch (e) {
    return Either.left(`not YAML: ${(e as Error).message}`)
  }
  return Either.flatMap(
    Either.mapLeft(Schema.decodeUnknownEither(QualityFile)(raw), (error) => ParseResult.TreeFormatter.formatErrorSync(error)),
    (file) => {
      const unknown = Object.entries(file.models).find(([, entry]) => file.sources[entry.source] === undefined)
      if (unknown !== undefined) return Either.left(`models.${unknown[0]}: source "${unknown[1].source}" is not under sources`)
      return Either.right(
        new Map(Object.entries(file.models).map(([key, entry]) => [key, { score: entry.score, source: file.sources[entry.source]! }]))
      )
    }
  )
}

export const qualityOf = (scores: ReadonlyMap<string, QualityScore>, modelKey: string): number =>
  scores.get(modelKey)?.score ?? DEFAULT_QUALITY
