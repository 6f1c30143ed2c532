/**
 * Seeded, generated request bodies for fuzzing the account, organization, pool, keys, apps and points endpoints:
 * a valid seed body of the endpoint (SEED_BODIES, by endpoint) mutated 1-3 times (a field deleted, retyped, set to a
 * borderline value of its kind, an unknown field added, arrays grown, deep nesting, unicode and control characters,
 * numbers out of range), and now and then a huge body, a body that is not JSON or not a JSON object, a content type
 * that is not JSON, a hostile path segment in place of a real id, or a query string nobody asked for.
 *
 * Every body is a pure function of (seed, endpoint, index): `generateAccountFuzzBody(endpoint, pathParams, seed, index)`
 * replays one alone. The ids of the fixture's resources are written as placeholders (`{{orgId}}`) and put in when the body is
 * sent (`withIds`), so the bytes generated do not depend on the run's database.
 */
import {
  arraysOf,
  clone,
  deepFreeze,
  isObj,
  mulberry32,
  type Obj,
  objectsOf,
  put,
  RawEntries,
  RawJson,
  Rng,
  serialize,
  setKey,
  slotsOf,
  type Value
} from "./fuzzCore.ts"
import { longString, nested, nonObjectBody, randomValue, UNKNOWN_KEYS, WEIRD_STRINGS, weirdNumber, weirdString } from "./fuzzValues.ts"

/** The fixture's resources a body may name, by placeholder (the suite also names its paths' resources by these). */
export type Placeholder = "orgId" | "otherOrgId" | "ownerCfId" | "memberCfId" | "adminCfId" | "keyId" | "poolId" | "invitationToken"
const id = (name: Placeholder) => `{{${name}}}`

/**
 * One or more valid bodies per endpoint (`<group>.<endpoint>` of the HttpApi definitions), each decoding under the
 * endpoint's payload schema (the suite checks it). An endpoint with a body and no entry here fails the suite.
 */
export const SEED_BODIES: Readonly<Record<string, ReadonlyArray<Obj>>> = deepFreeze({
  "me.updateMe": [{ display_name: "Fuzzy Owner" }, {}],
  "me.emailStart": [{ email: "fuzz-start@example.com" }],
  "me.emailVerify": [{ email: "fuzz-verify@example.com", code: "123456" }],
  "keys.issueKey": [
    {},
    { label: "fuzz key" },
    { label: "capped", dailyLimitWei: "1000", monthlyLimitWei: 5000, allowedModels: ["openai/gpt-4.1", "anthropic/claude-sonnet-4.5"] },
    { holderCfId: id("ownerCfId"), label: "held" }
  ],
  "keys.updateKey": [{ label: "renamed" }, { label: null, dailyLimitWei: null, monthlyLimitWei: "1000000", allowedModels: [] }],
  "account.putLimits": [{}, { dailyWei: "1000000000000000000000", weeklyWei: null, monthlyWei: 1000000 }],
  "account.postWithdrawal": [{ to: "0x000000000000000000000000000000000000dEaD", amountWei: "1000" }, { to: "0x1111111111111111111111111111111111111111", amountWei: 1 }],
  "orgs.createOrganization": [{ name: "Fuzz Org" }],
  "orgs.contributeCredits": [{ amountWei: "1000" }, { amountWei: 1000 }],
  "orgs.withdrawCredits": [{ amountWei: "1000" }, { amountWei: 7 }],
  "orgs.setContext": [{ orgId: id("orgId") }, { orgId: null }],
  "orgs.invite": [{ email: "fuzz-invitee@example.com", role: "member" }, { email: "fuzz-admin@example.com", role: "admin" }],
  "orgs.acceptInvitation": [{ token: id("invitationToken") }],
  "pools.createPool": [{ name: "fuzz pool" }, { name: "capped pool", dailyWei: "1000", weeklyWei: 5000, monthlyWei: null }],
  "pools.updatePool": [{ name: "renamed pool" }, { dailyWei: null, weeklyWei: "1000" }, {}],
  "apps.createAppGrant": [{ appName: "fuzz app" }, { appName: "fuzz actor", scopes: ["account:read", "account:act"] }],
  "accountTools.callAccountTool": [
    { tool: "account.overview" },
    { tool: "account.keys", input: {} },
    { tool: "account.spend", input: { period: "week", breakdown: "model" } },
    { tool: "account.pools" },
    { tool: "account.set_budget_caps", input: { dailyWei: "1000000000000000000000", weeklyWei: null } }
  ]
})

