/**
 * Records what a real client sends to a vendor: runs the simulator on a free port, runs the client's command with the
 * vendors' base URLs pointed at it, then writes each request it received as `{client, path, headers, body}` JSON. The
 * captured bodies are what the exchange's tests replay (test/fixtures/claude-code): the shapes agents really send,
 * not what their documentation says.
 *
 *   npm run simulator:capture -- --out /tmp/capture --client "claude-code 2.1.332" --keep "Use the Read tool" \
 *     -- claude -p "Use the Read tool to read a.txt"
 *
 * Texts are redacted (replaced by filler of the same length, so token counts stay alike): a client's system prompt and
 * tool descriptions are its vendor's text, not ours to commit. Keys, ids, signatures, schemas' structure and every
 * non-text value are kept; `--keep <prefix>` leaves texts starting with it readable (the prompt a test asserts on).
 * The client itself is never a dependency of this project: install it in a scratch folder and name its binary.
 */
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { startSimulator } from "./server.ts"

const REDACTED_KEYS = new Set(["text", "description", "content", "thinking", "user_id", "instructions"])
const KEPT_KEYS = new Set(["signature", "id", "tool_use_id", "call_id", "type", "name", "model", "role"])
const HEADERS = ["anthropic-beta", "anthropic-version", "x-app", "user-agent", "content-type", "openai-beta", "originator"]
/** Codex's own headers (ids of its session, thread and turn; `x-codex-*`), kept as they come. */
const CODEX_HEADERS = ["accept", "session-id", "thread-id", "x-client-request-id"]
const WORDS = "the tool reads files and answers in plain words for the user with care".split(" ")

/** Filler of the same length, fixed by the text it replaces. */
const filler = (text: string): string => {
  if (text.length <= 24) return text
  const seed = createHash("sha256").update(text).digest().readUInt32BE(0)
  let out = "[redacted]"
  for (let i = 0; out.length < text.length; i++) out += ` ${WORDS[(seed + i * 7) % WORDS.length]}`
  return out.slice(0, text.length)
}

const redact = (value: unknown, keep: ReadonlyArray<string>, key?: string): unknown => {
  if (Array.isArray(value)) return value.map((item) => redact(item, keep, key))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, KEPT_KEYS.has(k) ? v : redact(v, keep, k)]))
  }
  if (typeof value === "string" && key !== undefined && REDACTED_KEYS.has(key) && !keep.some((prefix) => value.startsWith(prefix))) {
    return filler(value)
  }
  return value
}

const parseArgs = (argv: ReadonlyArray<string>) => {
  const split = argv.indexOf("--")
  const own = split < 0 ? argv : argv.slice(0, split)
  const command = split < 0 ? [] : argv.slice(split + 1)
  const option = (name: string) => {
    const at = own.indexOf(name)
    return at < 0 ? undefined : own[at + 1]
  }
  const keep = own.flatMap((arg, i) => (own[i - 1] === "--keep" ? [arg] : []))
  return { out: option("--out") ?? "capture", client: option("--client") ?? command[0] ?? "unknown", keep, command }
}

const main = async () => {
  const { out, client, keep, command } = parseArgs(process.argv.slice(2))
  if (command.length === 0) {
    console.error("usage: npm run simulator:capture -- [--out DIR] [--client NAME] [--keep PREFIX]... -- <command> [args...]")
    process.exit(2)
  }
  const simulator = await startSimulator({ port: 0 })
  // The simulator logs only the routes it serves; a recorder in front of it keeps every vendor POST, those it answers
  // 404 too (Codex's POST /v1/responses), and forwards each request unchanged.
  const requests: Array<{ path: string; headers: Record<string, string>; body: unknown }> = []
  const target = new URL(simulator.url)
  const recorder = Http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const raw = Buffer.concat(chunks)
      const text = raw.toString("utf8")
      let body: unknown = text
      try {
        body = text.length > 0 ? JSON.parse(text) : undefined
      } catch {}
      const path = req.url ?? "/"
      if (req.method === "POST" && !path.startsWith("/__control/")) requests.push({ path, headers: req.headers as Record<string, string>, body })
      const upstream = Http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        }
      )
      upstream.on("error", () => res.destroy())
      res.on("close", () => upstream.destroy())
      upstream.end(raw)
    })
  })
  await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve))
  const address = recorder.address()
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`
  console.error(`capture: simulator at ${simulator.url}, recorded at ${url}; running ${command.join(" ")}`)
  const code = await new Promise<number>((resolve) => {
    const child = spawn(command[0]!, command.slice(1), {
      stdio: "inherit",
      env: {
        ...process.env,
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: process.env["ANTHROPIC_API_KEY"] ?? "sim-capture-key",
        OPENAI_BASE_URL: `${url}/v1`,
        OPENAI_API_KEY: process.env["OPENAI_API_KEY"] ?? "sim-capture-key",
        DISABLE_TELEMETRY: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      }
    })
    child.on("exit", (status) => resolve(status ?? 1))
    child.on("error", (error) => {
      console.error(`capture: ${error.message}`)
      resolve(1)
    })
  })
  recorder.closeAllConnections()
  recorder.close()
  await simulator.close()
  Fs.mkdirSync(out, { recursive: true })
  requests.forEach((request, i) => {
    const body = typeof request.body === "string" ? JSON.parse(request.body) : request.body
    const names = [...HEADERS, ...CODEX_HEADERS, ...Object.keys(request.headers).filter((h) => h.startsWith("x-codex-"))]
    const headers = Object.fromEntries(names.filter((h) => request.headers[h] !== undefined).map((h) => [h, request.headers[h]]))
    const file = Path.join(out, `turn${i + 1}.json`)
    Fs.writeFileSync(file, `${JSON.stringify({ client, path: request.path, headers, body: redact(body, keep) }, null, 1)}\n`)
    console.error(`capture: ${request.path} -> ${file}`)
  })
  console.error(`capture: ${requests.length} request(s); the client exited ${code}`)
  process.exit(code === 0 && requests.length > 0 ? 0 : 1)
}

void main()
