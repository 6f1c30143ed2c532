/**
 * A request body's ParseError as the `issues[]` of a 422 (SPEC "Errors": every offending field, one issue each).
 * The same rules as src/http/errorTranslation.ts applies to HttpApi payloads (whose helper takes an
 * HttpApiDecodeError and lives above the domain), plus one for discriminated objects; kept here so the inbound
 * translators, which decode bodies themselves, report the same way.
 */
import { Either, ParseResult, Schema } from "effect"
import { ValidationFailed, type ValidationIssue } from "../../errors.ts"

const isStrictPrefix = (prefix: ReadonlyArray<unknown>, path: ReadonlyArray<unknown>) =>
  prefix.length < path.length && prefix.every((segment, i) => segment === path[i])

/** An optional or nullable field that failed is also reported against the union's other members. */
const isUnionNoise = (message: string) => /^Expected (undefined|null)\b/.test(message)

export const issuesOfParseError = (error: ParseResult.ParseError): ReadonlyArray<ValidationIssue> => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
    const path = issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)))
    return { param: path.join("."), path, message: issue.message, tag: issue._tag }
  })
  // A field that failed inside (`messages.0.content.1.text`) is also reported whole against the other members of
  // its union (`messages.0.content`: "Expected string"): the deeper issue is the one that helps.
  const deepest = all.filter((issue) => !all.some((other) => isStrictPrefix(issue.path, other.path)))
  // An object whose `type` is wrong (an image_url content part, a custom tool) is refused for that; its missing and
  // unexpected fields only follow from it.
  const isTypeField = (path: ReadonlyArray<string | number>) => path.length > 1 && path[path.length - 1] === "type"
  // A union member that matched an object's `type` (or takes it absent) and failed deeper explains the refusal; the
  // other members' complaints about that `type` are noise (an input item whose content part is an image).
  const matchedDeeper = (object: ReadonlyArray<string | number>) =>
    deepest.some((other) => isTypeField(other.path) && isStrictPrefix(object, other.path.slice(0, -1)))
  const typed = deepest.filter((issue) => !(isTypeField(issue.path) && matchedDeeper(issue.path.slice(0, -1))))
  const wrongType = typed.filter((issue) => (issue.tag === "Type" || issue.tag === "Composite") && isTypeField(issue.path)).map((issue) => issue.path.slice(0, -1))
  const relevant = typed.filter(
    (issue) => isTypeField(issue.path) || !wrongType.some((object) => isStrictPrefix(object, issue.path))
  )
  const kept = relevant.filter(
    (issue) =>
      !(isUnionNoise(issue.message) && relevant.some((other) => other !== issue && other.param === issue.param && !isUnionNoise(other.message)))
  )
  // One field is one issue.
  const params = [...new Set(kept.map((issue) => issue.param))]
  return params.map((param) => {
    const group = kept.filter((issue) => issue.param === param)
    return { param, path: group[0]!.path, message: messageOf(group) }
  })
}

const EXPECTED = /^Expected (.*), actual (.*)$/s

/**
 * The message of a field reported several times: a specific complaint (out of range, too many items, missing,
 * unexpected) over a type mismatch; a value every member of a union refused gets one message listing them all.
 */
const messageOf = (group: ReadonlyArray<{ readonly message: string; readonly tag: string }>): string => {
  const specific = group.find((issue) => issue.tag !== "Type")
  if (specific !== undefined) return shortened(specific)
  const alternatives = group.map((issue) => EXPECTED.exec(issue.message))
  if (group.length > 1 && alternatives.every((match) => match !== null)) {
    return `Expected ${alternatives.map((match) => match![1]).join(" or ")}, actual ${alternatives[0]![2]}`
  }
  return group[0]!.message
}

/** Effect lists every accepted key of an object with an unexpected one: past a handful that buries the point. */
const shortened = (issue: { readonly message: string; readonly tag: string }): string =>
  issue.tag === "Unexpected" && issue.message.length > 160 ? "is not a supported field" : issue.message

/**
 * How deep a request body may nest (objects and arrays): far more than any real conversation or tool schema needs,
 * and far less than would overflow a validator or a vendor's parser (a vendor that fails on it answers 5xx, which
 * rests the key for every other client).
 */
export const MAX_BODY_DEPTH = 64

/** Whether `value` nests deeper than `limit` levels; iterative, so any depth is measured safely. */
export const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (node === null || typeof node !== "object") continue
    if (depth > limit) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1])
    }
  }
  return false
}

/**
 * Decodes an untrusted body with `schema`: refused first when it nests deeper than MAX_BODY_DEPTH, and a body that
 * makes the validator itself throw (a value whose own `toString` is not a function, read where a union looks for its
 * discriminator) is refused as invalid, never answered with a 500.
 */
export const decodeBody = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (body: unknown): Either.Either<A, ValidationFailed> => {
    if (nestsDeeperThan(body, MAX_BODY_DEPTH)) {
      return Either.left(new ValidationFailed({ message: `The body nests deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`, param: "" }))
    }
    try {
      return Either.mapLeft(decode(body), (error) => ValidationFailed.fromIssues(issuesOfParseError(error)))
    } catch (error) {
      return Either.left(
        new ValidationFailed({
          message: `The body could not be validated: ${error instanceof Error ? error.message : String(error)}.`,
          param: ""
        })
      )
    }
  }
}