const weiValues = (): ReadonlyArray<Value> => [
  "1", "1000", 1000, "0", 0, -1, "-1", "01", "1.5", 1.5, "1e3", "0x10", " 1000", "1000 ", "１０００", "+5",
  "9".repeat(78), "9".repeat(79), "1" + "0".repeat(77), 2 ** 53, new RawJson("9007199254740993"), new RawJson("1e400"),
  new RawJson("-0"), new RawJson("1.0"), null, "", true, [], {}, ["1000"], { amount: "1" }
]
const names = (max: number): ReadonlyArray<Value> => [
  "team", "", " ", "  padded  ", "a".repeat(max), "a".repeat(max + 1), "😀".repeat(Math.ceil(max / 2)), "\u0000", "\u202eevil",
  "tab\there", "line\nbreak", "\u0007bell", "\u200b", "<script>alert(1)</script>", "'; DROP TABLE accounts; --", 5, null, ["team"]
]
const emails: ReadonlyArray<Value> = [
  "alice@example.com", "ALICE@EXAMPLE.COM", " bob@example.com ", "no-at-sign", "a@b", "a@b.c", `${"x".repeat(64)}@example.com`,
  `${"x".repeat(65)}@example.com`, `a@${"d".repeat(250)}.com`, "someone@mailinator.com", "a@@b.com", "üser@exämple.com",
  "a\u0000@example.com", "a b@example.com", "@example.com", "a@.", "", null, 7, ["alice@example.com"]
]
const cfIds: ReadonlyArray<Value> = [id("ownerCfId"), id("memberCfId"), id("adminCfId"), "cf_aaaaaaaaaaaa", "cf_", "CF_AAAAAAAAAAAA", "cf_aaaaaaaaaaa1", "", null, 1]

/** Plausible, borderline or wrong values for each field name the seed bodies use (shared across endpoints). */
const FIELD_VALUES: Readonly<Record<string, ReadonlyArray<Value>>> = deepFreeze({
  amountWei: weiValues(),
  dailyWei: weiValues(),
  weeklyWei: weiValues(),
  monthlyWei: weiValues(),
  dailyLimitWei: weiValues(),
  monthlyLimitWei: weiValues(),
  display_name: names(64),
  label: names(100),
  name: names(100),
  appName: names(100),
  email: emails,
  code: ["123456", "000000", "12345", "1234567", "12345a", "１２３４５６", " 123456", 123456, null, ""],
  role: ["admin", "member", "owner", "Owner", "ADMIN", "", null, 1, ["member"]],
  orgId: [id("orgId"), id("otherOrgId"), null, "org_aaaaaaaaaaaa", "org_", "ORG_AAAAAAAAAAAA", "personal", "", 5, {}],
  token: [id("invitationToken"), `cfi_${"A".repeat(43)}`, `cfi_${"A".repeat(42)}`, `cfi_${"A".repeat(44)}`, `cfi_${"!".repeat(43)}`, "", null],
  holderCfId: cfIds,
  to: [
    "0x000000000000000000000000000000000000dEaD", "0x0000000000000000000000000000000000000000", `0x${"Z".repeat(40)}`,
    `0x${"a".repeat(39)}`, `0x${"a".repeat(41)}`, `0X${"a".repeat(40)}`, "a".repeat(42), "vitalik.eth", "", null
  ],
  allowedModels: [
    [], ["openai/gpt-4.1"], ["gpt-4.1", "GPT-4.1", "openai/gpt-4.1"], Array.from({ length: 51 }, (_, i) => `vendor/model-${i}`),
    Array.from({ length: 201 }, () => "openai/gpt-4.1"), [""], ["a".repeat(201)], ["nobody/nothing"], "openai/gpt-4.1", [null], null
  ],
  scopes: [["account:read"], ["account:act"], ["account:read", "account:act"], [], ["account:admin"], ["account:read", "account:read", "account:read"], "account:read", [null], null],
  tool: ["account.overview", "account.keys", "account.spend", "account.pools", "account.set_budget_caps", "account.nope", "", "ACCOUNT.OVERVIEW", "__proto__", "constructor", "toString", "a".repeat(101), null, 1],
  input: [
    {}, { period: "day", breakdown: "key" }, { period: "month", breakdown: "day" }, { period: "year", breakdown: "model" }, { period: "day" },
    { dailyWei: "1" }, { dailyWei: null, weeklyWei: null, monthlyWei: null }, { dailyWei: "0" }, { dailyWei: "9".repeat(79) }, { extra: true },
    null, [], "input", 0
  ],
  period: ["day", "week", "month", "year", "", null, 1],
  breakdown: ["model", "key", "day", "app", "", null, []]
})

