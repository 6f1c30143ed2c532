/**
 * Starts that must not go ahead, as an operator meets them: a port another process holds, and a DATA_DIR/chain that
 * is not the service's own chain as it left it. Each is refused with one FATAL line naming what to change, exits
 * non-zero, and leaves the other process, the chain and DATA_DIR untouched.
 */
import { Effect, Exit, Scope } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Account, type Chain, createPublicClient, createWalletClient, http, type PublicClient, type Transport, type WalletClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { foundry } from "viem/chains"
import { afterAll, describe, expect, it } from "vitest"
import { AnvilPortInUse, startAnvil } from "../services/chain/anvil.ts"
import { deployRegistry, registryCodeMismatch } from "../services/chain/deploy.ts"
import { loadArtifact } from "../contracts/compile.ts"
import { DEV_KEYS, deployTestRegistry, startTestChain, type TestChain } from "./support/chain.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { cleanEnv, logRecords, type ServiceProcess, startService } from "./support/process.ts"
import { freePort } from "./support/ports.ts"

const cleanups: Array<() => Promise<unknown> | void> = []

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const emptyDataDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-ports-"))
  cleanups.push(() => Fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

const service = (env: Record<string, string>): ServiceProcess => {
  const started = startService(cleanEnv(env))
  cleanups.push(() => started.stop("SIGKILL"))
  return started
}

/** A plain TCP listener holding a port, as any other program would. */
const occupyPort = async (): Promise<number> => {
  const server = Net.createServer((socket) => socket.end())
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return (server.address() as Net.AddressInfo).port
}

/** The one FATAL or ERROR line of a refused start (LOG_FORMAT=json), whose message must say why. */
const fatalMessage = (output: string): string => {
  const failures = logRecords(output).filter((record) => record.logLevel === "FATAL" || record.logLevel === "ERROR")
  expect(failures, output).toHaveLength(1)
  expect(failures[0]!.logLevel).toBe("FATAL")
  return String(failures[0]!.message)
}

describe("a port another process holds", () => {
  it("EMBEDDED_CHAIN_PORT: refused by name, and nothing is deployed on the chain that answers there", async () => {
    const stranger: TestChain = await startTestChain()
    cleanups.push(() => stranger.close())
    const strangerPort = Number(new URL(stranger.rpcUrl).port)
    const deployer = privateKeyToAccount(DEV_KEYS[0]).address
    const before = {
      block: await stranger.public.getBlockNumber(),
      nonce: await stranger.public.getTransactionCount({ address: deployer })
    }

    const dataDir = emptyDataDir()
    const refused = service({ DATA_DIR: dataDir, EMBEDDED_CHAIN_PORT: String(strangerPort), PORT: String(await freePort()) })
    expect(await refused.exited).not.toBe(0)
    const message = fatalMessage(refused.output())
    expect(message).toContain(`EMBEDDED_CHAIN_PORT ${strangerPort} is already in use by another process`)
    expect(message).toContain("set EMBEDDED_CHAIN_PORT to a free port")

    expect(await stranger.public.getBlockNumber()).toBe(before.block)
    expect(await stranger.public.getTransactionCount({ address: deployer })).toBe(before.nonce)
    // The check runs before anything is opened.
    expect(Fs.existsSync(Path.join(dataDir, "pglite"))).toBe(false)
    expect(Fs.existsSync(Path.join(dataDir, "chain"))).toBe(false)
  }, 30_000)

  it("anvil itself refuses a busy port rather than take whatever answers there for its node", async () => {
    const port = await occupyPort()
    const exit = await Effect.runPromiseExit(Effect.scoped(startAnvil({ port, chainId: 8453 })))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(error).toBeInstanceOf(AnvilPortInUse)
      expect((error as AnvilPortInUse).port).toBe(port)
    }
  })

  it("PORT: refused by HOST:PORT and name before the database and the chain are opened", async () => {
    const port = await occupyPort()
    const dataDir = emptyDataDir()
    const refused = service({ DATA_DIR: dataDir, PORT: String(port), EMBEDDED_CHAIN_PORT: String(await freePort()) })
    expect(await refused.exited).not.toBe(0)
    expect(fatalMessage(refused.output())).toBe(
      `cannot start: 127.0.0.1:${port} is already in use by another process; stop it or set PORT to a free port`
    )
    expect(Fs.existsSync(Path.join(dataDir, "pglite"))).toBe(false)
    expect(Fs.existsSync(Path.join(dataDir, "chain"))).toBe(false)
  }, 30_000)

  it("LOG_FORMAT=pretty carries the same cause on its one FATAL line", async () => {
    const port = await occupyPort()
    const refused = service({
      DATA_DIR: emptyDataDir(),
      PORT: String(port),
      EMBEDDED_CHAIN_PORT: String(await freePort()),
      LOG_FORMAT: "pretty"
    })
    expect(await refused.exited).not.toBe(0)
    const failures = refused.output().split("\n").filter((line) => /\b(FATAL|ERROR)\b/.test(line))
    expect(failures, refused.output()).toHaveLength(1)
    expect(failures[0]).toContain("FATAL")
    expect(failures[0]).toContain(`127.0.0.1:${port} is already in use by another process; stop it or set PORT to a free port`)
  }, 30_000)

  it("an invalid variable is named on the FATAL line too", async () => {
    const refused = service({ DATA_DIR: emptyDataDir(), PORT: "eighty" })
    expect(await refused.exited).not.toBe(0)
    expect(fatalMessage(refused.output())).toMatch(/^cannot start: invalid configuration: .*PORT.*eighty/)
  }, 30_000)
})

