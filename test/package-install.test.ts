/**
 * The package as another project gets it: `npm run build` (JavaScript and declarations in dist/), `npm pack`, and the
 * tarball installed into a scratch project outside this repository, with its dependencies from the registry (or the
 * npm cache). The scratch project type-checks the programs in examples/package/ against the installed declarations
 * with its own tsconfig (NodeNext, no `compute-exchange:source` condition: only dist/ is there), compiles them, and
 * runs each with plain `node` on a database of its own: the oracle's reads, the exchange's `serve` with a scripted
 * vendor, and an organization's actions with `actingAs`. Each must print what it did and exit 0.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"
import { cleanEnv, projectRoot } from "./support/process.ts"

const run = promisify(execFile)
const MINUTE = 60_000

let scratch = ""
const databases: Array<TestDatabase> = []

/** `npm` with a clean environment (no npm_* variables of the run that started vitest). */
const npm = (args: ReadonlyArray<string>, cwd: string, timeout: number) =>
  run("npm", [...args], {
    cwd,
    timeout,
    maxBuffer: 64 * 1024 * 1024,
    env: Object.fromEntries(Object.entries(cleanEnv({})).filter(([name]) => !name.startsWith("npm_")))
  })

const tsc = (args: ReadonlyArray<string>) =>
  run(process.execPath, [Path.join(projectRoot, "node_modules/typescript/bin/tsc"), ...args], { cwd: scratch, timeout: 2 * MINUTE })

beforeAll(async () => {
  scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), "compute-exchange-package-"))
  await npm(["run", "build"], projectRoot, 6 * MINUTE)
  // The build ran just above: pack what it made without running it again (prepack) or the web build (prepare).
  const packed = await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", scratch], projectRoot, 2 * MINUTE)
  const filename = (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename
  const own = JSON.parse(await Fs.readFile(Path.join(projectRoot, "package.json"), "utf8")) as { devDependencies: Record<string, string> }
  await Fs.writeFile(Path.join(scratch, "package.json"), JSON.stringify({ name: "embedder", private: true, type: "module" }, null, 2))
  await Fs.writeFile(
    Path.join(scratch, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2022"],
          types: ["node"],
          strict: true,
          skipLibCheck: true,
          outDir: "out",
          rootDir: "src"
        },
        include: ["src"]
      },
      null,
      2
    )
  )
  await Fs.mkdir(Path.join(scratch, "src"))
  for (const file of await Fs.readdir(Path.join(projectRoot, "examples/package"))) {
    await Fs.copyFile(Path.join(projectRoot, "examples/package", file), Path.join(scratch, "src", file))
  }
  await npm(
    ["install", `./${filename}`, `@types/node@${own.devDependencies["@types/node"]}`, "--prefer-offline", "--no-audit", "--no-fund"],
    scratch,
    5 * MINUTE
  )
}, 12 * MINUTE)

afterAll(async () => {
  await Promise.allSettled(databases.map((database) => database.close()))
  if (scratch !== "") await Fs.rm(scratch, { recursive: true, force: true })
})

/** Runs a compiled example with plain node on a new, empty database; its output lines and exit code. */
const example = async (name: string) => {
  const database = await createTestDatabase()
  databases.push(database)
  const { stdout } = await run(process.execPath, [`out/${name}.js`], {
    cwd: scratch,
    timeout: 2 * MINUTE,
    env: cleanEnv({ DATABASE_URL: database.url })
  })
  // execFile rejects on a non-zero exit: reaching here is exit 0.
  return stdout.trim().split("\n")
}

describe("the packed package, installed outside the repository", () => {
  it("installs only built files: JavaScript, declarations and the data they read, no TypeScript sources", async () => {
    const installed = Path.join(scratch, "node_modules/compute-exchange")
    const manifest = JSON.parse(await Fs.readFile(Path.join(installed, "package.json"), "utf8")) as { exports: Record<string, unknown> }
    expect(Object.keys(manifest.exports)).toEqual(["./oracle", "./exchange", "./accounts", "./api", "./testing", "./package.json"])
    await Fs.access(Path.join(installed, "dist/layers/Test.js"))
    await Fs.access(Path.join(installed, "dist/layers/Test.d.ts"))
    await Fs.access(Path.join(installed, "dist/data/methodology.yaml"))
    await expect(Fs.access(Path.join(installed, "services"))).rejects.toThrow()
    const emitted = await Fs.readFile(Path.join(installed, "dist/src/exports/oracle.js"), "utf8")
    expect(emitted).toMatch(/from "\.\.\/\.\.\/layers\/Oracle\.js"/)
    expect(emitted).not.toMatch(/\.ts"/)
  }, 30_000)

  it("the examples type-check with the scratch project's own tsconfig (NodeNext) against the installed declarations", async () => {
    await tsc(["--noEmit", "-p", "."])
    // Then emitted for node (already checked).
    await tsc(["-p", ".", "--noCheck"])
  }, 3 * MINUTE)

  let oracleLines: Promise<Array<string>> | undefined
  const oracleReads = () => (oracleLines ??= example("oracle-reads"))

  it("oracle-reads: the catalog after one scan of the bundled cards, a model's billed prices, no SCU before anchoring", async () => {
    const lines = await oracleReads()
    expect(lines).toEqual([
      expect.stringMatching(/^scan: succeeded, [1-9]\d* catalog changes$/),
      expect.stringMatching(/^catalog: [1-9]\d* models$/),
      expect.stringMatching(/^openai\/gpt-4\.1: input \d+ wei, output \d+ wei per million tokens \(billed, markup included\)$/),
      "scu: none confirmed yet"
    ])
  }, 3 * MINUTE)

  it("exchange-serve: one request served by the scripted vendor, billed at the catalog's rates, debited once", async () => {
    const [oracle, exchange] = [await oracleReads(), await example("exchange-serve")]
    const [, input, output] = /input (\d+) wei, output (\d+) wei/.exec(oracle[2]!)!
    // The bill from the billed rates (markup included) and the scripted counts: 1200 input, 300 output tokens.
    const charge = (1200n * BigInt(input!) + 300n * BigInt(output!)) / 1_000_000n
    expect(exchange).toEqual([
      "vendor called 1 time(s), for gpt-4.1",
      "served by openai/gpt-4.1 (openai): Hello from the scripted vendor.",
      "usage: 1200 input, 300 output tokens",
      `charged ${charge} wei; balance ${10n ** 18n - charge} wei of ${10n ** 18n}`
    ])
  }, 3 * MINUTE)

  it("org-actions: an owner creates an organization, funds it and invites; an outsider is refused", async () => {
    const lines = await example("org-actions")
    expect(lines).toEqual([
      expect.stringMatching(/^created Acme Research \(org_[a-z0-9]+\), owner@example\.com is owner$/),
      "owner's balance after moving 2 credits in: 3000000000000000000 wei",
      "invited member@example.com as member",
      "members: owner",
      "outsider@example.com listing the invitations: refused (NotFound)"
    ])
  }, 3 * MINUTE)
})
