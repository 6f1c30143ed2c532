/**
 * The exchange over real sockets: the vendor simulator (in this process, port 0), a server on a test database whose
 * catalog is test/fixtures/exchange (OpenAI, Anthropic, Google and DeepSeek models at known prices) routed to the
 * simulator through simulator/providers.yaml, and a signed-in account with credits and an API key.
 */
import Anthropic from "@anthropic-ai/sdk"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import OpenAI from "openai"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { startSimulator } from "../../simulator/server.ts"
import { makeClient, signInByWallet } from "./accounts.ts"
import { createMigratedDatabase, queryDatabase, type TestDatabase } from "./database.ts"
import { startTestServer, type TestServer } from "./server.ts"

export const EXCHANGE_FIXTURES = new URL("../fixtures/exchange", import.meta.url).pathname
export const SIMULATOR_PROVIDERS = new URL("../../simulator/providers.yaml", import.meta.url).pathname
export const MAINTAINER_TOKEN = "exchange-test-maintainer-token"
export const ONE_CREDIT = 10n ** 18n

export interface ExchangeFixture {
  readonly server: TestServer
  readonly baseUrl: string
  readonly simulatorUrl: string
  readonly database: TestDatabase
  readonly cookie: string
  readonly cfId: string
  readonly ip: string
  /** Issues an API key on the account (POST /v1/keys). */
  readonly issueKey: (body?: unknown) => Promise<{ id: string; secret: string }>
  readonly grant: (amountWei: bigint) => Promise<void>
  readonly query: (text: string, values?: ReadonlyArray<unknown>) => Promise<Array<any>>
  /** Scripts the simulator's next answers (POST /__control/faults). */
  readonly fault: (spec: Record<string, unknown>) => Promise<void>
  readonly clearFaults: () => Promise<void>
  /** Another server on the same database, simulator and settings (a second replica), closed with the fixture. */
  readonly startReplica: (env?: Record<string, string>) => Promise<TestServer>
  readonly close: () => Promise<void>
}

export const startExchangeFixture = async (env: Record<string, string> = {}): Promise<ExchangeFixture> => {
  const database = await createMigratedDatabase()
  const simulator = await startSimulator({ port: 0 })
  const priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-exchange-prices-"))
  Fs.cpSync(EXCHANGE_FIXTURES, priceDir, { recursive: true })
  const serverEnv = {
    DATABASE_URL: database.url,
    PRICE_DATA_DIR: priceDir,
    PRICE_SCAN_INTERVAL_HOURS: "24",
    PROVIDERS_FILE: SIMULATOR_PROVIDERS,
    SIMULATOR_URL: simulator.url,
    RATE_LIMIT_ENABLED: "false",
    TRUST_PROXY: "true",
    MAINTAINER_TOKEN,
    UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "1500",
    ...env
  }
  const server = await startTestServer(serverEnv)
  const replicas: Array<TestServer> = []
  const client = makeClient(server.baseUrl)
  // The boot scan loads the fixture cards; the exchange routes once they are in the snapshot.
  for (let poll = 0; ; poll++) {
    const models = await client.call("GET", "/v1/models")
    if (models.status === 200 && (models.body.data as Array<unknown>).length > 0) break
    if (poll > 150) throw new Error(`the catalog never became routable: ${JSON.stringify(models.body)}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const ip = "203.0.113.90"
  const signedIn = await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), ip)
  const cookie = signedIn.cookie
  const cfId = signedIn.me.cf_id as string
  const control = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${simulator.url}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    if (!response.ok) throw new Error(`simulator ${method} ${path}: ${response.status} ${await response.text()}`)
  }
  return {
    server,
    baseUrl: server.baseUrl,
    simulatorUrl: simulator.url,
    database,
    cookie,
    cfId,
    ip,
    issueKey: async (body: unknown = {}) => {
      const issued = await client.call("POST", "/v1/keys", body, { cookie, ip })
      if (issued.status !== 201) throw new Error(`POST /v1/keys answered ${issued.status}: ${JSON.stringify(issued.body)}`)
      return { id: issued.body.key.id as string, secret: issued.body.secret as string }
    },
    grant: async (amountWei: bigint) => {
      const granted = await client.call("POST", `/v1/admin/accounts/${cfId}/credits`, { amountWei: amountWei.toString() }, {
        headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
      })
      if (granted.status >= 300) throw new Error(`grant answered ${granted.status}: ${JSON.stringify(granted.body)}`)
    },
    query: (text, values = []) => queryDatabase(database, text, values),
    fault: (spec) => control("POST", "/__control/faults", spec),
    clearFaults: () => control("DELETE", "/__control/faults"),
    startReplica: async (extra = {}) => {
      const replica = await startTestServer({ ...serverEnv, ...extra })
      replicas.push(replica)
      return replica
    },
    close: async () => {
      for (const replica of replicas) await replica.close()
      await server.close()
      await simulator.close()
      await database.close()
      Fs.rmSync(priceDir, { recursive: true, force: true })
    }
  }
}

/** USD per million tokens as usd18, from the decimal text of a card (exact). */
export const usd18 = (decimal: string): bigint => {
  const [whole, fraction = ""] = decimal.split(".")
  return BigInt(whole!) * 10n ** 18n + BigInt((fraction + "0".repeat(18)).slice(0, 18))
}

/** The bill as SPEC "Billing" 3 defines it, written out independently: legs summed, x1.05 once, / 10^6, / peg 1, one floor. */
export const expectedChargeWei = (legs: ReadonlyArray<readonly [tokens: number, usdPerMillion: string]>): bigint => {
  const sum = legs.reduce((acc, [tokens, rate]) => acc + BigInt(tokens) * usd18(rate), 0n)
  return (sum * 105n * 10n ** 18n) / (100n * 1_000_000n * 10n ** 18n)
}

/** The official SDKs pointed at our server with an API key (no retries: a refusal is seen as it is). */
export const sdkClients = (baseUrl: string, secret: string) => ({
  openai: new OpenAI({ apiKey: secret, baseURL: `${baseUrl}/v1`, maxRetries: 0 }),
  anthropic: new Anthropic({ apiKey: secret, baseURL: baseUrl, maxRetries: 0 })
})