/**
 * DATA_DIR/chain as the service leaves it after its first start: anvil's state file, and deployment.json naming the
 * registry deployed on it with the embedded publisher key.
 */
const savedChain = async (dataDir: string) => {
  const dir = Path.join(dataDir, "chain")
  Fs.mkdirSync(dir, { recursive: true })
  const scope = Effect.runSync(Scope.make())
  try {
    const node = await Effect.runPromise(
      Scope.extend(startAnvil({ port: await freePort(), chainId: 8453, statePath: Path.join(dir, "state.json") }), scope)
    )
    const chain = { ...foundry, id: 8453 }
    const transport = http(node.rpcUrl)
    const account = privateKeyToAccount(DEV_KEYS[0])
    const deployment = await deployRegistry(
      createPublicClient({ chain, transport }) as PublicClient,
      createWalletClient({ chain, transport, account }) as WalletClient<Transport, Chain, Account>,
      { admin: account.address, publisher: account.address }
    )
    const saved = { ...deployment, deployedBlock: deployment.deployedBlock.toString() }
    Fs.writeFileSync(Path.join(dir, "deployment.json"), `${JSON.stringify(saved, null, 2)}\n`)
    return saved
  } finally {
    // anvil writes its state file as it stops.
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** A copy of a prepared DATA_DIR, with deployment.json edited by `edit`. */
const copyDataDir = (from: string, edit: (deployment: Record<string, string>) => Record<string, string> = (d) => d) => {
  const dir = emptyDataDir()
  Fs.cpSync(from, dir, { recursive: true })
  const file = Path.join(dir, "chain", "deployment.json")
  Fs.writeFileSync(file, JSON.stringify(edit(JSON.parse(Fs.readFileSync(file, "utf8")) as Record<string, string>)))
  return dir
}

describe("reattaching to a saved embedded chain", () => {
  it("recognizes the registry by its code: the proxy exactly, the implementation up to its own address", async () => {
    const chain = await startTestChain()
    cleanups.push(() => chain.close())
    const admin = privateKeyToAccount(DEV_KEYS[0]).address
    const ours = await deployTestRegistry(chain, { admin, publisher: admin })
    expect(await registryCodeMismatch(chain.public, ours.proxy)).toBeUndefined()

    // The same proxy code in front of something else (here: our proxy) is not our registry.
    const proxy = loadArtifact().contracts.ERC1967Proxy!
    const wallet = chain.wallet(DEV_KEYS[0])
    const hash = await wallet.deployContract({
      abi: proxy.abi as never,
      bytecode: proxy.bytecode,
      args: [ours.proxy, "0x"],
      account: wallet.account!,
      chain: wallet.chain
    })
    const foreign = (await chain.public.waitForTransactionReceipt({ hash, pollingInterval: 50 })).contractAddress!
    expect(await registryCodeMismatch(chain.public, foreign)).toBe(
      `the implementation behind it (${ours.proxy}) is not the OracleRegistry of contracts/OracleRegistry.json`
    )
  })

  it("starts on its own chain, and refuses another CHAIN_ID, a registry address without our code or with no code, a garbled record", async () => {
    const prepared = emptyDataDir()
    const saved = await savedChain(prepared)
    const databases: Array<TestDatabase> = await Promise.all([1, 2, 3, 4, 5].map(() => createTestDatabase()))
    for (const database of databases) cleanups.push(() => database.close())
    const start = async (dataDir: string, database: TestDatabase, env: Record<string, string> = {}) =>
      service({
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        PORT: String(await freePort()),
        EMBEDDED_CHAIN_PORT: String(await freePort()),
        // No catalog and no scans: a start that is allowed is ready as soon as it listens.
        PRICE_SCAN_INTERVAL_HOURS: "0",
        CHAIN_SYNC_INTERVAL_SECONDS: "0",
        ...env
      })

    // The service that may start boots alone, so its readiness is not measured against four others' boots on 2 cores.
    const own = await start(copyDataDir(prepared), databases[0]!)
    const ready = await own.waitForLog(/"ready at /, 30_000)
    expect(ready).toContain(`"revisionsConfirmed":0`)
    expect(own.output()).toMatch(/"embedded chain ready".*"fresh":false/)
    expect(await own.stop("SIGTERM")).toBe(0)

    const otherChainId = await start(copyDataDir(prepared), databases[1]!, { CHAIN_ID: "1" })
    const notOurs = await start(copyDataDir(prepared, (d) => ({ ...d, registryAddress: saved.implementationAddress })), databases[2]!)
    const noCode = await start(
      copyDataDir(prepared, (d) => ({ ...d, registryAddress: privateKeyToAccount(DEV_KEYS[2]).address.toLowerCase() })),
      databases[3]!
    )
    const garbled = await start(copyDataDir(prepared, (d) => ({ ...d, deployedBlock: "the first one" })), databases[4]!)

    expect(await otherChainId.exited).not.toBe(0)
    expect(fatalMessage(otherChainId.output())).toMatch(
      /DATA_DIR\/chain \(.*\) is not this service's chain as it was left: it was created with CHAIN_ID 8453 and CHAIN_ID is now 1; set CHAIN_ID=8453/
    )

    expect(await notOurs.exited).not.toBe(0)
    expect(fatalMessage(notOurs.output())).toMatch(
      new RegExp(`DATA_DIR/chain \\(.*\\) is not this service's chain as it was left: deployment.json records the registry at ${saved.implementationAddress}, but the contract at ${saved.implementationAddress} is not the registry's ERC1967 proxy`)
    )

    expect(await noCode.exited).not.toBe(0)
    expect(fatalMessage(noCode.output())).toMatch(/DATA_DIR\/chain \(.*\) is not this service's chain as it was left: .* there is no contract at 0x[0-9a-f]{40}/)
    // Nothing was deployed in place of the missing registry.
    expect(noCode.output()).not.toMatch(/registry deployed/)

    expect(await garbled.exited).not.toBe(0)
    expect(fatalMessage(garbled.output())).toMatch(/deployment\.json is not a deployment record this service wrote .*deployedBlock/)
    expect(garbled.output()).not.toMatch(/registry deployed/)
    // Five cold starts of the service through tsx (four at once) and a chain: about 50 s on a loaded 2-core machine.
  }, 180_000)
})
