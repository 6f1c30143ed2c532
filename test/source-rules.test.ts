/**
 * Rules the source itself must keep, checked by reading it.
 *
 * Time comes from `Clock` (DESIGN.md section 9): a service reads it through `Clock` / `DateTime`, a pure rule in
 * domain/ takes `now` as an argument, so `TestClock` moves every rule's time in a test. This fails when a direct
 * wall-clock read appears under services/, domain/ or src/. Monotonic timers (`performance.now()`) measure how long
 * something took (log durations, a child process's start-up deadline) and are not wall-clock reads; `new Date(x)`
 * with an argument converts a time it was given.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Option } from "effect"
import * as AST from "effect/SchemaAST"
import { type HttpApi, type HttpApiEndpoint, HttpApiSchema } from "@effect/platform"
import { describe, expect, it } from "vitest"
import { ApiErrorClasses, ErrorTable } from "../domain/errors.ts"
import { AdminApi } from "../src/api/AdminApi.ts"
import { InferenceApi } from "../src/api/InferenceApi.ts"
import { PagesApi } from "../src/api/PagesApi.ts"
import { PublicApi } from "../src/api/PublicApi.ts"
import { ServerApi } from "../src/api/ServerApi.ts"
import { errorWire } from "../src/http/errorEnvelope.ts"

const ROOT = new URL("..", import.meta.url).pathname
const SCANNED = ["services", "domain", "src"]

/** Files that may read the wall clock directly, each with why. None does today. */
const ALLOWED: ReadonlyMap<string, string> = new Map()

/**
 * `Date.now` (called or passed as a function), `new Date()` / `new Date` without an argument, and SQL's `now()` (the
 * database's clock, which TestClock cannot move: a statement takes the time as a parameter).
 */
const WALL_CLOCK = /\bDate\.now\b|\bnew Date\s*\(\s*\)|\bnew Date\b(?!\s*\()|(?<![.\w])now\(\)/g

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(entry.name) ? [path] : []
  })

/** The source without comments, so that a comment may name what it avoids. Strings and templates are kept. */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1")

const wallClockReads = (text: string): Array<{ line: number; found: string }> =>
  [...withoutComments(text).matchAll(WALL_CLOCK)].map((m) => ({ line: text.slice(0, m.index).split("\n").length, found: m[0] }))

describe("wall-clock reads", () => {
  it("finds the forms it looks for, and not a time converted or a monotonic timer", () => {
    expect(wallClockReads("const a = Date.now()\nconst b = new Date()\nconst c = new Date\nconst d = [1].map(Date.now)")).toEqual([
      { line: 1, found: "Date.now" },
      { line: 2, found: "new Date()" },
      { line: 3, found: "new Date" },
      { line: 4, found: "Date.now" }
    ])
    expect(wallClockReads("new Date(ms)\nnew Date(yield* Clock.currentTimeMillis)\nperformance.now()\n// Date.now() in a comment\n/* new Date() */")).toEqual([])
    expect(wallClockReads("sql`UPDATE t SET at = now() WHERE id = ${id}`\nsql`UPDATE t SET at = ${now}::timestamptz`")).toEqual([{ line: 1, found: "now()" }])
  })

  it("none under services/, domain/ or src/ (SQL included): time comes from Clock", () => {
    const found = SCANNED.flatMap((dir) =>
      sourceFiles(Path.join(ROOT, dir)).flatMap((file) => {
        const relative = Path.relative(ROOT, file)
        if (ALLOWED.has(relative)) return []
        return wallClockReads(Fs.readFileSync(file, "utf8")).map((read) => `${relative}:${read.line}: ${read.found}`)
      })
    )
    expect(found).toEqual([])
  })
})

/**
 * Rows are decoded at the repository boundary (DESIGN.md section 9): a statement's result is never cast into a type
 * (`sql<Row>`), it goes through a Schema (`SqlSchema`, `decodedRows`), so corrupt stored data is a defect there.
 */
describe("raw row casts", () => {
  it("none under services/ or src/: rows are decoded with a Schema", () => {
    const found = ["services", "src"].flatMap((dir) =>
      sourceFiles(Path.join(ROOT, dir)).flatMap((file) =>
        [...withoutComments(Fs.readFileSync(file, "utf8")).matchAll(/\bsql<[^>]/g)].map((m) =>
          `${Path.relative(ROOT, file)}:${Fs.readFileSync(file, "utf8").slice(0, m.index).split("\n").length}`
        )
      )
    )
    expect(found).toEqual([])
  })
})

/**
 * Who is calling and what a group may answer are declared once (DESIGN.md section 9): no handler checks a role (the
 * services do, through services/accounts/Policy.ts), and each error is declared at one level: the API's errors on the
 * API, a group's on the group (`HttpApiGroup.addError`, or its middleware's failure), an endpoint only the errors
 * particular to it. An error on every endpoint of a group, or on more than half the endpoints of a group of at least
 * four, belongs on the group; group-level errors are documented on every endpoint of the group, so one stays on its
 * endpoints only where PARTICULAR says why the endpoints without it cannot answer it.
 */
