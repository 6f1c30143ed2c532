/**
 * The reads of stored responses, fuzzed (test/exchange-fuzz.test.ts): `GET /v1/responses/{id}`, `DELETE` and
 * `GET /v1/responses/{id}/input_items` with `limit` / `order` / `after` / `before`, for ids the fuzz run stored and
 * ids it did not (another's form, odd, encoded, too long), with queries valid, borderline and wrong. Each request is
 * a pure function of (seed, index, the stored responses), and `readProblem` says what is wrong with its answer.
 */
import { mulberry32, Rng } from "./fuzzCore.ts"
import { WEIRD_STRINGS } from "./fuzzValues.ts"

/** A stored response: its id and its input items' ids (what input_items pages by). */
export interface StoredRead {
  readonly id: string
  readonly itemIds: ReadonlyArray<string>
}

export interface ReadRequest {
  readonly method: "GET" | "DELETE"
  /** The path and query, encoded as sent. */
  readonly path: string
  /** The stored response it names, if any. */
  readonly stored: StoredRead | undefined
  readonly kind: "response" | "input_items" | "delete"
  /** The query's parameters as sent. */
  readonly query: ReadonlyArray<readonly [string, string]>
}

const idOf = (rng: Rng, stored: ReadonlyArray<StoredRead>): { id: string; stored: StoredRead | undefined } => {
  if (stored.length > 0 && rng.chance(0.6)) {
    const read = rng.pick(stored)
    return { id: read.id, stored: read }
  }
  const id = rng.pick<() => string>([
    () => "resp_000000000000000000000000",
    () => "resp_",
    () => `gen_${"0".repeat(24)}`,
    () => `msg_${"a".repeat(24)}`,
    () => "r".repeat(rng.pick([200, 201, 5000])),
    () => rng.pick(WEIRD_STRINGS),
    () => (stored.length > 0 ? rng.pick(stored).id.toUpperCase() : "RESP_X"),
    () => (stored.length > 0 ? `${rng.pick(stored).id} ` : "x "),
    () => "..",
    () => "%2e%2e"
  ])()
  return { id, stored: undefined }
}

/** Percent-encoded as UTF-8 (a lone surrogate as U+FFFD: encodeURIComponent would throw). */
const encode = (text: string) =>
  Array.from(new TextEncoder().encode(text), (byte) =>
    /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")

const LIMITS = ["1", "2", "20", "100", "0", "101", "-1", "1.5", "abc", "", "1e2", "99999999999999999999", " 5"]
const ORDERS = ["asc", "desc", "ASC", "", "random", "asc,desc"]

const cursorOf = (rng: Rng, read: StoredRead | undefined): string =>
  read !== undefined && read.itemIds.length > 0 && rng.chance(0.6) ? rng.pick(read.itemIds) : rng.pick(["msg_nothing", "", "%", rng.pick(WEIRD_STRINGS)])

/** Read `index` of a run with `seed` over the responses the run stored. */
export const readRequest = (seed: number, index: number, stored: ReadonlyArray<StoredRead>): ReadRequest => {
  const rng = new Rng(mulberry32((seed ^ 0x5bd1e995 ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0))
  const named = idOf(rng, stored)
  const id = named.id
  // Now and then with its printable ASCII as written (`..`, a bare `%`), or a byte sequence that is not UTF-8 after it.
  const broken = rng.chance(0.07)
  const read = broken ? undefined : named.stored
  const encoded = broken ? `${encode(id)}%ED%A0%80` : rng.chance(0.9) ? encode(id) : id.replace(/[^\x21-\x7e]|[#?/]/gu, encode)
  const kind = rng.weighted<readonly [number, ReadRequest["kind"]]>([[3, "response"], [6, "input_items"], [1, "delete"]], 10)[1]
  if (kind !== "input_items") {
    return { method: kind === "delete" ? "DELETE" : "GET", path: `/v1/responses/${encoded}`, stored: read, kind, query: [] }
  }
  const params: Array<[string, string]> = []
  if (rng.chance(0.6)) params.push(["limit", rng.pick(LIMITS)])
  if (rng.chance(0.5)) params.push(["order", rng.pick(ORDERS)])
  if (rng.chance(0.3)) params.push(["after", cursorOf(rng, read)])
  if (rng.chance(0.2)) params.push(["before", cursorOf(rng, read)])
  if (rng.chance(0.05)) params.push([rng.pick(["limit", "order", "extra", "include[]"]), rng.pick(["2", "asc", "x"])])
  const search = params.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&")
  return {
    method: "GET",
    path: `/v1/responses/${encoded}/input_items${search === "" ? "" : `?${search}`}`,
    stored: read,
    kind,
    query: params
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * What is wrong with an answer (the envelope of a refusal is checked by the caller), the reads sent one at a time:
 * a stored response not yet deleted is never 404 (a query may be refused) and its delete is a 200; anything else is
 * never a 200. A response read is the stored one; a page is OpenAI's list, no longer than its limit, its ids its first
 * and last items'; a delete says so.
 */
export const readProblem = (request: ReadRequest, deleted: ReadonlySet<string>, status: number, body: unknown): string | undefined => {
  const live = request.stored !== undefined && !deleted.has(request.stored.id)
  if (status !== 200) {
    if (live && (status === 404 || request.kind !== "input_items")) return `a stored response answered ${status}`
    return undefined
  }
  if (!isRecord(body)) return "a 200 that is not a JSON object"
  if (!live || request.stored === undefined) return "a 200 for an id no response of this account has (or had)"
  switch (request.kind) {
    case "response":
      return body["object"] === "response" && body["id"] === request.stored.id ? undefined : "a read that is not the stored response"
    case "delete":
      return body["object"] === "response" && body["id"] === request.stored.id && body["deleted"] === true ? undefined : "a delete that does not say so"
    case "input_items": {
      const data = body["data"]
      if (body["object"] !== "list" || !Array.isArray(data) || typeof body["has_more"] !== "boolean") return "a page that is not a list"
      const limits = request.query.filter(([name]) => name === "limit").map(([, value]) => Number(value))
      const limit = limits.length === 0 ? 20 : Math.max(...limits)
      if (data.length > limit || data.length > 100) return `a page of ${data.length} items for limit ${JSON.stringify(request.query)}`
      const ids = data.map((item) => (isRecord(item) ? item["id"] : undefined))
      if (!ids.every((id) => typeof id === "string" && request.stored!.itemIds.includes(id))) return "a page item that is not an input item of the response"
      return body["first_id"] === (ids[0] ?? null) && body["last_id"] === (ids[ids.length - 1] ?? null) ? undefined : "first_id / last_id are not the page's ends"
    }
  }
}
