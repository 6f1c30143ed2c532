/**
 * The import graph of the product's sources and its cycles (test/import-cycles.test.ts). Reading the files is
 * `readSources`; everything after it (specifiers, resolution, the graph, Tarjan's strongly connected components) is
 * pure over plain data, so a test can feed it a small graph of its own.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

/** Edges by file: every file is a key, even one that imports nothing. Paths are relative to the root, with `/`. */
export type ImportGraph = ReadonlyMap<string, ReadonlyArray<string>>

const SOURCE = /\.tsx?$/
const DECLARATION = /\.d\.ts$/

/**
 * Every module specifier a file names: `import`, `import type`, `export ... from`, `export type ... from`, side-effect
 * imports, `import x = require(...)`, and `import("...")` calls with a literal argument (TypeScript's own scanner, so
 * strings and comments that merely look like imports are not counted).
 */
export const specifiersOf = (source: string): ReadonlyArray<string> =>
  ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName)

/**
 * The file a relative specifier names among `files`, as TypeScript's NodeNext resolution with
 * `allowImportingTsExtensions` finds it: the path as written, a `.js`/`.jsx` written for its `.ts`/`.tsx`, the path with
 * `.ts`/`.tsx` added, or the folder's `index.ts`/`index.tsx`. Undefined for a package, or for a path outside `files`.
 */
export const resolveSpecifier = (from: string, specifier: string, files: ReadonlySet<string>): string | undefined => {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined
  const base = Path.posix.normalize(Path.posix.join(Path.posix.dirname(from), specifier)).replace(/\/$/, "")
  const candidates = [
    base,
    base.replace(/\.js$/, ".ts"),
    base.replace(/\.jsx$/, ".tsx"),
    `${base}.ts`,
    `${base}.tsx`,
    `${base}/index.ts`,
    `${base}/index.tsx`
  ]
  return candidates.find((candidate) => files.has(candidate))
}

/** The graph of `sources` (path to text): an edge for each specifier that resolves to another of them. */
export const importGraphOf = (sources: ReadonlyMap<string, string>): ImportGraph => {
  const files = new Set(sources.keys())
  const graph = new Map<string, ReadonlyArray<string>>()
  for (const [file, text] of sources) {
    const targets = new Set<string>()
    for (const specifier of specifiersOf(text)) {
      const target = resolveSpecifier(file, specifier, files)
      if (target !== undefined) targets.add(target)
    }
    graph.set(file, [...targets].sort())
  }
  return graph
}

/**
 * Tarjan's strongly connected components of `graph`: every component, each listed in sorted order, the components in
 * the order of their sorted first files. Iterative, so a deep chain of imports cannot overflow the stack. An edge to a
 * file that is not a key is ignored.
 */
export const stronglyConnectedComponents = (graph: ImportGraph): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const lowLink = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: Array<string> = []
  const components: Array<Array<string>> = []
  let next = 0

  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue
    const edgesOf = (node: string) => (graph.get(node) ?? []).filter((target) => graph.has(target))
    // Each frame: a node, its edges, and how many of them have been followed.
    const frames: Array<{ node: string; edges: ReadonlyArray<string>; edge: number }> = [{ node: root, edges: edgesOf(root), edge: 0 }]
    index.set(root, next)
    lowLink.set(root, next)
    next += 1
    stack.push(root)
    onStack.add(root)
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!
      if (frame.edge < frame.edges.length) {
        const target = frame.edges[frame.edge]!
        frame.edge += 1
        if (!index.has(target)) {
          index.set(target, next)
          lowLink.set(target, next)
          next += 1
          stack.push(target)
          onStack.add(target)
          frames.push({ node: target, edges: edgesOf(target), edge: 0 })
        } else if (onStack.has(target)) {
          lowLink.set(frame.node, Math.min(lowLink.get(frame.node)!, index.get(target)!))
        }
        continue
      }
      frames.pop()
      const parent = frames[frames.length - 1]
      if (parent !== undefined) lowLink.set(parent.node, Math.min(lowLink.get(parent.node)!, lowLink.get(frame.node)!))
      if (lowLink.get(frame.node) === index.get(frame.node)) {
        const component: Array<string> = []
        for (;;) {
          const member = stack.pop()!
          onStack.delete(member)
          component.push(member)
          if (member === frame.node) break
        }
        components.push(component.sort())
      }
    }
  }
  return components.sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0))
}

/**
 * One shortest path of imports from `start` back to itself, staying inside `members` (breadth-first): the cycle a
 * reader can follow, where the component alone only says which files are tied.
 */
export const shortestCycleThrough = (graph: ImportGraph, start: string, members: ReadonlySet<string>): ReadonlyArray<string> | undefined => {
  const previous = new Map<string, string>()
  const queue: Array<string> = [start]
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue
      if (target === start) {
        const backwards = [start, node]
        while (backwards[backwards.length - 1] !== start) backwards.push(previous.get(backwards[backwards.length - 1]!)!)
        return backwards.reverse()
      }
      if (previous.has(target)) continue
      previous.set(target, node)
      queue.push(target)
    }
  }
  return undefined
}

export interface ImportCycle {
  /** The files tied together (a strongly connected component), sorted. */
  readonly files: ReadonlyArray<string>
  /** One cycle through the first of them, ending where it starts. */
  readonly example: ReadonlyArray<string>
}

/** Every strongly connected component of more than one file, and a file that imports itself. */
export const importCycles = (graph: ImportGraph): ReadonlyArray<ImportCycle> =>
  stronglyConnectedComponents(graph)
    .filter((files) => files.length > 1 || (graph.get(files[0]!) ?? []).includes(files[0]!))
    .map((files) => ({ files, example: shortestCycleThrough(graph, files[0]!, new Set(files)) ?? files }))

/** How a failure names the cycles: each one's files, then one path through them. */
export const describeCycles = (cycles: ReadonlyArray<ImportCycle>): string =>
  cycles
    .map((cycle, n) => `cycle ${n + 1} (${cycle.files.length} files):\n${cycle.files.map((file) => `  ${file}`).join("\n")}\n  e.g. ${cycle.example.join(" -> ")}`)
    .join("\n")

/** The text of every `.ts`/`.tsx` file (not `.d.ts`) under `folders` of `root`, keyed by its path from `root`. */
export const readSources = (root: string, folders: ReadonlyArray<string>): ReadonlyMap<string, string> => {
  const sources = new Map<string, string>()
  const walk = (relative: string): void => {
    for (const entry of Fs.readdirSync(Path.join(root, relative), { withFileTypes: true })) {
      const path = Path.posix.join(relative, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(path)
      } else if (entry.isFile() && SOURCE.test(entry.name) && !DECLARATION.test(entry.name)) {
        sources.set(path, Fs.readFileSync(Path.join(root, path), "utf8"))
      }
    }
  }
  for (const folder of folders) if (Fs.existsSync(Path.join(root, folder))) walk(folder)
  return sources
}
