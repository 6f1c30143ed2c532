/**
 * The layers a test composes in place of the live ones (DESIGN.md section 9, "Layer-swapped harnesses"): the services
 * run unchanged above them. For this project's suites and for a program that embeds the services and tests its own
 * code against them. Time needs no layer here: services read it through `Clock`, so `@effect/vitest`'s `it.effect`
 * (whose TestClock starts at the epoch and moves only by `TestClock.adjust`) drives every expiry, cooldown and window;
 * `FixedClock` pins it for a rule checked at one instant.
 */
import { RateLimiter } from "@effect/experimental"
import { Clock, ConfigProvider, Duration, Effect, Layer, Option, Redacted, Ref, Stream } from "effect"
import { type CodePurpose, codeMessage } from "../domain/accounts/emailCode.ts"
import type { ChatEvent, ChatRequest } from "../domain/exchange/canonical.ts"
import { Mailer } from "../services/accounts/Mailer.ts"
import { ChainFailure, Registry, type RevisionHeader } from "../services/chain/Registry.ts"
import type { UpstreamTarget } from "../services/exchange/providers/index.ts"
import { type Reply, UpstreamCalls } from "../services/exchange/UpstreamCalls.ts"
import { UpstreamFailure } from "../services/exchange/upstreamHttp.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { pgClientLayer } from "../services/platform/Database.ts"
import { runMigrations } from "../services/platform/Migrations.ts"
import { RateLimits } from "../services/platform/RateLimits.ts"

/** Configuration as the environment would give it: the service's variables from a map (the rest at their defaults). */
export const ConfigFrom = (env: Record<string, string>): Layer.Layer<never> =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

/** AppConfig read from `env` alone, nothing from the process's environment. */
export const TestAppConfig = (env: Record<string, string> = {}) =>
  AppConfig.Default.pipe(Layer.provide(ConfigFrom(env)))

/** A clock that always reads `at` (its `sleep` still waits for real). */
export const fixedClock = (at: Date): Clock.Clock => {
  const real = Clock.make()
  const millis = at.getTime()
  const nanos = BigInt(millis) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    unsafeCurrentTimeNanos: () => nanos,
    currentTimeMillis: Effect.succeed(millis),
    currentTimeNanos: Effect.succeed(nanos),
    sleep: (duration: Duration.Duration) => real.sleep(duration)
  }
}

/** Every service above reads `at` as now. */
export const FixedClock = (at: Date): Layer.Layer<never> => Layer.setClock(fixedClock(at))

/** One message the services sent: a sign-in or confirmation code (with its code), or any other mail. */
export interface CapturedMail {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly code: { readonly code: string; readonly purpose: CodePurpose } | undefined
  readonly at: Date
}

/** What was "sent" while a `MailerCapture` stood in for the mail server. */
export class MailCapture extends Effect.Service<MailCapture>()("MailCapture", {
  effect: Effect.map(Ref.make<ReadonlyArray<CapturedMail>>([]), (sent) => ({
    /** Every message, oldest first. */
    sent: Ref.get(sent),
    /** The messages to one address, oldest first. */
    to: (address: string) => Effect.map(Ref.get(sent), (all) => all.filter((mail) => mail.to === address)),
    record: (mail: CapturedMail) => Ref.update(sent, (all) => [...all, mail])
  }))
}) {}

/** The Mailer, keeping messages in MailCapture instead of sending them (no SMTP, no outbox table). */
export const MailerCapture: Layer.Layer<Mailer | MailCapture> = Layer.effect(
  Mailer,
  Effect.map(MailCapture, (capture) => {
    const keep = (to: string, message: { readonly subject: string; readonly text: string }, code: CapturedMail["code"]) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => capture.record({ to, ...message, code, at: new Date(now) }))
    return Mailer.make({
      sendCode: (to, code, purpose) => keep(to, codeMessage(code, purpose), { code, purpose }),
      send: (to, message) => keep(to, message, undefined),
      latestKeptCode: (to) =>
        Effect.map(capture.to(to), (mails) =>
          Option.map(
            Option.fromNullable([...mails].reverse().find((mail) => mail.code !== undefined)),
            (mail) => ({ code: mail.code!.code, createdAt: mail.at })
          )),
      delivers: true
    })
  })
).pipe(Layer.provideMerge(MailCapture.Default))

