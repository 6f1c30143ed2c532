/**
 * A digest of the database, table by table, for suites that prove a request changed nothing: two digests are equal
 * exactly when every compared table holds the same rows (compared as JSON text, in a fixed order).
 */

type Query = (text: string, values?: ReadonlyArray<unknown>) => Promise<Array<any>>

/**
 * Tables left out: what changes by itself (jobs, scans, the chain sync, the deposit watcher's position, sessions'
 * sliding expiry) and the nonces of signed requests, which a suite counts itself.
 */
export const VOLATILE_TABLES: ReadonlySet<string> = new Set([
  "job_runs",
  "price_scans",
  "chain_sync",
  "funding_scan_state",
  "sessions",
  "signed_request_nonces",
  "schema_migrations",
  "effect_sql_migrations"
])

/** Per table of the public schema (but the volatile ones): `<row count>:<md5 of the sorted rows>`. */
export type DatabaseDigest = Record<string, string>

/**
 * Every public table's rows, row for row. `last_used_at` is stripped: it stamps a valid credential that was presented
 * (an active grant refused for its scope was still that grant), once a minute at most. `ignoredColumns` strips more,
 * by table, for a suite that allows a refusal to change them (and says why).
 */
export const databaseDigest = async (query: Query, ignoredColumns: Readonly<Record<string, ReadonlyArray<string>>> = {}): Promise<DatabaseDigest> => {
  const tables = (await query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")).map((row) => row.tablename as string)
  const digest: DatabaseDigest = {}
  for (const table of tables.filter((name) => !VOLATILE_TABLES.has(name))) {
    const stripped = ["last_used_at", ...(ignoredColumns[table] ?? [])].map((column) => `'${column.replace(/'/g, "''")}'`).join(", ")
    const row = `(to_jsonb(t) - ARRAY[${stripped}])::text`
    const [result] = await query(`SELECT count(*)::int AS n, coalesce(md5(string_agg(${row}, '|' ORDER BY ${row})), '') AS h FROM "${table}" t`)
    digest[table] = `${result.n}:${result.h}`
  }
  return digest
}

/** The tables whose digest differs between `before` and `after` (a table added or dropped counts as changed). */
export const changedTables = (before: DatabaseDigest, after: DatabaseDigest): Array<string> =>
  [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((table) => before[table] !== after[table]).sort()
