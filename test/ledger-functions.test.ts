/**
 * The ledger's functions in force live in one file (migrations/repeatable/ledger.ts), applied by a repeatable
 * migration whenever its text changes: an empty database migrated holds exactly that file's functions, the same
 * ones (byte for byte) the numbered migrations left; a changed text is applied again and its hash recorded, an
 * unchanged one is not; two replicas applying at once apply it once. And the outcome strings the SQL answers are the
 * TypeScript lists the repository decodes with (domain/accounts/ledgerOutcomes.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  LEDGER_FUNCTION_OUTCOMES,
  RELEASE_OUTCOMES,
  ReleaseOutcome,
  RESERVE_OUTCOMES,
  ReserveOutcome,
  SETTLE_OUTCOMES,
  SettleOutcome
} from "../domain/accounts/ledgerOutcomes.ts"
import { fixedClock } from "../layers/Test.ts"
import { migrations, repeatable } from "../migrations/index.ts"
import { ledgerFunctions, ledgerRevision } from "../migrations/repeatable/ledger.ts"
import { pgClientLayer } from "../services/platform/Database.ts"
import {
  applyRepeatableMigrations,
  repeatableHash,
  runMigrations,
  runNumberedMigrations
} from "../services/platform/Migrations.ts"
import { availableBackend, type Backend, createTestDatabase, type TestDatabase } from "./support/database.ts"

// ---------------------------------------------------------------------------
// Reading the SQL text

/** Each function the text defines, with its body (the text between its `$$` quotes, as PostgreSQL stores it). */
const definedFunctions = (text: string): Map<string, string> => {
  const functions = new Map<string, string>()
  const create = /CREATE\s+OR\s+REPLACE\s+FUNCTION\s+([a-z_][a-z0-9_]*)\s*\(/gi
  for (let match = create.exec(text); match !== null; match = create.exec(text)) {
    const open = text.indexOf("$$", match.index)
    const close = text.indexOf("$$", open + 2)
    if (open < 0 || close < 0) throw new Error(`no $$ body for ${match[1]}`)
    functions.set(match[1]!.toLowerCase(), text.slice(open + 2, close))
    create.lastIndex = close + 2
  }
  return functions
}

/** The outcome literals a body writes: every `'name'::text`. */
const outcomeLiterals = (body: string): Array<string> =>
  [...new Set(Array.from(body.matchAll(/'([a-z_]+)'::text/g), (match) => match[1]!))].sort()

/** Where the SQL's outcomes and the TypeScript lists differ: empty when they agree. */
const outcomeMismatches = (
  text: string,
  expected: Readonly<Record<string, ReadonlyArray<string>>> = LEDGER_FUNCTION_OUTCOMES
): Array<string> => {
  const functions = definedFunctions(text)
  const names = [...new Set([...functions.keys(), ...Object.keys(expected)])].sort()
  return names.flatMap((name) => {
    const body = functions.get(name)
    const listed = expected[name]
    if (body === undefined) return [`${name}: listed in TypeScript, not defined in the SQL`]
    if (listed === undefined) return [`${name}: defined in the SQL, its outcomes not listed in TypeScript`]
    const inSql = outcomeLiterals(body)
    const inTs = [...new Set(listed)].sort()
    return JSON.stringify(inSql) === JSON.stringify(inTs)
      ? []
      : [`${name}: the SQL answers ${inSql.join(", ") || "none"}, TypeScript lists ${inTs.join(", ") || "none"}`]
  })
}

/** A body compared with its whitespace collapsed (indentation and line breaks are not behaviour). */
const normalise = (body: string) => body.replace(/\s+/g, " ").trim()

describe("the outcome names shared by the SQL and TypeScript", () => {
  it("the ledger's SQL answers exactly the outcomes TypeScript lists, function by function", () => {
    expect(outcomeMismatches(ledgerFunctions)).toEqual([])
    expect([...definedFunctions(ledgerFunctions).keys()].sort()).toEqual(
      ["ledger_release", "ledger_reserve", "ledger_reserve_checked", "ledger_settle_batch"]
    )
  })

  it("the repository's Schemas are those lists", () => {
    expect(ReserveOutcome.literals).toEqual(RESERVE_OUTCOMES)
    expect(SettleOutcome.literals).toEqual(SETTLE_OUTCOMES)
    expect(ReleaseOutcome.literals).toEqual(RELEASE_OUTCOMES)
  })

  it("a difference either way is found (synthetic cases)", () => {
    // An outcome renamed in the SQL only.
    const renamed = ledgerFunctions.replace("'not_live'::text", "'not_alive'::text")
    expect(renamed).not.toBe(ledgerFunctions)
    expect(outcomeMismatches(renamed)).toEqual([
      "ledger_release: the SQL answers no_hold, not_alive, released, TypeScript lists no_hold, not_live, released"
    ])
    // An outcome added in TypeScript only.
    expect(
      outcomeMismatches(ledgerFunctions, { ...LEDGER_FUNCTION_OUTCOMES, ledger_settle_batch: [...SETTLE_OUTCOMES, "partly_settled"] })
    ).toEqual([
      "ledger_settle_batch: the SQL answers already_settled, no_account, no_hold, settled, TypeScript lists already_settled, no_account, no_hold, partly_settled, settled"
    ])
    // A new function whose outcomes nobody listed, and a listed one gone.
    const extra = `${ledgerFunctions}
    CREATE OR REPLACE FUNCTION ledger_extend(p_request text) RETURNS TABLE (outcome text) LANGUAGE plpgsql AS $$
    BEGIN
      RETURN QUERY SELECT 'extended'::text;
    END
    $$;`
    expect(outcomeMismatches(extra)).toEqual(["ledger_extend: defined in the SQL, its outcomes not listed in TypeScript"])
    const { ledger_release: _, ...withoutRelease } = LEDGER_FUNCTION_OUTCOMES
    expect(outcomeMismatches(ledgerFunctions, { ...withoutRelease, ledger_refund: ["refunded"] })).toEqual([
      "ledger_refund: listed in TypeScript, not defined in the SQL",
      "ledger_release: defined in the SQL, its outcomes not listed in TypeScript"
    ])
  })
})

// ---------------------------------------------------------------------------
// Applying the file

interface StoredFunction {
  readonly proname: string
  readonly xmin: string
  readonly definition: string
  readonly prosrc: string
}

/** The database's ledger_* functions by name: their full definition, source and row version. */
const storedFunctions = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<StoredFunction>`
    SELECT p.proname, p.xmin::text AS xmin, pg_get_functiondef(p.oid) AS definition, p.prosrc
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = current_schema() AND p.proname LIKE 'ledger\\_%'`
  return new Map(rows.map((row) => [row.proname, row]))
})