interface DeclaredGroup {
  readonly api: string
  readonly apiErrors: ReadonlyArray<string>
  readonly group: string
  readonly groupErrors: ReadonlyArray<string>
  readonly endpoints: ReadonlyArray<{ readonly endpoint: string; readonly takesInput: boolean; readonly errors: ReadonlyArray<string> }>
}

const errorNames = (ast: AST.AST): ReadonlyArray<string> =>
  (AST.isUnion(ast) ? ast.types : [ast])
    .filter((member) => member._tag !== "NeverKeyword")
    .map((member) => String(AST.getIdentifierAnnotation(member).pipe(Option.getOrElse(() => member.toString()))))

/** What each group of the served APIs declares, read from the definitions (as the OpenAPI documents read them). */
const declarations = (): ReadonlyArray<DeclaredGroup> => {
  const apis = { PublicApi, InferenceApi, AdminApi, PagesApi } as unknown as Record<string, HttpApi.HttpApi.AnyWithProps>
  const declared = Object.entries(apis).flatMap(([api, definition]) =>
    Object.values(definition.groups).map((group) => ({
      api,
      apiErrors: errorNames(definition.errorSchema.ast),
      group: group.identifier,
      groupErrors: errorNames(group.errorSchema.ast),
      endpoints: Object.values<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>(group.endpoints).map((endpoint) => ({
        endpoint: endpoint.name,
        takesInput: [endpoint.pathSchema, endpoint.urlParamsSchema, endpoint.payloadSchema, endpoint.headersSchema].some(Option.isSome),
        errors: errorNames(endpoint.errorSchema.ast)
      }))
    }))
  )
  // Every group the server serves is one of these APIs'.
  expect(declared.map((group) => group.group).sort()).toEqual(Object.keys(ServerApi.groups).sort())
  return declared
}

/** The rules above, over declarations; `particular` maps "group: Error" to why it stays on the endpoints. */
const misplacedErrors = (groups: ReadonlyArray<DeclaredGroup>, particular: ReadonlyMap<string, string>): Array<string> => {
  const found: Array<string> = []
  const usedReasons = new Set<string>()
  for (const { apiErrors, endpoints, group, groupErrors } of groups) {
    for (const error of groupErrors) if (apiErrors.includes(error)) found.push(`${group}: ${error} is declared again on the group: the API declares it`)
    const counts = new Map<string, number>()
    for (const { endpoint, errors } of endpoints) {
      for (const error of errors) {
        if (groupErrors.includes(error)) found.push(`${group}.${endpoint}: ${error} is declared again on the endpoint: its group declares it`)
        else if (apiErrors.includes(error)) found.push(`${group}.${endpoint}: ${error} is declared again on the endpoint: the API declares it`)
        else counts.set(error, (counts.get(error) ?? 0) + 1)
      }
    }
    for (const [error, count] of counts) {
      const onEvery = endpoints.length >= 2 && count === endpoints.length
      const onMost = endpoints.length >= 4 && count > endpoints.length / 2
      if (!onEvery && !onMost) continue
      // A 422 on the endpoints that take a path, query or body: the others can fail no schema, so on the group it would
      // be documented where it cannot happen.
      const without = endpoints.filter(({ errors }) => !errors.includes(error))
      if (error === "ValidationFailed" && without.length > 0 && without.every(({ takesInput }) => !takesInput)) continue
      const key = `${group}: ${error}`
      if (!onEvery && particular.has(key)) {
        usedReasons.add(key)
        continue
      }
      found.push(`${group}: ${error} is declared on ${count} of its ${endpoints.length} endpoints: declare it on the group`)
    }
  }
  for (const key of particular.keys()) {
    if (!usedReasons.has(key)) found.push(`${key} is listed in PARTICULAR but is not repeated on most endpoints of the group: remove the entry`)
  }
  return found.sort()
}

/**
 * Errors repeated on most endpoints of a group that stay on those endpoints, each with why the endpoints without it
 * cannot answer it (on the group it would be documented on them too). An endpoint's handler can fail only with what
 * it, its group or its API declares (the types check it), so an endpoint that does not declare a service error today
 * never answers it; a 422 comes, besides, from a request that fails its schema, which needs a path, query or body.
 */
