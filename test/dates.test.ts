/**
 * The one date parameter of the oracle API (issue 8): what it accepts, and impossible calendar dates refused rather
 * than rolled over into another day.
 */
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { DateOrInstantParam, InstantParam, parseIsoDate } from "../domain/dates.ts"

const accepted = (text: string, dateOnly = true) => {
  const parsed = parseIsoDate(text, dateOnly)
  if (Either.isLeft(parsed)) throw new Error(`${text} refused: ${parsed.left}`)
  return parsed.right.toISOString()
}
const refusal = (text: string, dateOnly = true) => {
  const parsed = parseIsoDate(text, dateOnly)
  if (Either.isRight(parsed)) throw new Error(`${text} accepted as ${parsed.right.toISOString()}`)
  return parsed.left
}

describe("oracle date parameters", () => {
  it("read a calendar date as midnight UTC and an instant with its offset", () => {
    expect(accepted("2026-02-28")).toBe("2026-02-28T00:00:00.000Z")
    expect(accepted("2024-02-29")).toBe("2024-02-29T00:00:00.000Z")
    expect(accepted("2026-01-01T00:00:00Z")).toBe("2026-01-01T00:00:00.000Z")
    expect(accepted("2026-01-01T09:30+02:00")).toBe("2026-01-01T07:30:00.000Z")
    expect(accepted("2026-01-01T23:59:59.123456789-05:30")).toBe("2026-01-02T05:29:59.123Z")
  })

  it("refuse impossible calendar dates and times instead of rolling them over", () => {
    expect(refusal("2026-02-30")).toContain("2026-02 has no day 30")
    expect(refusal("2026-09-31")).toContain("2026-09 has no day 31")
    expect(refusal("2025-02-29")).toContain("has no day 29")
    expect(refusal("2026-13-01")).toContain("no month 13")
    expect(refusal("2026-00-10")).toContain("no month 00")
    expect(refusal("2026-01-01T24:61Z")).toContain("is not a time of day")
    expect(refusal("2026-01-01T24:00:00Z")).toContain("is not a time of day")
    expect(refusal("2026-01-01T12:00:60Z")).toContain("is not a time of day")
    expect(refusal("2026-01-01T12:00:00+24:00")).toContain("is not a UTC offset")
    expect(refusal("2026-02-30T00:00:00Z")).toContain("has no day 30")
  })

  it("refuse what is not one of the accepted forms, naming the forms it accepts", () => {
    for (const text of ["yesterday", "2026-1-1", "2026-01-01T12:00:00", "2026-01-01 12:00:00Z", "1767225600", ""]) {
      expect(refusal(text), text).toContain("a date (YYYY-MM-DD")
    }
  })

  it("scu-at's instant form refuses a bare date, saying it lacks a time", () => {
    expect(refusal("2026-01-01", false)).toContain("has no time")
    expect(refusal("2026-02-30T00:00:00Z", false)).toContain("has no day 30")
    expect(accepted("2026-01-01T00:00:00Z", false)).toBe("2026-01-01T00:00:00.000Z")
  })

  it("are Schemas that decode to a Date and fail with the same message", () => {
    expect(Schema.decodeUnknownSync(DateOrInstantParam)("2026-03-01").toISOString()).toBe("2026-03-01T00:00:00.000Z")
    expect(() => Schema.decodeUnknownSync(DateOrInstantParam)("2026-02-30")).toThrow(/has no day 30/)
    expect(() => Schema.decodeUnknownSync(InstantParam)("2026-03-01")).toThrow(/has no time/)
  })
})