/** The per-client rate limits, counted in this process's memory (the store without Redis). */
export const RateLimitsInMemory: Layer.Layer<RateLimits, never, AppConfig> = RateLimits.Default.pipe(
  Layer.provide(RateLimiter.layer),
  Layer.provide(RateLimiter.layerStoreMemory)
)

/** A SqlClient on the database at `url` with the product's migrations applied. */
export const TestDatabase = (url: string, poolSize = 4) =>
  Layer.effectDiscard(runMigrations).pipe(
    Layer.provideMerge(pgClientLayer({ url: Redacted.make(url), poolSize, connectTimeoutMs: 5000 }))
  )

/** One call the exchange made to a vendor, as a script sees it. */
export interface ScriptedCall {
  readonly chat: ChatRequest
  readonly target: UpstreamTarget
  readonly stream: boolean
}

/**
 * What a scripted vendor answers: a reply's events (as a whole reply, or as a stream of them when the call asked for
 * one), or a failure as the HTTP client reports a vendor's (a status with its Retry-After and body, a timeout...).
 */
export type ScriptedAnswer =
  | { readonly events: ReadonlyArray<ChatEvent> }
  | { readonly failure: ConstructorParameters<typeof UpstreamFailure>[0] }

/**
 * The vendors replaced by `script` (no sockets): each call is answered by what the script says for it. Routing, key
 * pools, cooldowns, failover and settlement run unchanged above it.
 */
export const ScriptedUpstream = (script: (call: ScriptedCall) => ScriptedAnswer): Layer.Layer<UpstreamCalls> =>
  Layer.succeed(
    UpstreamCalls,
    UpstreamCalls.make({
      call: (chat, target, stream) =>
        Effect.suspend(() => {
          const answer = script({ chat, target, stream })
          if ("failure" in answer) return Effect.fail(new UpstreamFailure(answer.failure))
          return Effect.succeed<Reply>(
            stream ? { _tag: "Stream", events: Stream.fromIterable(answer.events) } : { _tag: "Whole", events: answer.events }
          )
        })
    })
  )

const STUB_REGISTRY = "0x00000000000000000000000000000000000c0de5" as const

/**
 * The registry as a chain holding `revisions` (versions 1..n, in order) at block `blockNumber`, for the services that
 * only read it (the chain sync, verification): reads answer from the list, `publish` and the confirmation calls die
 * (nothing may write through a stub), and it has no RPC client.
 */
export const ChainStub = (
  revisions: ReadonlyArray<RevisionHeader>,
  options: { readonly chainId?: number; readonly blockNumber?: bigint } = {}
): Layer.Layer<Registry> => {
  const writes = (what: string) => () => Effect.die(new Error(`the chain stub only reads: ${what} is not available`))
  return Layer.succeed(
    Registry,
    Registry.make({
      endpoint: {
        rpcUrl: "stub:",
        chainId: options.chainId ?? 31337,
        registryAddress: STUB_REGISTRY,
        publisherKey: Option.none(),
        confirmations: 1,
        embedded: false
      },
      client: new Proxy({}, {
        get: () => {
          throw new Error("the chain stub has no RPC client")
        }
      }) as Registry["client"],
      lastRevisionVersion: Effect.succeed(revisions.length),
      getRevision: (version) =>
        version >= 1 && version <= revisions.length
          ? Effect.succeed(revisions[version - 1]!)
          : Effect.fail(new ChainFailure({ reason: "contract_rejected", message: `the registry holds no revision ${version}` })),
      deployedCodeHash: Effect.succeed(Option.some(`0x${"c0de".repeat(16)}` as const)),
      latestBlock: Effect.succeed({ number: options.blockNumber ?? 100n, timestamp: 0n } as Effect.Effect.Success<Registry["latestBlock"]>),
      publish: writes("publish"),
      awaitConfirmation: writes("awaitConfirmation"),
      receiptOf: writes("receiptOf")
    })
  )
}

