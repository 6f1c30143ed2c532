/**
 * Where a repository hands its results to the services: rows are decoded through their schemas, and whatever
 * cannot be is not a domain error. A stored row that fails its schema (corrupt or hand-edited data) or a
 * statement that returns no row where one must exist is a defect (500), never a value cast into shape; an
 * SqlError goes through `orDieUnlessUnavailable` (503 when the database is unreachable, else a defect).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Data, Effect, ParseResult, Schema } from "effect"
import { orDieUnlessUnavailable } from "./Database.ts"

type StorageFailure = SqlError | ParseResult.ParseError | Cause.NoSuchElementException

const isCorruptResult = (error: unknown): error is ParseResult.ParseError | Cause.NoSuchElementException =>
  ParseResult.isParseError(error) || Cause.isNoSuchElementException(error)

export const orDieAtRepository = <A, E, R>(
  effect: Effect.Effect<A, E | StorageFailure, R>
): Effect.Effect<A, Exclude<E, StorageFailure>, R> =>
  orDieUnlessUnavailable(effect).pipe(Effect.catchIf(isCorruptResult, (error) => Effect.die(error))) as Effect.Effect<
    A,
    Exclude<E, StorageFailure>,
    R
  >

/** Stored rows that decode one by one but do not fit together (a price row without its input price, say). */
export class CorruptStoredData extends Data.TaggedError("CorruptStoredData")<{ readonly message: string }> {}

/**
 * Every row of a statement decoded with `schema`, at the boundary (a row that does not decode is a defect): for a
 * service's one-off read whose statement is built where it is used. Reads used in several places are better named
 * `SqlSchema` queries of their own.
 */
export const decodedRows = <A, I, R, E>(
  schema: Schema.Schema<A, I>,
  statement: Effect.Effect<ReadonlyArray<unknown>, E, R>
): Effect.Effect<ReadonlyArray<A>, Exclude<E, StorageFailure>, R> =>
  orDieAtRepository(Effect.flatMap(statement, Schema.decodeUnknown(Schema.Array(schema))))