/** Path segments sent in place of a real id: unknown, malformed, encoded, empty, long. */
const hostileSegment = (rng: Rng): string =>
  rng.pick<() => string>([
    () => "",
    () => "%00",
    () => "..",
    () => "%2e%2e",
    () => "%2F",
    () => "key_0000000000000000",
    () => "org_aaaaaaaaaaaa",
    () => "pool_0000000000000000",
    () => "cf_aaaaaaaaaaaa",
    () => "inv_0000000000000000",
    () => "KEY_0000000000000000",
    () => "a".repeat(rng.pick([300, 5000])),
    () => "%ZZ",
    () => {
      try {
        return encodeURIComponent(weirdString(rng).slice(0, 500))
      } catch {
        // A lone surrogate cannot be percent-encoded by the platform: its bytes are written as they are.
        return "%ED%A0%80"
      }
    }
  ])()

const hostileQuery = (rng: Rng): string =>
  rng.pick([
    "?",
    "?a=1",
    "?limit=0&cursor=-1",
    "?__proto__[polluted]=1",
    "?a=%ZZ",
    `?x=${"y".repeat(8000)}`,
    "?limit=1e400",
    "?%00=%00",
    "?a&a&a=&=",
    "?orgId=org_aaaaaaaaaaaa&cf_session=nope"
  ])

type Mutation = (rng: Rng, body: Obj, fields: ReadonlyArray<string>) => string | undefined

/** The field names an endpoint's seed bodies use, nested ones included (`input.period`'s `period`). */
const fieldNamesOf = (seeds: ReadonlyArray<Obj>): ReadonlyArray<string> =>
  [...new Set(seeds.flatMap((seed) => slotsOf(seed).flatMap((slot) => (typeof slot.key === "string" ? [slot.key] : []))))].filter((name) => name in FIELD_VALUES)

