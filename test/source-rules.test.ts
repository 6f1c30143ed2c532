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
import { describe, expect, it } from "vitest"
import { ServerApi } from "../src/api/ServerApi.ts"

const ROOT = new URL("..", import.meta.url).pathname
const SCANNED = ["services", "domain", "src"]

/** Files that may read the wall clock directly, each with why. None does today. */
const ALLOWED: ReadonlyMap<string, string> = new Map()

/** `Date.now` (called or passed as a function) and `new Date()` / `new Date` without an argument. */
const WALL_CLOCK = /\bDate\.now\b|\bnew Date\s*\(\s*\)|\bnew Date\b(?!\s*\()/g

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
  })

  it("none under services/, domain/ or src/: time comes from Clock", () => {
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
 * services do, through services/accounts/Policy.ts), and an error every endpoint of a group answers is declared on the
 * group (`HttpApiGroup.addError`), not repeated on each endpoint.
 */
describe("declared once", () => {
  it("no handler or HTTP module checks a role: permission checks go through the services' policy", () => {
    const offenders = sourceFiles(Path.join(ROOT, "src")).filter((file) => /\b(requireRole|requireActiveRole|requireAllowed|refusal)\(/.test(withoutComments(Fs.readFileSync(file, "utf8"))))
    expect(offenders.map((file) => Path.relative(ROOT, file))).toEqual([])
  })

  it("no error is repeated on every endpoint of a group", () => {
    const members = (ast: AST.AST): ReadonlyArray<AST.AST> => (AST.isUnion(ast) ? ast.types : [ast]).filter((member) => member._tag !== "NeverKeyword")
    const repeated: Array<string> = []
    for (const group of Object.values(ServerApi.groups)) {
      const endpoints = Object.values(group.endpoints)
      if (endpoints.length < 2) continue
      const [first, ...rest] = endpoints.map((endpoint) => new Set(members(endpoint.errorSchema.ast)))
      for (const ast of first!) {
        if (rest.every((set) => set.has(ast))) repeated.push(`${group.identifier}: ${String(AST.getIdentifierAnnotation(ast).pipe(Option.getOrElse(() => ast.toString())))}`)
      }
    }
    expect(repeated).toEqual([])
  })
})
