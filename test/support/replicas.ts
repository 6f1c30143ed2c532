/**
 * Several real service processes on one PostgreSQL database, one Redis, one chain, one SMTP server and one simulator
 * upstream (DESIGN.md section 14), as an operator runs replicas behind a load balancer: each replica its own process,
 * port and DATA_DIR, nothing else of its own. Background jobs run on short intervals so a suite sees them move.
 */
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { privateKeyToAccount } from "viem/accounts"
import { startSimulator } from "../../simulator/server.ts"
import { DEV_KEYS, deployTestFunding, deployTestRegistry, startTestChain, type TestChain } from "./chain.ts"
import { createMigratedDatabase, queryDatabase, type TestDatabase } from "./database.ts"
import { EXCHANGE_FIXTURES, MAINTAINER_TOKEN } from "./exchangeServer.ts"
import { type Mailbox, startMailbox } from "./mailbox.ts"
import { freePort } from "./ports.ts"
import { cleanEnv, type ServiceProcess, startService } from "./process.ts"

export const REDIS_URL = process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379"

/** One OpenAI key roomy enough for any load here; one Anthropic key at `anthropicRpm` requests a minute. */
const providersYaml = (anthropicRpm: number) =>
  [
    "providers:",
    "  - name: openai",
    "    format: openai-chat",
    "    baseUrl: ${SIMULATOR_URL}/v1",
    "    keys:",
    "      - { secret: sim-replicas-openai, rpm: 1000000, tpm: 1000000000 }",
    "  - name: anthropic",
    "    format: anthropic-messages",
    "    baseUrl: ${SIMULATOR_URL}",
    "    keys:",
    `      - { secret: sim-replicas-anthropic, rpm: ${anthropicRpm}, tpm: 1000000000 }`,
    ""
  ].join("\n")

export interface Replica {
  readonly name: string
  readonly baseUrl: string
  readonly process: ServiceProcess
}

export interface ReplicaSet {
  readonly database: TestDatabase
  readonly chain: TestChain
  readonly mailbox: Mailbox
  readonly simulatorUrl: string
  /** The Redis key prefix of this set's shared budgets. */
  readonly redisPrefix: string
  readonly replicas: ReadonlyArray<Replica>
  /** Starts one more replica on the shared parts (with `env` over the shared environment) and waits until it says it is ready. */
  readonly start: (name: string, env?: Record<string, string>) => Promise<Replica>
  readonly query: (text: string, values?: ReadonlyArray<unknown>) => Promise<Array<any>>
  readonly close: () => Promise<void>
}

export interface ReplicaOptions {
  readonly anthropicRpm?: number
  /** Extra environment for every replica. */
  readonly env?: Record<string, string>
  /**
   * A database of the suite's own (one it can stop, say) instead of a fresh copy of the migrated template: the first
   * replica migrates it as it starts. The suite closes it; the set does not.
   */
  readonly database?: TestDatabase
}

export const startReplicaSet = async (count: number, options: ReplicaOptions = {}): Promise<ReplicaSet> => {
  const [database, chain, mailbox, simulator] = await Promise.all([
    options.database ?? createMigratedDatabase(),
    startTestChain(),
    startMailbox(),
    startSimulator({ port: 0 })
  ])
  const [admin, publisher, relayer] = DEV_KEYS.map((key) => privateKeyToAccount(key).address) as [`0x${string}`, `0x${string}`, `0x${string}`]
  const registry = await deployTestRegistry(chain, { admin, publisher })
  const funding = await deployTestFunding(chain, { admin, relayer, minter: admin })
  const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-replicas-"))
  const priceDir = Path.join(scratch, "prices")
  Fs.cpSync(EXCHANGE_FIXTURES, priceDir, { recursive: true })
  const providersFile = Path.join(scratch, "providers.yaml")
  Fs.writeFileSync(providersFile, providersYaml(options.anthropicRpm ?? 1_000_000))
  const redisPrefix = `cx:test:replicas:${randomBytes(6).toString("hex")}:`
  const shared: Record<string, string> = {
    DATABASE_URL: database.url,
    RPC_URL: chain.rpcUrl,
    CHAIN_ID: String(chain.chainId),
    CHAIN_CONFIRMATIONS: "1",
    REGISTRY_ADDRESS: registry.proxy,
    PUBLISHER_PRIVATE_KEY: DEV_KEYS[1],
    TREASURY_ADDRESS: funding.treasuryAddress,
    CREDIT_TOKEN_ADDRESS: funding.creditTokenAddress,
    TREASURY_DEPLOYED_BLOCK: funding.treasuryDeployedBlock.toString(),
    RELAYER_PRIVATE_KEY: DEV_KEYS[2],
    REDIS_URL,
    RATE_LIMIT_KEY_PREFIX: redisPrefix,
    SMTP_URL: mailbox.url,
    MAIL_FROM: "Compute Exchange <no-reply@example.com>",
    // Shared by every replica, or a code mailed by one would not verify on another (docs/operations.md).
    AUTH_CODE_PEPPER: randomBytes(32).toString("hex"),
    PRICE_DATA_DIR: priceDir,
    PROVIDERS_FILE: providersFile,
    SIMULATOR_URL: simulator.url,
    MAINTAINER_TOKEN,
    TRUST_PROXY: "true",
    LOG_LEVEL: "INFO",
    // Every background job every second or so, so a suite sees which replica runs each and sees it move.
    PRICE_SCAN_INTERVAL_HOURS: String(1 / 3600),
    CHAIN_SYNC_INTERVAL_SECONDS: "1",
    FUNDING_SCAN_INTERVAL_SECONDS: "1",
    HOLD_SWEEP_INTERVAL_SECONDS: "1",
    POINTS_RECONCILE_INTERVAL_SECONDS: "1",
    ...options.env
  }
  const replicas: Array<Replica> = []
  const start = async (name: string, env: Record<string, string> = {}) => {
    const port = await freePort()
    const dataDir = Fs.mkdtempSync(Path.join(scratch, `${name}-`))
    const process = startService(cleanEnv({ ...shared, PORT: String(port), DATA_DIR: dataDir, ...env }))
    await process.waitForLog(/"ready at http:/, 120_000).catch(async (error: unknown) => {
      await process.stop("SIGKILL")
      throw error
    })
    const replica = { name, baseUrl: `http://127.0.0.1:${port}`, process }
    replicas.push(replica)
    return replica
  }
  const close = async () => {
    await Promise.all(replicas.map((replica) => replica.process.stop("SIGKILL")))
    await Promise.all([mailbox.close(), simulator.close(), chain.close()])
    if (options.database === undefined) await database.close()
    Fs.rmSync(scratch, { recursive: true, force: true })
  }
  try {
    // One at a time: the first migrates and loads the catalog, the others find it done.
    for (let index = 0; index < count; index++) await start(String.fromCharCode(97 + index))
  } catch (error) {
    // A replica that did not start leaves nothing running behind the failed suite (the chain, the others).
    await close()
    throw error
  }
  return {
    database,
    chain,
    mailbox,
    simulatorUrl: simulator.url,
    redisPrefix,
    replicas,
    start,
    query: (text, values = []) => queryDatabase(database, text, [...values]),
    close
  }
}
