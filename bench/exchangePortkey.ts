/** `npm run bench:exchange`: the Portkey gateway, started from its own bin, and the pin its streams need. */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { freePort, log, projectRoot, sleep } from "./common.ts"
import { stripAnsi } from "./exchangeSettings.ts"
import { type Child, baseEnv, startChild } from "./exchangeTargets.ts"

// ---------------------------------------------------------------------------------------------- Portkey

/**
 * The @hono/node-server that package.json's `overrides` pins for the gateway. Its streams fail with any later version
 * (Portkey-AI/gateway#1389): from 1.14.2 on (honojs/node-server#242) the server's lightweight Response, built by the
 * gateway as `new Response(stream, upstreamResponse)`, keeps the upstream fetch Response's own Headers, whose guard
 * is "immutable", and the gateway's ResponseService.updateHeaders then fails appending its x-portkey-* headers
 * ("TypeError: immutable", answered 500). Non-streaming answers are rebuilt from JSON and never hit it.
 */
export const PORTKEY_HONO_NODE_SERVER = "1.14.1"

/** The @hono/node-server version the gateway resolves (what its `import "@hono/node-server"` loads), or "?". */
const honoNodeServerVersion = (gatewayManifest: string): string => {
  try {
    // Its package.json is not among its exports: up from its entry point to the manifest that names it.
    let dir = Path.dirname(createRequire(gatewayManifest).resolve("@hono/node-server"))
    for (; dir !== Path.dirname(dir); dir = Path.dirname(dir)) {
      const file = Path.join(dir, "package.json")
      if (!Fs.existsSync(file)) continue
      const manifest = JSON.parse(Fs.readFileSync(file, "utf8")) as { name?: string; version?: string }
      if (manifest.name === "@hono/node-server") return manifest.version ?? "?"
    }
    return "?"
  } catch {
    return "?"
  }
}

/** The gateway's bin (build/start-server.js) from its package.json, or why there is none. */
export const portkeyBin = (): string | { readonly reason: string } => {
  try {
    const require = createRequire(import.meta.url)
    const manifestPath = require.resolve("@portkey-ai/gateway/package.json")
    const manifest = JSON.parse(Fs.readFileSync(manifestPath, "utf8")) as { version?: string; bin?: string | Record<string, string> }
    const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin ?? {})[0]
    if (bin === undefined) return { reason: "@portkey-ai/gateway has no bin" }
    log(
      `Portkey gateway ${manifest.version ?? "?"}: ${Path.relative(projectRoot, Path.join(Path.dirname(manifestPath), bin))}, on @hono/node-server ${honoNodeServerVersion(manifestPath)}` +
        ` (package.json overrides it to ${PORTKEY_HONO_NODE_SERVER}: Portkey-AI/gateway#1389)`
    )
    return Path.join(Path.dirname(manifestPath), bin)
  } catch (error) {
    return { reason: `@portkey-ai/gateway is not installed (${error instanceof Error ? error.message.split("\n")[0] : String(error)})` }
  }
}

/**
 * Whether the gateway's build waits 25 ms before passing on the first chunk of every stream (readStream in its
 * src/handlers/streamHandler.ts: `await new Promise((resolve) => setTimeout(resolve, 25))` on the first chunk, 1.15.2):
 * a pause of its own design, which its stream TTFB includes.
 */
const pausesFirstChunk = (bin: string): boolean => {
  try {
    return /new Promise\(\(?\(?\w+\)?=>setTimeout\(\w+,\s*25\)\)?\)/.test(Fs.readFileSync(bin, "utf8"))
  } catch {
    return false
  }
}

/** Starts the gateway on a free port (`--port=N --headless`) and waits until `GET /` answers; or says why not. */
export const startPortkey = async (): Promise<{ url: string; child: Child; pausesFirstChunk: boolean } | { reason: string }> => {
  const bin = portkeyBin()
  if (typeof bin !== "string") return bin
  const port = await freePort()
  log(`starting the Portkey gateway... (node ${Path.relative(projectRoot, bin)} --port=${port} --headless)`)
  const { handle } = startChild("the Portkey gateway", [bin, `--port=${port}`, "--headless"], baseEnv(), 5_000)
  const url = `http://127.0.0.1:${port}`
  const since = Date.now()
  for (;;) {
    if (handle.exitCode() !== null) {
      const tail = stripAnsi(handle.output()).trim().split("\n").filter((line) => line.trim() !== "").slice(-3).join(" / ")
      return { reason: `the gateway exited (${handle.exitCode()}) at start: ${tail.slice(0, 300)}` }
    }
    if (Date.now() - since > 60_000) {
      await handle.stop()
      return { reason: "the gateway did not answer GET / within 60 s" }
    }
    try {
      const answer = await fetch(`${url}/`)
      await answer.arrayBuffer()
      if (answer.ok) {
        log(`Portkey gateway answering at ${url} (pid ${handle.pid}, ${((Date.now() - since) / 1000).toFixed(1)} s)`)
        return { url, child: handle, pausesFirstChunk: pausesFirstChunk(bin) }
      }
    } catch {
      // not listening yet
    }
    await sleep(250)
  }
}
