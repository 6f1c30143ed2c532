/**
 * A private PostgreSQL cluster a suite can crash: its own data directory, port and postmaster, started and stopped
 * with the server's own tools (`initdb`, `pg_ctl`), so `stopImmediate` is what an operator's crash looks like to the
 * service (every backend killed, no checkpoint, WAL not yet flushed is lost) and `start` runs real crash recovery.
 * Settings are PostgreSQL's defaults (fsync on, the WAL writer's usual cadence) unless a suite passes its own.
 *
 * initdb refuses to run as root: as root the binaries run as the `postgres` user through `runuser`, on a directory
 * given to it; as anyone else they run directly.
 */
import { execFile, execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import type { TestDatabase } from "./database.ts"
import { freePort } from "./ports.ts"

const run = promisify(execFile)

/** POSTGRES_BIN, else the newest server Debian's packages installed (/usr/lib/postgresql/<major>/bin). */
const installedBin = (): string => {
  const root = "/usr/lib/postgresql"
  const majors = Fs.existsSync(root) ? Fs.readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a)) : []
  return Path.join(root, majors[0] ?? "15", "bin")
}

export const POSTGRES_BIN = process.env["POSTGRES_BIN"] ?? installedBin()

const asRoot = process.getuid?.() === 0

/** The command line running one of the server's binaries as the user that may run it. */
const command = (binary: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  asRoot ? ["runuser", ["-u", "postgres", "--", Path.join(POSTGRES_BIN, binary), ...args]] : [Path.join(POSTGRES_BIN, binary), [...args]]

const pg = async (binary: string, args: ReadonlyArray<string>) => {
  const [file, argv] = command(binary, args)
  try {
    await run(file, argv, { timeout: 60_000 })
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(`${binary} ${args.join(" ")} failed: ${failure.message}\n${failure.stdout ?? ""}${failure.stderr ?? ""}`)
  }
}

export interface OwnPostgres extends TestDatabase {
  readonly port: number
  /** `pg_ctl stop -m immediate`: the postmaster and every backend end at once, as in a crash. */
  readonly stopImmediate: () => Promise<void>
  /** `pg_ctl start -w`: crash recovery, then accepting connections again. */
  readonly start: () => Promise<void>
  /** The server's log so far (for a failing suite's message). */
  readonly log: () => string
}

export interface OwnPostgresOptions {
  /** Extra `-c name=value` settings. */
  readonly settings?: Record<string, string>
}

/**
 * Initialises and starts a cluster under os.tmpdir(); `close` stops it and removes the directory. A cluster that fails
 * to start is removed before the error is thrown, and one a crashed test process leaves running is stopped on exit.
 */
export const startOwnPostgres = async (options: OwnPostgresOptions = {}): Promise<OwnPostgres> => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-own-postgres-"))
  const dataDir = Path.join(root, "data")
  const logFile = Path.join(root, "server.log")
  if (asRoot) {
    execFileSync("chown", ["-R", "postgres:postgres", root])
  }
  const port = await freePort()
  const settings = { listen_addresses: "127.0.0.1", unix_socket_directories: Os.tmpdir(), ...options.settings }
  const serverOptions = [`-p ${port}`, ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`)].join(" ")
  // Whether a postmaster may be running, whatever the last pg_ctl said (a start that timed out may have left one).
  const mayBeRunning = () => Fs.existsSync(Path.join(dataDir, "postmaster.pid"))
  const stopOnExit = () => {
    // The test process is ending without having closed the cluster: do not leave a postmaster behind.
    if (mayBeRunning()) {
      const [file, argv] = command("pg_ctl", ["-D", dataDir, "-m", "immediate", "stop"])
      try {
        execFileSync(file, argv, { stdio: "ignore", timeout: 10_000 })
      } catch {
        // Already gone.
      }
    }
  }
  process.once("exit", stopOnExit)

  const log = () => (Fs.existsSync(logFile) ? Fs.readFileSync(logFile, "utf8") : "")
  const start = async () => {
    await pg("pg_ctl", ["-D", dataDir, "-l", logFile, "-o", serverOptions, "-w", "-t", "60", "start"]).catch((error: Error) => {
      throw new Error(`${error.message}\nserver log:\n${log().split("\n").slice(-20).join("\n")}`)
    })
  }
  const stopImmediate = () => pg("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"])
  const close = async () => {
    process.removeListener("exit", stopOnExit)
    if (mayBeRunning()) await stopImmediate().catch(() => undefined)
    Fs.rmSync(root, { recursive: true, force: true })
  }

  try {
    // --no-sync only spares initdb's own final fsync of the new cluster; the server itself runs with fsync on.
    await pg("initdb", ["-D", dataDir, "--auth=trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"])
    await start()
  } catch (error) {
    await close()
    throw error
  }
  return {
    backend: "postgres",
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stopImmediate,
    start,
    close,
    log
  }
}
