/**
 * The Ledger over a test database, without the HTTP server: its own pool, the product's migrations, and identities
 * with personal accounts made the way sign-in makes them (rows in `identities` and `accounts`).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { fixedClock } from "../../layers/Test.ts"
import { Ledger } from "../../services/accounts/Ledger.ts"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import { pgClientLayer } from "../../services/platform/Database.ts"
import { Jobs } from "../../services/platform/Jobs.ts"
import { runMigrations } from "../../services/platform/Migrations.ts"
import { startLayer } from "./harness.ts"

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
const base32 = (length: number) => Array.from(randomBytes(length), (byte) => BASE32[byte % 32]).join("")

export interface TestIdentity {
  readonly cfId: string
  readonly email: string
  readonly wallet: string
  readonly accountId: string
}

/** A new identity with its personal account (balance zero). */
export const createIdentity = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const cfId = `cf_${base32(12)}`
  const email = `${cfId}@example.com`
  const wallet = `0x${randomBytes(20).toString("hex")}`
  yield* sql`
    INSERT INTO identities (cf_id, email, wallet_address, display_name, referral_code)
    VALUES (${cfId}, ${email}, ${wallet}, ${cfId}, ${`cf_ref_${base32(8)}`})`
  const [row] = yield* sql<{ id: string }>`INSERT INTO accounts (owner_cf_id, kind) VALUES (${cfId}, 'personal') RETURNING id`
  return { cfId, email, wallet, accountId: row!.id } satisfies TestIdentity
})

export const startLedger = async (url: string, env: Record<string, string> = {}) => {
  const layer = Layer.mergeAll(Ledger.Default, Jobs.Default).pipe(
    Layer.provideMerge(pgClientLayer({ url: Redacted.make(url), poolSize: 12, connectTimeoutMs: 5000 })),
    Layer.provideMerge(AppConfig.Default)
  )
  const started = await startLayer(layer, { LOG_LEVEL: "WARN", ...env })
  const run = <A, E>(effect: Effect.Effect<A, E, Ledger | Jobs | SqlClient.SqlClient | AppConfig>) =>
    started.run(effect.pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))
  await run(runMigrations)
  return { run, close: started.close }
}

/** Runs `effect` with the clock reading `at` (explicit instants for the cap windows and hold expiry). */
export const at = (instant: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withClock(effect, fixedClock(new Date(instant)))
