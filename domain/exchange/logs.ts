/**
 * The rules of the console's request log and activity (docs/decisions.md "Console: logs and activity"), pure: page
 * bounds, the opaque keyset cursor over (created_at, id), the activity window and its UTC days.
 */
import { Either, Option } from "effect"
import { REQUEST_ID_PATTERN } from "../accounts/ids.ts"
import { ValidationFailed } from "../errors.ts"

export const LOG_PAGE_DEFAULT = 50
export const LOG_PAGE_MAX = 200
export const ACTIVITY_DEFAULT_DAYS = 30
export const ACTIVITY_MAX_DAYS = 92

const DAY_MS = 86_400_000

/**
 * Where a page ended: the last row's instant at the database's precision (microseconds, UTC) and its id. The client
 * only hands it back; the base64url wrapping says so.
 */
export interface LogCursor {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ` */
  readonly at: string
  readonly id: string
}

const CURSOR_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

const toBase64Url = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
const fromBase64Url = (text: string): string | undefined => {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined
  try {
    return atob(text.replace(/-/g, "+").replace(/_/g, "/"))
  } catch {
    return undefined
  }
}

export const encodeCursor = (cursor: LogCursor): string => toBase64Url(`1|${cursor.at}|${cursor.id}`)

export const decodeCursor = (text: string): Option.Option<LogCursor> => {
  const [version, at, id, ...rest] = (fromBase64Url(text) ?? "").split("|")
  return version === "1" && at !== undefined && id !== undefined && rest.length === 0 && CURSOR_AT.test(at) && REQUEST_ID_PATTERN.test(id)
    ? Option.some({ at, id })
    : Option.none()
}

const invalid = (param: string, message: string) => ValidationFailed.fromIssues([{ param, path: [param], message }])

/** A cursor the client sent, or the 422 naming `cursor`. */
export const parseCursor = (text: string | undefined): Either.Either<LogCursor | undefined, ValidationFailed> =>
  text === undefined
    ? Either.right(undefined)
    : Option.match(decodeCursor(text), {
      onNone: () => Either.left(invalid("cursor", "not a cursor this endpoint gave (pass `nextCursor` back unchanged)")),
      onSome: (cursor) => Either.right(cursor)
    })

/** `from` must come before `to` when both are given. */
export const checkRange = (from: Date | undefined, to: Date | undefined): Either.Either<void, ValidationFailed> =>
  from !== undefined && to !== undefined && from.getTime() >= to.getTime()
    ? Either.left(invalid("from", "must be before `to`"))
    : Either.right(undefined)

export const startOfUtcDay = (at: Date): Date => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS)

/** `2026-11-25` */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10)

export interface ActivityWindow {
  /** Inclusive. */
  readonly from: Date
  /** Exclusive. */
  readonly to: Date
}

/**
 * The window an activity query covers: `days` whole UTC days ending with today (default 30), or `from` (inclusive) to
 * `to` (exclusive, default now), at most 92 days long. `days` with `from`/`to` is refused: one of them would be ignored.
 */
export const activityWindow = (
  query: { readonly from?: Date | undefined; readonly to?: Date | undefined; readonly days?: number | undefined },
  now: Date
): Either.Either<ActivityWindow, ValidationFailed> => {
  if (query.days !== undefined && (query.from !== undefined || query.to !== undefined)) {
    return Either.left(invalid("days", "give either `days` or `from`/`to`, not both"))
  }
  if (query.from === undefined && query.to === undefined) {
    const to = new Date(startOfUtcDay(now).getTime() + DAY_MS)
    return Either.right({ from: new Date(to.getTime() - (query.days ?? ACTIVITY_DEFAULT_DAYS) * DAY_MS), to })
  }
  const to = query.to ?? now
  const from = query.from ?? new Date(to.getTime() - ACTIVITY_DEFAULT_DAYS * DAY_MS)
  if (from.getTime() >= to.getTime()) return Either.left(invalid("from", "must be before `to`"))
  if (to.getTime() - from.getTime() > ACTIVITY_MAX_DAYS * DAY_MS) {
    return Either.left(invalid("from", `the window is at most ${ACTIVITY_MAX_DAYS} days`))
  }
  return Either.right({ from, to })
}

/** Every UTC day the window touches, in order. */
export const daysOf = (window: ActivityWindow): ReadonlyArray<string> => {
  const days: Array<string> = []
  for (let at = startOfUtcDay(window.from).getTime(); at < window.to.getTime(); at += DAY_MS) days.push(utcDay(new Date(at)))
  return days
}
