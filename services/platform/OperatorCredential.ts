/**
 * The local operator credential: while the service runs on embedded state (the PGlite database or the anvil chain
 * under DATA_DIR, which one process at a time may open), the operator command line cannot open that state itself.
 * The service then writes DATA_DIR/operator.json (owner-only) with its process id, its loopback URL and a token
 * drawn at start; the command line finds it and sends its command through the operator API with that token, which
 * the maintainer routes accept as they accept MAINTAINER_TOKEN. The file goes when the service stops; one left by a
 * process that is gone is ignored.
 */
import { Data, Effect, Option, Redacted, Schema } from "effect"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { processAlive } from "./processes.ts"

export const operatorFile = (dataDir: string) => Path.join(Path.resolve(dataDir), "operator.json")

const OperatorFile = Schema.parseJson(
  Schema.Struct({
    pid: Schema.Int,
    url: Schema.String.pipe(Schema.pattern(/^http:\/\/\S+$/)),
    token: Schema.String.pipe(Schema.minLength(32))
  })
)
export type RunningService = typeof OperatorFile.Type

export class OperatorFileUnreadable extends Data.TaggedError("OperatorFileUnreadable")<{ readonly message: string }> {}

const digest = (text: string) => createHash("sha256").update(text).digest()

export class OperatorCredential extends Effect.Service<OperatorCredential>()("OperatorCredential", {
  sync: () => {
    const token = Redacted.make(randomBytes(32).toString("base64url"))
    return {
      token,
      /** Whether a presented Bearer token is this process's credential (in constant time). */
      matches: (presented: Redacted.Redacted): boolean => timingSafeEqual(digest(Redacted.value(presented)), digest(Redacted.value(token)))
    } as const
  }
}) {}

/** Writes the file for the lifetime of the scope (owner-only: it holds the token), then removes it if still ours. */
export const publishOperatorFile = (dataDir: string, url: string) =>
  Effect.gen(function* () {
    const credential = yield* OperatorCredential
    const file = operatorFile(dataDir)
    const contents = JSON.stringify({ pid: process.pid, url, token: Redacted.value(credential.token) })
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        Fs.mkdirSync(Path.dirname(file), { recursive: true })
        const temporary = `${file}.${process.pid}.tmp`
        Fs.writeFileSync(temporary, contents, { mode: 0o600 })
        Fs.chmodSync(temporary, 0o600)
        Fs.renameSync(temporary, file)
      }),
      () =>
        Effect.sync(() => {
          try {
            if (Fs.readFileSync(file, "utf8") === contents) Fs.rmSync(file, { force: true })
          } catch {
            // Already gone.
          }
        })
    )
  })

/**
 * The service running on `dataDir`, if one is: None when no file is there or its process is gone. A file that is not
 * ours, or that others may read, fails: its token must not be trusted, nor sent anywhere.
 */
export const findRunningService = (dataDir: string): Effect.Effect<Option.Option<RunningService>, OperatorFileUnreadable> =>
  Effect.gen(function* () {
    const file = operatorFile(dataDir)
    const stat = yield* Effect.try({ try: () => Option.some(Fs.statSync(file)), catch: () => Option.none<Fs.Stats>() }).pipe(
      Effect.merge
    )
    if (Option.isNone(stat)) return Option.none()
    if ((stat.value.mode & 0o077) !== 0) {
      return yield* new OperatorFileUnreadable({ message: `${file} may be read by others (mode ${(stat.value.mode & 0o777).toString(8)}): remove it; the service writes it owner-only` })
    }
    const text = yield* Effect.try({
      try: () => Fs.readFileSync(file, "utf8"),
      catch: (error) => new OperatorFileUnreadable({ message: `${file} cannot be read: ${(error as Error).message}` })
    })
    const running = yield* Schema.decodeUnknown(OperatorFile)(text).pipe(
      Effect.mapError(() => new OperatorFileUnreadable({ message: `${file} is not the service's operator file: remove it` }))
    )
    return processAlive(running.pid) ? Option.some(running) : Option.none()
  })