const recorded = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ name: string; revision: number; sha256: string; appliedAt: Date }>`SELECT name, revision, sha256, applied_at FROM repeatable_migrations ORDER BY name`
)

const at = (iso: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.withClock(effect, fixedClock(new Date(iso)))

const connect = async (database: TestDatabase, scope: Scope.Scope) => {
  const context = await Effect.runPromise(
    Layer.buildWithScope(pgClientLayer({ url: Redacted.make(database.url), poolSize: 2, connectTimeoutMs: 5000 }), scope)
  )
  return <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    Effect.runPromise(effect.pipe(Effect.provide(context), Logger.withMinimumLogLevel(LogLevel.Warning)))
}

const backends: ReadonlyArray<Backend> = availableBackend() === "postgres" ? ["postgres", "pglite"] : ["pglite"]

describe.each(backends)("the repeatable ledger migration on %s", (backend) => {
  let database: TestDatabase
  let scope: Scope.CloseableScope
  let run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>

  beforeAll(async () => {
    database = await createTestDatabase(backend)
    scope = Effect.runSync(Scope.make())
    run = await connect(database, scope)
  })

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database.close()
  })

  it("an empty database migrated holds the file's functions, byte for byte those the numbered migrations left", async () => {
    const numbered = await run(runNumberedMigrations)
    expect(numbered).toHaveLength(Object.keys(migrations).length)
    const fromHistory = await run(storedFunctions)
    const inFile = definedFunctions(ledgerFunctions)
    // Every ledger function in force is in the file, and nothing else (ledger_settle was dropped by 0019).
    expect([...fromHistory.keys()].sort()).toEqual([...inFile.keys()].sort())

    expect(await run(at("2026-11-29T00:00:00Z")(applyRepeatableMigrations()))).toEqual(["ledger"])
    const applied = await run(storedFunctions)
    for (const [name, body] of inFile) {
      expect(normalise(applied.get(name)!.prosrc), name).toBe(normalise(body))
      // Applying the file changed nothing in force: the same definition as the history's, to the byte.
      expect(applied.get(name)!.definition, name).toBe(fromHistory.get(name)!.definition)
    }
    expect(await run(recorded)).toEqual([
      { name: "ledger", revision: ledgerRevision, sha256: repeatableHash(ledgerFunctions), appliedAt: new Date("2026-11-29T00:00:00Z") }
    ])

    // A later start (the whole migration, as at boot) finds everything current and touches nothing.
    expect(await run(at("2026-11-30T00:00:00Z")(runMigrations))).toEqual([])
    expect(await run(recorded)).toEqual([
      { name: "ledger", revision: ledgerRevision, sha256: repeatableHash(ledgerFunctions), appliedAt: new Date("2026-11-29T00:00:00Z") }
    ])
    const again = await run(storedFunctions)
    for (const name of inFile.keys()) expect(again.get(name)!.xmin, name).toBe(applied.get(name)!.xmin)
  })

  it("a text of a newer revision is applied with its revision and hash recorded; the same again is not, an older one never", async () => {
    const marker = "-- changed by the test"
    const changedSql = ledgerFunctions.replace(
      "RETURN QUERY SELECT 'released'::text;",
      `RETURN QUERY SELECT 'released'::text; ${marker}`
    )
    expect(changedSql).not.toBe(ledgerFunctions)
    const changed = [{ name: "ledger", revision: ledgerRevision + 1, sql: changedSql }]
    const before = await run(storedFunctions)

    expect(await run(at("2026-12-01T00:00:00Z")(applyRepeatableMigrations(changed)))).toEqual(["ledger"])
    const after = await run(storedFunctions)
    expect(after.get("ledger_release")!.prosrc).toContain(marker)
    expect(after.get("ledger_release")!.xmin).not.toBe(before.get("ledger_release")!.xmin)
    expect(await run(recorded)).toEqual([
      { name: "ledger", revision: ledgerRevision + 1, sha256: repeatableHash(changedSql), appliedAt: new Date("2026-12-01T00:00:00Z") }
    ])

    // Unchanged: not applied, applied_at and the functions' rows as they were.
    expect(await run(at("2026-12-02T00:00:00Z")(applyRepeatableMigrations(changed)))).toEqual([])
    expect((await run(recorded))[0]!.appliedAt).toEqual(new Date("2026-12-01T00:00:00Z"))
    const unchanged = await run(storedFunctions)
    for (const [name, row] of after) expect(unchanged.get(name)!.xmin, name).toBe(row.xmin)

    // An older build restarting (the file's own revision, older than the one recorded): the newer text stays in force.
    expect(await run(at("2026-12-03T00:00:00Z")(applyRepeatableMigrations(repeatable)))).toEqual([])
    expect((await run(storedFunctions)).get("ledger_release")!.prosrc).toContain(marker)

    // The same revision with another text is refused: the text changed without its revision.
    const unraised = await run(Effect.exit(applyRepeatableMigrations([{ name: "ledger", revision: ledgerRevision + 1, sql: ledgerFunctions }])))
    expect(String(unraised)).toContain("changed without its revision")
    expect((await run(storedFunctions)).get("ledger_release")!.prosrc).toContain(marker)

    // The file's text again under a newer revision: the functions in force again.
    expect(await run(at("2026-12-04T00:00:00Z")(applyRepeatableMigrations([{ name: "ledger", revision: ledgerRevision + 2, sql: ledgerFunctions }])))).toEqual(["ledger"])
    const restored = await run(storedFunctions)
    for (const [name, row] of before) expect(restored.get(name)!.definition, name).toBe(row.definition)
    expect((await run(recorded))[0]!.sha256).toBe(repeatableHash(ledgerFunctions))
  })

  it("a text that fails leaves the functions and the recorded revision as they were", async () => {
    const before = await run(storedFunctions)
    const recordedBefore = await run(recorded)
    const broken = [{ name: "ledger", revision: recordedBefore[0]!.revision + 1, sql: `${ledgerFunctions}\n    CREATE OR REPLACE FUNCTION ledger_broken( AS $$ $$;` }]
    const exit = await run(Effect.exit(at("2026-12-05T00:00:00Z")(applyRepeatableMigrations(broken))))
    expect(exit._tag).toBe("Failure")
    expect(String(exit)).toContain('Repeatable migration \\"ledger\\" failed')
    expect(await run(recorded)).toEqual(recordedBefore)
    const after = await run(storedFunctions)
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort())
    for (const [name, row] of before) expect(after.get(name)!.xmin, name).toBe(row.xmin)
  })
})

describe.runIf(availableBackend() === "postgres")("two replicas starting together on PostgreSQL", () => {
  let database: TestDatabase
  let scope: Scope.CloseableScope

  beforeAll(async () => {
    database = await createTestDatabase("postgres")
    scope = Effect.runSync(Scope.make())
  })

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database.close()
  })

  it("apply a changed file once: the second waits for the migrator's lock and finds the new hash", async () => {
    const replicaA = await connect(database, scope)
    const replicaB = await connect(database, scope)
    await replicaA(runMigrations)
    // A new build whose file changed since the last start: both replicas start on it.
    const raised = [{ name: "ledger", revision: ledgerRevision + 1, sql: ledgerFunctions }]
    const [a, b] = await Promise.all([replicaA(applyRepeatableMigrations(raised)), replicaB(applyRepeatableMigrations(raised))])
    expect([a, b].map((names) => names.join(",")).sort()).toEqual(["", "ledger"])
    expect((await replicaA(recorded)).map((row) => row.revision)).toEqual([ledgerRevision + 1])
  })
})
