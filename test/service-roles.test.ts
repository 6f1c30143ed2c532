/**
 * Service roles (DESIGN.md section 14, "Roles"; docs/decisions.md "Service roles"): a full replica and an
 * exchange-only replica (`SERVICE_ROLES=exchange`) as two real processes on one PostgreSQL database, beside one chain
 * and the simulated vendors. Both serve and bill chat completions (the official `openai` client), each billed once;
 * the exchange-only replica answers 404 `not_found` naming the role on the oracle's routes (its hot reads included),
 * the pages and the accounts' routes, says `["exchange"]` on /v1/status, and starts no chain (no anvil child, though
 * it has no RPC_URL) and no background job. The rules of the variable itself are checked in-process, and a start with
 * an unknown role fails with the message that names it.
 */
import { HttpApi } from "@effect/platform"
import { Either } from "effect"
import * as Fs from "node:fs"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseServiceRoles, rolesConfigurationProblem, SERVICE_ROLES } from "../domain/serviceRoles.ts"
import { ServerApi } from "../src/api/ServerApi.ts"
import { makeRoleTable, ROUTE_ROLES } from "../src/http/serviceRoles.ts"
import { expectedChargeWei } from "./support/exchangeServer.ts"
import { freePort } from "./support/ports.ts"
import { waitFor } from "./support/polling.ts"
import { cleanEnv, startService } from "./support/process.ts"
import { issueKey, newAccount } from "./support/replicaClient.ts"
import { type Replica, type ReplicaSet, startReplicaSet } from "./support/replicas.ts"

/** The fixture card's rates for openai/gpt-4.1, USD per million tokens. */
const GPT41 = { input: "2", output: "8" } as const

describe("SERVICE_ROLES, the rules", () => {
  it("reads a comma-separated subset, in canonical order; empty means every role; an unknown name is refused by name", () => {
    expect(parseServiceRoles("")).toEqual(Either.right(SERVICE_ROLES))
    expect(parseServiceRoles(" , ")).toEqual(Either.right(SERVICE_ROLES))
    expect(parseServiceRoles("exchange")).toEqual(Either.right(["exchange"]))
    expect(parseServiceRoles(" Jobs, oracle ,jobs")).toEqual(Either.right(["oracle", "jobs"]))
    const refused = parseServiceRoles("exchange,inference")
    expect(Either.isLeft(refused) && refused.left).toMatch(/unknown role "inference".*oracle, exchange, accounts, web, jobs/)
  })

  it("asks a replica of some roles for the shared database, and for the shared chain when its roles use one", () => {
    const nothing = { databaseUrl: false, rpcUrl: false }
    expect(rolesConfigurationProblem(SERVICE_ROLES, nothing)).toBeUndefined()
    expect(rolesConfigurationProblem(["exchange"], nothing)).toMatch(/needs DATABASE_URL \(/)
    expect(rolesConfigurationProblem(["exchange"], { databaseUrl: true, rpcUrl: false })).toBeUndefined()
    expect(rolesConfigurationProblem(["exchange", "accounts"], { databaseUrl: true, rpcUrl: false })).toMatch(/needs RPC_URL/)
    expect(rolesConfigurationProblem(["oracle", "jobs"], nothing)).toMatch(/needs DATABASE_URL and RPC_URL/)
    expect(rolesConfigurationProblem(["web"], { databaseUrl: true, rpcUrl: true })).toBeUndefined()
  })

  it("gives every group of the served API a role in the one table, and finds a route's role by its path", () => {
    const groups = new Set<string>()
    const unnamed: Array<string> = []
    HttpApi.reflect(ServerApi as unknown as HttpApi.HttpApi.AnyWithProps, {
      onGroup: ({ group }) => void groups.add(group.identifier),
      onEndpoint: ({ endpoint, group }) => {
        if (ROUTE_ROLES[group.identifier] === undefined && ROUTE_ROLES[`${group.identifier}.${endpoint.name}`] === undefined) {
          unnamed.push(`${group.identifier}.${endpoint.name}`)
        }
      }
    })
    expect(unnamed).toEqual([])
    expect(groups.size).toBeGreaterThan(20)
    const table = makeRoleTable(ServerApi)
    expect(table.roleOf("GET", "/v1/oracle/scu")).toBe("oracle")
    // A model key written with a plain slash reaches the same route.
    expect(table.roleOf("GET", "/v1/oracle/models/openai/gpt-4.1/price-at?at=2026-01-01")).toBe("oracle")
    expect(table.roleOf("POST", "/v1/chat/completions")).toBe("exchange")
    // A wrong method is judged by the route at its path (the 405 is the role's, if served).
    expect(table.roleOf("GET", "/v1/chat/completions")).toBe("exchange")
    expect(table.roleOf("HEAD", "/")).toBe("web")
    expect(table.roleOf("GET", "/console/keys")).toBe("web")
    expect(table.roleOf("GET", "/v1/keys")).toBe("accounts")
    expect(table.roleOf("POST", "/v1/admin/scan")).toBe("oracle")
    expect(table.roleOf("PUT", "/v1/admin/routing/auto")).toBe("exchange")
    expect(table.roleOf("POST", "/v1/admin/accounts/cf_1/credits")).toBe("accounts")
    expect(table.roleOf("GET", "/v1/status")).toBeUndefined()
    expect(table.roleOf("GET", "/v1/openapi.json")).toBeUndefined()
    expect(table.roleOf("GET", "/v1/nowhere")).toBeUndefined()
  })

  it("refuses to start with an unknown role, naming it", async () => {
    const service = startService(cleanEnv({ SERVICE_ROLES: "exchange,inference", PORT: "0", DATA_DIR: Fs.mkdtempSync("/tmp/cx-roles-") }))
    const line = await service.waitForLog(/cannot start/, 60_000)
    expect(await service.exited).toBe(1)
    expect(line).toMatch(/SERVICE_ROLES/)
    expect(line).toMatch(/unknown role \\"inference\\"/)
  }, 90_000)
})

/** Every process below `pid` (its children, theirs, ...), with its command line. */
const descendantsOf = (pid: number): Array<{ readonly pid: number; readonly command: string }> => {
  const parents = new Map<number, number>()
  for (const entry of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = Fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]))
    } catch {
      // gone meanwhile
    }
  }
  const found: Array<{ pid: number; command: string }> = []
  const visit = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid !== parent) continue
      let command = ""
      try {
        command = Fs.readFileSync(`/proc/${child}/cmdline`, "utf8").replace(/\0/g, " ").trim()
      } catch {
        // gone meanwhile
      }
      found.push({ pid: child, command })
      visit(child)
    }
  }
  visit(pid)
  return found
}

