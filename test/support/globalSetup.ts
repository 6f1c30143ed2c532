/**
 * Decides once per run where the database suites run: the PostgreSQL server named by DATABASE_URL
 * (or the local one on 127.0.0.1:5432) when it answers, else embedded PGlite. The choice is printed
 * so a run on PGlite never passes for a run on PostgreSQL.
 */
import { randomBytes } from "node:crypto"
import * as Net from "node:net"
import pg from "pg"
import type { TestProject } from "vitest/node"
import { ensureWebBuild } from "../../web/build.ts"
import { writeReliabilityReport } from "./reliabilityReport.ts"

const LOCAL_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"

const reachable = (url: string, timeoutMs = 1500): Promise<boolean> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = Net.connect({ host: hostname || "127.0.0.1", port: Number(port || 5432) })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
  })

export default async function setup(project: TestProject) {
  // Every server a suite starts serves the public pages: build them once here, before the workers race to.
  await ensureWebBuild({ log: (line) => console.log(`[test] ${line}`) })
  const candidate = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? LOCAL_POSTGRES
  const backend = (await reachable(candidate)) ? "postgres" : "pglite"
  const adminUrl = backend === "postgres" ? candidate : ""
  console.log(
    backend === "postgres"
      ? `[test] database suites run on PostgreSQL at ${new URL(candidate).host}`
      : `[test] no PostgreSQL reachable at ${new URL(candidate).host}: database suites run on embedded PGlite`
  )
  project.provide("databaseBackend", backend)
  project.provide("postgresAdminUrl", adminUrl)
  // The run's migrated template (test/support/database.ts createMigratedDatabase): built by the first suite that
  // needs it, dropped here when the run ends.
  const template = `test_template_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  project.provide("postgresTemplate", template)
  const report = writeReliabilityReport()
  return async () => {
    report.finish()
    if (backend !== "postgres") return
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      for (const name of [template, `${template}_building`]) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } finally {
      await client.end()
    }
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    databaseBackend: "postgres" | "pglite"
    postgresAdminUrl: string
    postgresTemplate: string
  }
}