const MUTATIONS: ReadonlyArray<readonly [weight: number, name: string, Mutation]> = [
  [10, "delete", (rng, body) => {
    const objects = objectsOf(body).filter((o) => Object.keys(o.obj).length > 0)
    if (objects.length === 0) return undefined
    const { obj, path } = rng.chance(0.5) ? objects[0]! : rng.pick(objects)
    if (Object.keys(obj).length === 0) return undefined
    const key = rng.pick(Object.keys(obj))
    delete obj[key]
    return `delete ${path}.${key}`
  }],
  [12, "retype", (rng, body) => {
    const slots = slotsOf(body)
    if (slots.length === 0) return undefined
    const slot = rng.pick(slots)
    put(slot, randomValue(rng))
    return `retype ${slot.path}`
  }],
  [8, "unknown field", (rng, body) => {
    const objects = objectsOf(body)
    const { obj, path } = rng.chance(0.6) ? objects[0]! : rng.pick(objects)
    const key = rng.chance(0.2) ? weirdString(rng).slice(0, 40) : rng.pick(UNKNOWN_KEYS)
    setKey(obj, key, randomValue(rng, 1))
    return `add ${path}.${JSON.stringify(key)}`
  }],
  [16, "known field", (rng, body, fields) => {
    if (fields.length === 0) return undefined
    const name = rng.pick(fields)
    // Where the field lives in this body (`period` sits in `input`), else at the top.
    const where = objectsOf(body).find((o) => name in o.obj) ?? { obj: body, path: "" }
    setKey(where.obj, name, clone(rng.pick(FIELD_VALUES[name]!)))
    return `set ${where.path}.${name}`
  }],
  [5, "array size", (rng, body) => {
    const arrays = arraysOf(body)
    if (arrays.length === 0) return undefined
    const slot = rng.pick(arrays)
    const items = slot.value as Array<Value>
    const size = rng.pick([0, 1, 2, 3, 50, 51, 200, 201, 1000])
    put(slot, items.length === 0 ? Array.from({ length: size }, () => randomValue(rng, 2)) : Array.from({ length: size }, (_, i) => clone(items[i % items.length]!)))
    return `resize ${slot.path} to ${size}`
  }],
  [3, "deep nesting", (rng, body) => {
    const slots = slotsOf(body)
    const depth = rng.pick([10, 100, 1000, 3000, 5000])
    if (slots.length === 0) {
      setKey(body, "nested", nested(rng, depth))
      return `nest .nested ${depth} deep`
    }
    const slot = rng.pick(slots)
    put(slot, nested(rng, depth))
    return `nest ${slot.path} ${depth} deep`
  }],
  [7, "unicode", (rng, body) => {
    const strings = slotsOf(body).filter((s) => typeof s.value === "string")
    if (strings.length === 0) return undefined
    const slot = rng.pick(strings)
    const original = slot.value as string
    const at = rng.int(original.length + 1)
    put(slot, rng.chance(0.5) ? original.slice(0, at) + rng.pick(WEIRD_STRINGS) + original.slice(at) : rng.chance(0.2) ? longString(rng) : weirdString(rng))
    return `unicode ${slot.path}`
  }],
  [4, "number", (rng, body) => {
    const numbers = slotsOf(body).filter((s) => typeof s.value === "number" || typeof s.value === "string")
    if (numbers.length === 0) return undefined
    const slot = rng.pick(numbers)
    put(slot, weirdNumber(rng))
    return `number ${slot.path}`
  }]
]

const TOTAL_WEIGHT = MUTATIONS.reduce((sum, [w]) => sum + w, 0)
const pickMutation = (rng: Rng) => rng.weighted(MUTATIONS, TOTAL_WEIGHT)

/** The body ceiling of SPEC "Limits": a body above it is refused (413) before it is parsed. */
export const BODY_CEILING_BYTES = 4_194_304

export interface AccountFuzzBody {
  readonly endpoint: string
  readonly index: number
  readonly seedBody: number
  readonly mutations: ReadonlyArray<string>
  /** The body, with placeholders for the fixture's ids. */
  readonly bytes: Uint8Array
  /** undefined = no Content-Type header. */
  readonly contentType: string | undefined
  /** Path parameters sent as these raw segments instead of the real resource's id. */
  readonly pathSegments: Readonly<Record<string, string>>
  /** "" or a query string, `?` included. */
  readonly query: string
}

/** One 32-bit seed per (run seed, endpoint, index) (FNV-1a of the endpoint, then murmur3's finalizer). */
const mixSeed = (seed: number, endpoint: string, index: number): number => {
  let h = 0x811c9dc5
  for (const char of endpoint) h = Math.imul(h ^ char.charCodeAt(0), 0x01000193) >>> 0
  for (const part of [seed >>> 0, index, index >>> 16, 0x27d4eb2f]) {
    h = Math.imul(h ^ part, 0x85ebca6b) >>> 0
    h = (h ^ (h >>> 13)) >>> 0
    h = Math.imul(h, 0xc2b2ae35) >>> 0
    h = (h ^ (h >>> 16)) >>> 0
  }
  return h
}

const text = (s: string) => new TextEncoder().encode(s)