let set: ReplicaSet
let full: Replica
let exchange: Replica
let exchangeStartedAt: Date
let visitor = 0
const nextIp = () => `198.51.100.${++visitor}`

beforeAll(async () => {
  // Every background job every second or so on the full replica (test/support/replicas.ts): were the exchange-only
  // replica running jobs, it would win some of their locks within seconds.
  set = await startReplicaSet(1, {
    env: { RATE_LIMIT_ENABLED: "false", STORED_RESPONSE_PURGE_INTERVAL_SECONDS: "1" }
  })
  full = set.replicas[0]!
  exchangeStartedAt = new Date()
  exchange = await set.start("exchange", {
    SERVICE_ROLES: "exchange",
    // No chain settings at all (an empty value is unset): a replica of every role would start the embedded anvil
    // here, on this free port.
    RPC_URL: "",
    REGISTRY_ADDRESS: "",
    PUBLISHER_PRIVATE_KEY: "",
    TREASURY_ADDRESS: "",
    CREDIT_TOKEN_ADDRESS: "",
    RELAYER_PRIVATE_KEY: "",
    EMBEDDED_CHAIN_PORT: String(await freePort())
  })
}, 300_000)

afterAll(async () => {
  await set?.close()
})

describe("a full replica and an exchange-only replica on one PostgreSQL", () => {
  it("says on /v1/status which roles each runs", async () => {
    const status = async (replica: Replica) => (await (await fetch(`${replica.baseUrl}/v1/status`)).json()) as { status: string; roles: Array<string> }
    expect(await status(full)).toMatchObject({ status: "ok", roles: ["oracle", "exchange", "accounts", "web", "jobs"] })
    expect(await status(exchange)).toMatchObject({ status: "ok", roles: ["exchange"] })
  })

  it("serves and bills a chat completion through each replica exactly once, with the official openai client", async () => {
    const owner = await newAccount(set, full, 10n ** 18n, nextIp())
    const key = await issueKey(full, owner, "both tiers")
    // The exchange-only replica reads the catalog the full replica's scan wrote (its snapshot re-reads PostgreSQL).
    await waitFor("the exchange-only replica to route openai/gpt-4.1", async () => {
      const models = (await (await fetch(`${exchange.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key.secret}` } })).json()) as {
        data: Array<{ id: string }>
      }
      return models.data.some((model) => model.id === "openai/gpt-4.1")
    }, 30_000)

    const answers = []
    for (const replica of [full, exchange]) {
      const openai = new OpenAI({ apiKey: key.secret, baseURL: `${replica.baseUrl}/v1`, maxRetries: 0 })
      const answer = await openai.chat.completions.create({
        model: "openai/gpt-4.1",
        messages: [{ role: "user", content: `billed through ${replica.name}` }],
        max_tokens: 40
      }).catch((error: unknown) => {
        throw new Error(`${replica.name}: ${String(error)}\n${replica.process.output().split("\n").filter((line) => /ERROR|FATAL|unhandled/.test(line)).join("\n").slice(-4000)}`)
      })
      expect(answer.choices[0]?.message.content).toBeTruthy()
      answers.push(answer)
    }
    expect(new Set(answers.map((answer) => answer.id)).size).toBe(2)

    await waitFor("no live hold", async () =>
      (await set.query("SELECT 1 FROM holds WHERE account_id = $1 AND released_at IS NULL AND settled_at IS NULL", [owner.accountId])).length === 0, 10_000)
    const charges = await set.query(
      "SELECT reference, (-amount_wei)::text AS wei FROM ledger_entries WHERE account_id = $1 AND kind = 'charge' ORDER BY id",
      [owner.accountId]
    )
    expect(charges.map((row) => row.reference).sort()).toEqual(answers.map((answer) => answer.id).sort())
    const chargeOf = new Map(charges.map((row) => [row.reference as string, BigInt(row.wei)]))
    for (const answer of answers) {
      const usage = answer.usage!
      expect(chargeOf.get(answer.id), answer.id).toBe(
        expectedChargeWei([[usage.prompt_tokens, GPT41.input], [usage.completion_tokens, GPT41.output]])
      )
    }
    const [account] = await set.query("SELECT balance_wei::text AS balance, reserved_wei::text AS reserved FROM accounts WHERE id = $1", [owner.accountId])
    expect(account.reserved).toBe("0")
    expect(BigInt(account.balance)).toBe(10n ** 18n - [...chargeOf.values()].reduce((sum, wei) => sum + wei, 0n))
  }, 90_000)

  it("answers 404 not_found naming the role on the oracle's routes, the pages and the accounts' routes; the full replica serves them", async () => {
    const owner = await newAccount(set, full, 0n, nextIp())
    const requests: Array<{ readonly method: string; readonly path: string; readonly role: string; readonly body?: unknown; readonly session?: boolean }> = [
      // A hot read the oracle's fast path answers ahead of the stack, and one through the router (the catalog is
      // loaded by now: the test before waited for it).
      { method: "GET", path: "/v1/oracle/catalog", role: "oracle" },
      { method: "GET", path: "/v1/oracle/health", role: "oracle" },
      { method: "GET", path: "/", role: "web" },
      { method: "GET", path: "/console", role: "web" },
      { method: "GET", path: "/v1/keys", role: "accounts", session: true },
      { method: "GET", path: "/v1/account", role: "accounts", session: true },
      { method: "POST", path: "/v1/auth/email/start", role: "accounts", body: { email: "roles@example.com" } }
    ]
    for (const request of requests) {
      const headers: Record<string, string> = { "x-forwarded-for": owner.ip }
      if (request.session === true) headers["cookie"] = owner.cookie
      if (request.body !== undefined) headers["content-type"] = "application/json"
      const send = (replica: Replica) =>
        fetch(`${replica.baseUrl}${request.path}`, {
          method: request.method,
          headers,
          ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) })
        })
      // The oracle's fast path would answer a hot read from a current snapshot ahead of the stack: a read of the exchange
      // (which brings the snapshot up to date) just before makes sure it would, were it built on this replica.
      if (request.path === "/v1/oracle/catalog") await (await fetch(`${exchange.baseUrl}/v1/models`)).arrayBuffer()
      const refused = await send(exchange)
      const body = (await refused.json()) as { error: { code: string; type: string; message: string; details?: { role?: string } } }
      expect(refused.status, `${request.method} ${request.path}`).toBe(404)
      expect(body.error.code).toBe("not_found")
      expect(body.error.type).toBe("not_found")
      expect(body.error.message).toContain(`does not serve the ${request.role} part`)
      expect(body.error.details?.role).toBe(request.role)
      expect(refused.headers.get("x-request-id")).toBeTruthy()
      // The same request on the full replica reaches its route (an answer of the route, not the role's 404).
      const served = await send(full)
      const servedBody = await served.text()
      expect(servedBody, `${request.method} ${request.path} on the full replica`).not.toContain("does not serve the")
      expect(served.status, `${request.method} ${request.path} on the full replica: ${servedBody.slice(0, 200)}`).toBeLessThan(400)
    }
  }, 60_000)

  it("starts no chain and runs no background job on the exchange-only replica, while the full replica runs them", async () => {
    const pid = exchange.process.child.pid!
    // No chain settings, yet no embedded anvil (nor anything else) below it.
    expect(descendantsOf(pid).filter((child) => /anvil/.test(child.command))).toEqual([])
    // Jobs kept running on the full replica (every second) while the exchange-only one was up: none of them there.
    await waitFor("the full replica's jobs to run since the exchange-only replica started", async () => {
      const runs = await set.query("SELECT DISTINCT job FROM job_runs WHERE started_at > $1", [exchangeStartedAt])
      return runs.length >= 4
    }, 20_000)
    const onExchange = await set.query("SELECT job, instance_id FROM job_runs WHERE split_part(instance_id, ':', 2) = $1", [String(pid)])
    expect(onExchange).toEqual([])
    const onFull = await set.query("SELECT DISTINCT job FROM job_runs WHERE split_part(instance_id, ':', 2) = $1", [String(full.process.child.pid)])
    expect(onFull.map((row) => row.job)).toEqual(expect.arrayContaining(["price-scan", "chain-sync", "hold-sweep"]))
    // Nor does it say it started any (the chain, the replay, the watcher, the page build log a line when they do).
    const logged = exchange.process.output()
    expect(logged).toContain("running only the roles exchange")
    expect(logged).not.toMatch(/embedded chain|using the configured chain|history replay|deposit watcher|web pages built/i)
  }, 60_000)
})
