/**
 * Family decisions (data/decisions.yaml): dated, published rulings on family/version edge cases.
 * `note` records how the cards were drawn up; `exclude` keeps a model out of the index; `prefer` keeps a model
 * in its family's slot although a later version exists.
 */
import { Either, ParseResult, Schema } from "effect"
import { DateText, FamilyKey, ModelId } from "./card.ts"

export const DecisionEffect = Schema.Literal("note", "exclude", "prefer")

const RawDecision = Schema.Struct({
  id: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{2,95}$/)),
  decidedOn: DateText,
  subject: Schema.Union(FamilyKey, ModelId),
  effect: DecisionEffect,
  model: Schema.optional(ModelId),
  validFrom: Schema.optional(DateText),
  validUntil: Schema.optional(DateText),
  ruling: Schema.NonEmptyTrimmedString,
  rationale: Schema.NonEmptyTrimmedString
})

export const RawDecisions = Schema.Struct({ decisions: Schema.Array(RawDecision) }).annotations({
  parseOptions: { errors: "all" }
})

export interface FamilyDecision {
  readonly id: string
  readonly decidedOn: Date
  readonly subject: string
  readonly effect: "note" | "exclude" | "prefer"
  readonly model: string | null
  readonly validFrom: Date | null
  readonly validUntil: Date | null
  readonly ruling: string
  readonly rationale: string
}

/** Whether a decision binds at instant `t`: from its validFrom (else its date) until its validUntil. */
export const decisionActiveAt = (decision: FamilyDecision, t: Date): boolean =>
  (decision.validFrom ?? decision.decidedOn) <= t && (decision.validUntil === null || t < decision.validUntil)

export const checkDecisions = (source: string, raw: unknown): Either.Either<ReadonlyArray<FamilyDecision>, ReadonlyArray<string>> => {
  const decoded = Schema.decodeUnknownEither(RawDecisions)(raw)
  if (Either.isLeft(decoded)) {
    return Either.left(
      ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map(
        (issue) => `${source}: ${issue.path.map(String).join(".") || "(file)"}: ${issue.message}`
      )
    )
  }
  const problems: Array<string> = []
  const ids = new Set<string>()
  const decisions = decoded.right.decisions.map((d): FamilyDecision => {
    if (ids.has(d.id)) problems.push(`${source}: decision ${d.id}: declared twice`)
    ids.add(d.id)
    if (d.effect !== "note" && d.model === undefined) problems.push(`${source}: decision ${d.id}: effect ${d.effect} needs a model`)
    if (d.validFrom !== undefined && d.validUntil !== undefined && d.validUntil <= d.validFrom) {
      problems.push(`${source}: decision ${d.id}: validUntil must be after validFrom`)
    }
    return {
      id: d.id,
      decidedOn: d.decidedOn,
      subject: d.subject,
      effect: d.effect,
      model: d.model ?? null,
      validFrom: d.validFrom ?? null,
      validUntil: d.validUntil ?? null,
      ruling: d.ruling,
      rationale: d.rationale
    }
  })
  return problems.length > 0 ? Either.left(problems) : Either.right(decisions)
}
