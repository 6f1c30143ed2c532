/**
 * Sign-in codes in time (SPEC "Authentication": a code lives 10 minutes, takes 5 attempts, and an address gets at
 * most 5 codes an hour), driven by TestClock over the live EmailCodes service on a scratch PostgreSQL database, with
 * the mail captured in memory (layers/Test.ts). Nothing is back-dated and nothing sleeps.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, TestClock } from "effect"
import { CODES_PER_ADDRESS } from "../domain/accounts/policies.ts"
import { CODE_LIFETIME_MS, MAX_CODE_ATTEMPTS } from "../domain/accounts/formats.ts"
import { MailCapture, MailerCapture, TestAppConfig } from "../layers/Test.ts"
import { EmailCodes } from "../services/accounts/EmailCodes.ts"
import { ScratchDatabase } from "./support/database.ts"

const Codes = EmailCodes.Default.pipe(
  Layer.provideMerge(MailerCapture),
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

/** Issues a sign-in code to `email` and answers the code the captured mail carries. */
const issued = (email: string) =>
  Effect.gen(function* () {
    yield* (yield* EmailCodes).issue({ email, purpose: "sign_in", clientIp: undefined })
    const mails = yield* (yield* MailCapture).to(email)
    return mails[mails.length - 1]!.code!.code
  })

const tryCode = (email: string, code: string) =>
  Effect.flatMap(EmailCodes, (codes) => Effect.flatMap(codes.check({ email, purpose: "sign_in" }, code), (consume) => consume)).pipe(
    Effect.as("accepted" as const),
    Effect.catchTag("Unauthorized", (refused) => Effect.succeed(refused.message))
  )

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0")

layer(Codes, { timeout: 60_000 })("sign-in codes in time", (it) => {
  it.effect("a code is accepted until 10 minutes after it was sent, and not at 10 minutes", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-03-01T09:00:00Z"))
      const early = yield* issued("early@example.com")
      const late = yield* issued("late@example.com")
      yield* TestClock.adjust(CODE_LIFETIME_MS - 1)
      expect(yield* tryCode("early@example.com", early)).toBe("accepted")
      // Used once: not again.
      expect(yield* tryCode("early@example.com", early)).toMatch(/expired or was used/)
      yield* TestClock.adjust(1)
      expect(yield* tryCode("late@example.com", late)).toMatch(/expired or was used/)
    }))

  it.effect("five attempts per code, counted whatever their outcome; the right code after them is refused", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-03-01T10:00:00Z"))
      const code = yield* issued("tries@example.com")
      const answers: Array<string> = []
      for (let i = 0; i < MAX_CODE_ATTEMPTS; i++) answers.push(yield* tryCode("tries@example.com", wrong(code)))
      expect(answers).toEqual([
        "Wrong code; 4 attempts left.",
        "Wrong code; 3 attempts left.",
        "Wrong code; 2 attempts left.",
        "Wrong code; 1 attempt left.",
        "Wrong code, and no attempts left. Request a new one."
      ])
      expect(yield* tryCode("tries@example.com", code)).toBe(`This code was tried ${MAX_CODE_ATTEMPTS} times. Request a new one.`)
      // A new code starts over.
      expect(yield* tryCode("tries@example.com", yield* issued("tries@example.com"))).toBe("accepted")
    }))

  it.effect("an address gets five codes an hour: the sixth is refused until the first leaves the window", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-03-01T11:00:00Z"))
      const codes = yield* EmailCodes
      const request = { email: "busy@example.com", purpose: "sign_in" as const, clientIp: undefined }
      yield* codes.issue(request)
      yield* TestClock.adjust("20 minutes")
      for (let i = 0; i < 4; i++) yield* codes.issue(request)
      const refused = yield* Effect.flip(codes.issue(request))
      expect(refused._tag).toBe("RateLimited")
      // The first code leaves the hour's window 40 minutes from now.
      expect(refused.details).toEqual({ retryAfterSeconds: 40 * 60 })
      yield* TestClock.adjust("39 minutes")
      expect((yield* Effect.flip(codes.issue(request)))._tag).toBe("RateLimited")
      yield* TestClock.adjust("1 minute")
      yield* codes.issue(request)
      expect((yield* (yield* MailCapture).to("busy@example.com")).length).toBe(6)
    }))
})

/** What the service logged while its layer was built (the start). */
const startLog: Array<{ readonly level: string; readonly message: string }> = []
const capture = Logger.make(({ logLevel, message }) => {
  startLog.push({ level: logLevel.label, message: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
})

const CodesWithRateLimitsOff = EmailCodes.Default.pipe(
  Layer.provideMerge(MailerCapture),
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig({ RATE_LIMIT_ENABLED: "false" })),
  Layer.provide(Logger.replace(Logger.defaultLogger, capture))
)

// The code limits are abuse protection, not the request rates RATE_LIMIT_ENABLED is for: they stay, and the start says so.
layer(CodesWithRateLimitsOff, { timeout: 60_000 })("sign-in codes with RATE_LIMIT_ENABLED=false", (it) => {
  it.effect("the start logs that the sign-in limits still apply, naming them", () =>
    Effect.sync(() => {
      const lines = startLog.filter((line) => line.message.startsWith("RATE_LIMIT_ENABLED=false"))
      expect(lines).toEqual([
        {
          level: "INFO",
          message:
            "RATE_LIMIT_ENABLED=false switches off the oracle and inference request rates only; the sign-in limits still apply: at most 5 e-mail codes per address and 20 per client address per hour, 10 CF IDs per client address per 24 hours"
        }
      ])
    }))

  it.effect("an address still gets five codes an hour", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-03-02T11:00:00Z"))
      const codes = yield* EmailCodes
      const request = { email: "flagged-off@example.com", purpose: "sign_in" as const, clientIp: "203.0.113.77" }
      for (let i = 0; i < CODES_PER_ADDRESS.limit; i++) yield* codes.issue(request)
      const refused = yield* Effect.flip(codes.issue(request))
      expect(refused._tag).toBe("RateLimited")
      expect(refused.details).toEqual({ retryAfterSeconds: 60 * 60 })
    }))
})
