/**
 * A client of a replica set (test/support/replicas.ts), as the suites about replicas and their faults use it: a
 * signed-in account the maintainer credited, API keys, and billed chat completions, whole or streamed, read to the
 * end so a suite knows exactly which answers the client received completely (those, and only those, must be charged).
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { expect } from "vitest"
import { makeClient, signInByWallet } from "./accounts.ts"
import { MAINTAINER_TOKEN } from "./exchangeServer.ts"
import type { Replica, ReplicaSet } from "./replicas.ts"

export interface Owner {
  readonly cfId: string
  readonly cookie: string
  readonly ip: string
  readonly accountId: string
  readonly client: ReturnType<typeof makeClient>
}

/** A fresh wallet account signed in on `replica` from `ip`, credited `wei` by the maintainer. */
export const newAccount = async (set: ReplicaSet, replica: Replica, wei: bigint, ip: string): Promise<Owner> => {
  const client = makeClient(replica.baseUrl)
  const { cookie, me } = await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), ip)
  const cfId = me.cf_id as string
  if (wei > 0n) {
    const granted = await client.call("POST", `/v1/admin/accounts/${cfId}/credits`, { amountWei: wei.toString() }, { headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` } })
    expect(granted.status, JSON.stringify(granted.body)).toBeLessThan(300)
  }
  const [account] = await set.query("SELECT id::text AS id FROM accounts WHERE owner_cf_id = $1 AND kind = 'personal'", [cfId])
  return { cfId, cookie, ip, accountId: account.id as string, client }
}

/** `POST /v1/keys`; `extra` carries caps (`dailyLimitWei`, ...) or a model list. */
export const issueKey = async (replica: Replica, owner: { cookie: string; ip: string }, label: string, extra: Record<string, unknown> = {}) => {
  const issued = await makeClient(replica.baseUrl).call("POST", "/v1/keys", { label, ...extra }, owner)
  expect(issued.status, JSON.stringify(issued.body)).toBe(201)
  return { id: issued.body.key.id as string, secret: issued.body.secret as string }
}

/** A whole chat completion: status and parsed body (the reply, or the error envelope). */
export const chat = async (replica: Replica, secret: string, body: Record<string, unknown>, signal?: AbortSignal) => {
  const response = await fetch(`${replica.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })
  return { status: response.status, body: (await response.json()) as any }
}

export const gpt41 = (prompt: string, maxTokens = 40) => ({ model: "openai/gpt-4.1", messages: [{ role: "user", content: prompt }], max_tokens: maxTokens })

export interface ChatUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
}

/** What a client made of one request, whole or streamed. */
export interface ChatOutcome {
  readonly stream: boolean
  readonly status: number
  /** The reply's id (= the request id the ledger's charge references), when any of the reply arrived. */
  readonly id: string | undefined
  /** The usage of a whole reply, or of a stream's final chunk. */
  readonly usage: ChatUsage | undefined
  /** A whole 200 reply, or a stream that reached its final usage chunk and `[DONE]`. */
  readonly complete: boolean
  /** The error envelope's code (a refusal), or the code of a stream's error frame. */
  readonly errorCode: string | undefined
  /** A refusal's message (what a failing assertion shows). */
  readonly errorMessage?: string | undefined
  readonly ms: number
}

const parseFrames = (text: string): Array<any> =>
  text
    .split("\n\n")
    .map((frame) => frame.trim())
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => frame.slice("data: ".length))
    .map((data) => (data === "[DONE]" ? "[DONE]" : JSON.parse(data)))

/**
 * One chat completion, whole or streamed (`stream_options.include_usage`), read to its end. A stream is complete when
 * its last chunk before `[DONE]` carried the usage; a stream cut short (no `[DONE]`) or ended by an error frame is not.
 * `onFirstChunk` is called when the first bytes of a stream's body arrive (the stream is open). A request that fails
 * at the socket (or outlives `timeoutMs`) throws: the suites treat that as a failure of its own.
 */
export const sendChat = async (
  baseUrl: string,
  secret: string,
  body: Record<string, unknown>,
  stream: boolean,
  options: { readonly timeoutMs?: number; readonly onFirstChunk?: () => void } = {}
): Promise<ChatOutcome> => {
  const started = performance.now()
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify(stream ? { ...body, stream: true, stream_options: { include_usage: true } } : body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000)
  })
  let text = ""
  const decoder = new TextDecoder()
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (text === "") options.onFirstChunk?.()
    text += decoder.decode(bytes, { stream: true })
  }
  const ms = performance.now() - started
  const isStream = (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
  if (!isStream) {
    const parsed = JSON.parse(text) as any
    const ok = response.status === 200
    return {
      stream,
      status: response.status,
      id: ok ? parsed.id : undefined,
      usage: ok ? parsed.usage : undefined,
      complete: ok && parsed.usage !== undefined,
      errorCode: ok ? undefined : parsed.error?.code,
      errorMessage: ok ? undefined : parsed.error?.message,
      ms
    }
  }
  const frames = parseFrames(text)
  const chunks = frames.filter((frame) => frame !== "[DONE]" && frame.error === undefined)
  const usage = chunks.at(-1)?.usage ?? undefined
  return {
    stream,
    status: response.status,
    id: chunks[0]?.id,
    usage,
    complete: frames.at(-1) === "[DONE]" && usage !== undefined,
    errorCode: frames.find((frame) => frame !== "[DONE]" && frame.error !== undefined)?.error.code,
    ms
  }
}
