/**
 * No module of the product imports itself back through others (DESIGN section 2: a request flows src -> services ->
 * domain; a cycle means two modules that cannot be read, tested or loaded one before the other).
 *
 * Type-only imports (`import type`, `export type ... from`) count. They vanish at run time, so a type-only cycle cannot
 * break module loading, but it still ties the modules together for a reader and for the compiler, and it is how a
 * runtime cycle starts (the next change turns `type X` into a value import). The graph is acyclic with them counted,
 * so the stricter rule costs nothing. `import("...")` with a literal path counts too.
 */
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import {
  describeCycles,
  type ImportGraph,
  importCycles,
  importGraphOf,
  readSources,
  resolveSpecifier,
  specifiersOf,
  stronglyConnectedComponents
} from "./support/importGraph.ts"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const FOLDERS = ["domain", "services", "src", "layers"]

const graphOf = (edges: Record<string, ReadonlyArray<string>>): ImportGraph => new Map(Object.entries(edges))

describe("the import graph", () => {
  it("has no cycle among domain/, services/, src/ and layers/", () => {
    const sources = readSources(ROOT, FOLDERS)
    // A wrong root or folder list would find no files and so no cycles.
    expect(sources.size).toBeGreaterThan(200)
    const graph = importGraphOf(sources)
    expect([...graph.values()].some((targets) => targets.length > 0)).toBe(true)
    const cycles = importCycles(graph)
    expect(cycles, `import cycles (cut each by moving pure types or rules to domain/, or splitting a module):\n${describeCycles(cycles)}`).toEqual([])
  })

  it("finds a cycle in a graph that has one, and names its files and a path through them", () => {
    const graph = graphOf({
      "services/a/AppGrants.ts": ["services/a/CurrentIdentity.ts", "services/a/Policy.ts", "domain/a/rules.ts"],
      "services/a/CurrentIdentity.ts": ["services/a/Credentials.ts"],
      "services/a/Credentials.ts": ["services/a/AppGrants.ts", "domain/a/rules.ts"],
      "services/a/Policy.ts": ["services/a/CurrentIdentity.ts"],
      "domain/a/rules.ts": [],
      "domain/b/card.ts": ["domain/b/embedding.ts"],
      "domain/b/embedding.ts": ["domain/b/card.ts"],
      "src/main.ts": ["services/a/AppGrants.ts", "domain/b/card.ts"]
    })
    const cycles = importCycles(graph)
    expect(cycles.map((cycle) => cycle.files)).toEqual([
      ["domain/b/card.ts", "domain/b/embedding.ts"],
      ["services/a/AppGrants.ts", "services/a/Credentials.ts", "services/a/CurrentIdentity.ts", "services/a/Policy.ts"]
    ])
    expect(cycles[1]!.example).toEqual([
      "services/a/AppGrants.ts",
      "services/a/CurrentIdentity.ts",
      "services/a/Credentials.ts",
      "services/a/AppGrants.ts"
    ])
    const message = describeCycles(cycles)
    expect(message).toContain("cycle 2 (4 files)")
    expect(message).toContain("services/a/Policy.ts")
    expect(message).toContain("domain/b/card.ts -> domain/b/embedding.ts -> domain/b/card.ts")
  })

  it("finds none in a graph without one, and counts a file importing itself", () => {
    const acyclic = graphOf({ "a.ts": ["b.ts", "c.ts"], "b.ts": ["c.ts"], "c.ts": [], "d.ts": ["a.ts", "missing.ts"] })
    expect(importCycles(acyclic)).toEqual([])
    expect(stronglyConnectedComponents(acyclic)).toEqual([["a.ts"], ["b.ts"], ["c.ts"], ["d.ts"]])
    expect(importCycles(graphOf({ "a.ts": ["a.ts"] }))).toEqual([{ files: ["a.ts"], example: ["a.ts", "a.ts"] }])
  })

  it("walks a long chain without running out of stack", () => {
    const length = 20_000
    const edges: Record<string, ReadonlyArray<string>> = {}
    for (let i = 0; i < length; i++) edges[`m${i}.ts`] = [`m${(i + 1) % length}.ts`]
    const [cycle] = importCycles(graphOf(edges))
    expect(cycle?.files.length).toBe(length)
  })
})

describe("reading imports", () => {
  it("counts value, type-only, re-export, side-effect and dynamic imports, and nothing in strings or comments", () => {
    const source = [
      `import { a } from "./a.ts"`,
      `import type { B } from "./b.ts"`,
      `import { type C, c } from "./c.ts"`,
      `export { d } from "./d.ts"`,
      `export type { E } from "./e.ts"`,
      `export * from "./f.ts"`,
      `import "./g.ts"`,
      `const h = () => import("./h.ts")`,
      `// import { x } from "./commented.ts"`,
      `const text = 'import { y } from "./quoted.ts"'`,
      `import { Effect } from "effect"`
    ].join("\n")
    expect(specifiersOf(source)).toEqual(["./a.ts", "./b.ts", "./c.ts", "./d.ts", "./e.ts", "./f.ts", "./g.ts", "./h.ts", "effect"])
  })

  it("resolves relative specifiers as the compiler does, and leaves packages out", () => {
    const files = new Set(["services/x/A.ts", "services/x/view.tsx", "services/y/index.ts", "services/z/index.tsx", "domain/rules.ts"])
    const from = "services/x/B.ts"
    expect(resolveSpecifier(from, "./A.ts", files)).toBe("services/x/A.ts")
    expect(resolveSpecifier(from, "./A", files)).toBe("services/x/A.ts")
    expect(resolveSpecifier(from, "./A.js", files)).toBe("services/x/A.ts")
    expect(resolveSpecifier(from, "./view.jsx", files)).toBe("services/x/view.tsx")
    expect(resolveSpecifier(from, "./view", files)).toBe("services/x/view.tsx")
    expect(resolveSpecifier(from, "../y", files)).toBe("services/y/index.ts")
    expect(resolveSpecifier(from, "../z/", files)).toBe("services/z/index.tsx")
    expect(resolveSpecifier(from, "../../domain/rules.ts", files)).toBe("domain/rules.ts")
    expect(resolveSpecifier(from, "../../test/elsewhere.ts", files)).toBeUndefined()
    expect(resolveSpecifier(from, "effect", files)).toBeUndefined()
  })

  it("builds edges only to the files it read", () => {
    const graph = importGraphOf(
      new Map([
        ["src/main.ts", `import { A } from "../services/A.ts"\nimport { Effect } from "effect"\nimport "./other"`],
        ["services/A.ts", `import type { R } from "../domain/r.ts"\nexport * from "../domain/r.ts"`],
        ["domain/r.ts", `export type R = number`]
      ])
    )
    expect(Object.fromEntries(graph)).toEqual({ "src/main.ts": ["services/A.ts"], "services/A.ts": ["domain/r.ts"], "domain/r.ts": [] })
  })
})