/**
 * Body `index` of a run with `seed` for `endpoint` (`<group>.<endpoint>`), whose path has `pathParams`: one of its
 * seed bodies with 1-3 mutations, or (rarely) something that is not a JSON object, or far too large.
 */
export const generateAccountFuzzBody = (endpoint: string, pathParams: ReadonlyArray<string>, seed: number, index: number): AccountFuzzBody => {
  const seeds = SEED_BODIES[endpoint]
  if (seeds === undefined) throw new Error(`no seed body for ${endpoint}: add it to SEED_BODIES`)
  const rng = new Rng(mulberry32(mixSeed(seed, endpoint, index)))
  const seedBody = rng.int(seeds.length)
  const contentType = rng.chance(0.03)
    ? rng.pick([undefined, "text/plain", "application/json; charset=utf-8", "application/merge-patch+json", "application/x-www-form-urlencoded", "APPLICATION/JSON", "multipart/form-data; boundary=x"])
    : "application/json"
  const pathSegments: Record<string, string> = {}
  if (pathParams.length > 0 && rng.chance(0.04)) pathSegments[rng.pick(pathParams)] = hostileSegment(rng)
  const query = rng.chance(0.03) ? hostileQuery(rng) : ""
  const shape = { endpoint, index, seedBody, contentType, pathSegments, query }
  const validText = serialize(seeds[seedBody]!)
  const roll = rng.next()
  if (roll < 0.04) {
    const { bytes, note } = nonObjectBody(rng, validText)
    return { ...shape, mutations: [note], bytes }
  }
  if (roll < 0.0425) {
    // A string field grown to hundreds of kilobytes; one in ten past the ceiling (413, never parsed). Rare: a few
    // dozen per endpoint already make most of the bytes sent.
    const body = clone(seeds[seedBody]!) as Obj
    const size = rng.chance(0.1) ? BODY_CEILING_BYTES + rng.between(1, 65_536) : rng.between(65_536, 1_000_000)
    const strings = slotsOf(body).filter((s) => typeof s.value === "string" && isObj(s.parent))
    const unit = rng.pick(["a", "é", "😀", "\\u0000"])
    const huge = new RawJson(`"${unit.repeat(Math.ceil(size / text(unit).length))}"`)
    const where = strings.length > 0 ? rng.pick(strings) : undefined
    if (where !== undefined) put(where, huge)
    else setKey(body, "padding", huge)
    return { ...shape, mutations: [`huge string ${where?.path ?? ".padding"} (~${size} bytes)`], bytes: text(serialize(body)) }
  }
  const body = clone(seeds[seedBody]!) as Obj
  const fields = fieldNamesOf(seeds)
  const mutations: Array<string> = []
  for (let i = rng.between(1, 3); i > 0; i--) {
    const [, name, mutate] = pickMutation(rng)
    mutations.push(mutate(rng, body, fields) ?? `${name} (no-op)`)
  }
  const keys = Object.keys(body)
  if (keys.length > 0 && rng.chance(0.02)) {
    // A key written twice: JSON.parse keeps the last one.
    const key = rng.pick(keys)
    mutations.push(`duplicate key ${key}`)
    return { ...shape, mutations, bytes: text(serialize(new RawEntries([...keys.map((k) => [k, body[k]!] as const), [key, randomValue(rng, 1)]]))) }
  }
  return { ...shape, mutations, bytes: text(serialize(body)) }
}

/** The body with each placeholder replaced by the fixture's id (bytes that are not UTF-8 are left as they are). */
export const withIds = (bytes: Uint8Array, ids: Readonly<Record<Placeholder, string>>): Uint8Array => {
  let buffer = Buffer.from(bytes)
  for (const [name, value] of Object.entries(ids)) {
    const placeholder = Buffer.from(`{{${name}}}`)
    for (let at = buffer.indexOf(placeholder); at >= 0; at = buffer.indexOf(placeholder, at + value.length)) {
      buffer = Buffer.concat([buffer.subarray(0, at), Buffer.from(value), buffer.subarray(at + placeholder.length)])
    }
  }
  return buffer
}