const PARTICULAR: ReadonlyMap<string, string> = new Map([
  ["account: NotFound", "getLedger, getFunding and getWithdrawals read the signed-in account's own records and never answer 404"],
  ["admin: Conflict", "revisions, grantCredits, autoRoutingList, setAutoRoutingList and command have no 409 outcome: their handlers cannot fail with Conflict"],
  ["apps: Conflict", "createAppGrant and listAppGrants act on no existing grant whose state could refuse them"],
  ["apps: NotFound", "createAppGrant and listAppGrants name no grant"],
  ["apps: OrgRoleRequired", "listAppGrants needs no role in the organization"],
  ["auth: RateLimited", "siweNonce and logout are not sign-in attempts: the sign-in limits do not count them"],
  ["keys: Conflict", "issueKey and listKeys act on no existing key whose state could refuse them"],
  ["keys: NotFound", "issueKey and listKeys name no key"],
  ["keys: OrgRoleRequired", "listKeys needs no role in the organization"],
  ["orgs: NotFound", "createOrganization and listOrganizations name no organization"],
  ["orgs: OrgRoleRequired", "reading an organization and its members, leaving, switching context and accepting an invitation need no role, and creating or listing names no organization"],
  ["pools: OrgRoleRequired", "listPools and getPool need no role: any member reads them"]
])

describe("declared once", () => {
  it("no handler or HTTP module checks a role: permission checks go through the services' policy", () => {
    const offenders = sourceFiles(Path.join(ROOT, "src")).filter((file) => /\b(requireRole|requireActiveRole|requireAllowed|refusal)\(/.test(withoutComments(Fs.readFileSync(file, "utf8"))))
    expect(offenders.map((file) => Path.relative(ROOT, file))).toEqual([])
  })

  it("no error is declared away from where it belongs, in the API as it is", () => {
    expect(misplacedErrors(declarations(), PARTICULAR)).toEqual([])
  })

  it("flags an error repeated on most endpoints of a group, and one declared again below the group or the API", () => {
    const group = (name: string, groupErrors: ReadonlyArray<string>, ...endpoints: ReadonlyArray<ReadonlyArray<string>>): DeclaredGroup => ({
      api: "api",
      apiErrors: ["InternalError"],
      group: name,
      groupErrors,
      endpoints: endpoints.map((errors, i) => ({ endpoint: `e${i + 1}`, takesInput: true, errors }))
    })
    // Three of four endpoints: belongs on the group. Two of four: particular to them.
    expect(misplacedErrors([group("g", [], ["NotFound", "Conflict"], ["NotFound", "Conflict"], ["NotFound"], [])], new Map())).toEqual([
      "g: NotFound is declared on 3 of its 4 endpoints: declare it on the group"
    ])
    // Every endpoint of a small group.
    expect(misplacedErrors([group("g", [], ["NotFound"], ["NotFound"])], new Map())).toEqual([
      "g: NotFound is declared on 2 of its 2 endpoints: declare it on the group"
    ])
    // A 422 on every endpoint with an input stays there; with an endpoint taking input without it, it is flagged.
    const noInput = (declared: DeclaredGroup, endpoint: string): DeclaredGroup => ({
      ...declared,
      endpoints: declared.endpoints.map((e) => (e.endpoint === endpoint ? { ...e, takesInput: false } : e))
    })
    const validating = group("g", [], ["ValidationFailed"], ["ValidationFailed"], ["ValidationFailed"], [])
    expect(misplacedErrors([noInput(validating, "e4")], new Map())).toEqual([])
    expect(misplacedErrors([validating], new Map())).toEqual(["g: ValidationFailed is declared on 3 of its 4 endpoints: declare it on the group"])
    // Declared again on an endpoint or a group.
    expect(misplacedErrors([group("g", ["NotFound", "InternalError"], ["NotFound"], ["InternalError"])], new Map())).toEqual([
      "g.e1: NotFound is declared again on the endpoint: its group declares it",
      "g.e2: InternalError is declared again on the endpoint: its group declares it",
      "g: InternalError is declared again on the group: the API declares it"
    ])
    // A reason why the endpoints without it cannot answer it keeps a repeated error on its endpoints; one no longer needed is flagged.
    const repeated = group("g", [], ["NotFound"], ["NotFound"], ["NotFound"], [])
    expect(misplacedErrors([repeated], new Map([["g: NotFound", "e4 names nothing"]]))).toEqual([])
    expect(misplacedErrors([group("g", [], ["NotFound"], [], [], [])], new Map([["g: NotFound", "e4 names nothing"]]))).toEqual([
      "g: NotFound is listed in PARTICULAR but is not repeated on most endpoints of the group: remove the entry"
    ])
  })

  it("every error class carries the status of the error table, and its wire form the same", () => {
    const statuses = ApiErrorClasses.map((cls) => [cls._tag, HttpApiSchema.getStatusError(cls), HttpApiSchema.getStatusError(errorWire(cls))])
    expect(statuses).toEqual(ApiErrorClasses.map((cls) => [cls._tag, ErrorTable[cls._tag].status, ErrorTable[cls._tag].status]))
  })

  it("no declaration passes a status of its own: it comes from the error class", () => {
    const offenders = sourceFiles(Path.join(ROOT, "src")).filter((file) => /\.addError\([^\n]*\{\s*status/.test(withoutComments(Fs.readFileSync(file, "utf8"))))
    expect(offenders.map((file) => Path.relative(ROOT, file))).toEqual([])
  })
})
