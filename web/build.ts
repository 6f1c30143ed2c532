/**
 * Builds the browser code (web/public, later web/console) into hashed static assets under web/dist, with esbuild,
 * from source and offline: `npm run build:web`, at `npm ci` (prepare), and at the service's start when the sources
 * changed since the last build (the service serves what this wrote; src/http/webPages.ts).
 *
 * The API modules the pages import (src/api/*) are shared with the server, so they must stay browser-safe:
 * `platform: "browser"` fails the build when one reaches a `node:*` module, SQL or a service.
 *
 * The sources import Effect through its barrels (`import { Schema } from "effect"`), as the server does. A barrel
 * drags every module of the package into a browser bundle (fast-check among them: ~60 KB gzip more), so the build
 * rewrites such imports into the deep modules they name (`import * as Schema from "effect/Schema"`), which
 * tree-shake.
 */
import * as esbuild from "esbuild"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { gzipSync } from "node:zlib"

export const webRoot = Path.dirname(new URL(import.meta.url).pathname)
export const projectRoot = Path.dirname(webRoot)
export const distDir = Path.join(webRoot, "dist")
const manifestFile = Path.join(distDir, "manifest.json")

/** The pages and their entry points. */
const ENTRIES = { public: Path.join(webRoot, "public", "main.tsx"), console: Path.join(webRoot, "console", "main.tsx") }
const SERVER_ENTRY = Path.join(webRoot, "public", "ssr.tsx")

const CONSOLE_TITLE = "Console: Compute Exchange"

/** Named exports of the `effect` barrel that are functions of effect/Function, not modules. */
const FUNCTION_EXPORTS = new Set(["pipe", "flow", "identity", "absurd", "hole", "unsafeCoerce", "dual", "constant", "constVoid"])

const BARREL_IMPORT = /import\s+(type\s+)?\{([^}]*)\}\s+from\s+"(effect|@effect\/platform)"/g

export const deepImports = (source: string): string =>
  source.replace(BARREL_IMPORT, (_all, typeOnly: string | undefined, names: string, pkg: string) =>
    typeOnly !== undefined
      ? ""
      : names
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== "" && !name.startsWith("type "))
        .map((name) => {
          const [exported, local = exported] = name.split(/\s+as\s+/)
          return pkg === "effect" && FUNCTION_EXPORTS.has(exported!)
            ? `import { ${exported} as ${local} } from "effect/Function";`
            : `import * as ${local} from "${pkg}/${exported}";`
        })
        .join(" ")
  )

const deepImportsPlugin: esbuild.Plugin = {
  name: "effect-deep-imports",
  setup(build) {
    build.onLoad({ filter: /\.tsx?$/ }, async (args) => {
      if (args.path.includes(`${Path.sep}node_modules${Path.sep}`)) return undefined
      const source = await Fs.promises.readFile(args.path, "utf8")
      return { contents: deepImports(source), loader: args.path.endsWith(".tsx") ? "tsx" : "ts" }
    })
  }
}

/**
 * Modules the pages reach only through server code paths of @effect/platform (the router's path matcher, the
 * multipart parser) and the OpenAPI examples of the oracle's schemas: none runs in a page, and together they are
 * ~10 KB gzip of the budget. Each is replaced by exports that fail loudly if a page ever calls them.
 */
const SERVER_ONLY_MODULES: Record<string, ReadonlyArray<string>> = {
  "find-my-way-ts": ["make"],
  multipasta: ["make", "defaultIsFile", "decodeField"]
}
const DOCUMENTATION_ONLY = /[\\/]domain[\\/]oracle[\\/]schemaExamples\.ts$/

const browserOnlyPlugin: esbuild.Plugin = {
  name: "browser-only",
  setup(build) {
    build.onResolve({ filter: /^(find-my-way-ts|multipasta)$/ }, (args) => ({ path: args.path, namespace: "server-only" }))
    build.onLoad({ filter: /.*/, namespace: "server-only" }, (args) => ({
      contents: SERVER_ONLY_MODULES[args.path]!.map(
        (name) => `export const ${name} = () => { throw new Error("${args.path}.${name} is server-only and not in the page bundle") }`
      ).join("\n"),
      loader: "js"
    }))
    build.onLoad({ filter: DOCUMENTATION_ONLY }, async (args) => {
      const source = await Fs.promises.readFile(args.path, "utf8")
      const names = [...source.matchAll(/^export const (\w+)/gm)].map((match) => match[1]!)
      return { contents: names.map((name) => `export const ${name} = undefined`).join("\n"), loader: "ts" }
    })
  }
}

export interface WebAsset {
  /** Path under web/dist, as served below the page's base: `assets/main-XXXX.js`. */
  readonly path: string
  readonly bytes: number
  readonly gzipBytes: number
}

export interface WebManifest {
  /** Hash of every source file the build read (outside node_modules) and of the lockfile: what decides a rebuild. */
  readonly sourceHash: string
  readonly builtAt: string
  /**
   * Each entry's script and style; the console's page shell (`console.html`), one document for all its routes. The
   * public pages have no shell: the server renders each of them whole (web/public/ssr.tsx).
   */
  readonly pages: {
    readonly public: { readonly scripts: ReadonlyArray<string>; readonly styles: ReadonlyArray<string> }
    readonly console: { readonly html: string; readonly scripts: ReadonlyArray<string>; readonly styles: ReadonlyArray<string> }
  }
  readonly assets: ReadonlyArray<WebAsset>
  readonly sources: ReadonlyArray<string>
  /** The public pages' server renderer (web/public/ssr.tsx), built for Node: its path under web/dist. Not served. */
  readonly server: string
}

const hashFiles = (files: ReadonlyArray<string>) => {
  const hash = createHash("sha256")
  for (const file of [...files].sort()) {
    hash.update(file)
    hash.update(Fs.existsSync(file) ? Fs.readFileSync(file) : "(missing)")
  }
  return hash.digest("hex")
}

const lockfile = Path.join(projectRoot, "package-lock.json")

/** The manifest of the last build, if its sources are unchanged since. */
export const currentBuild = (): WebManifest | undefined => {
  if (!Fs.existsSync(manifestFile)) return undefined
  const manifest = JSON.parse(Fs.readFileSync(manifestFile, "utf8")) as WebManifest
  const sources = manifest.sources.map((file) => Path.join(projectRoot, file))
  const unchanged = hashFiles([...sources, lockfile]) === manifest.sourceHash
  return unchanged && manifest.server !== undefined && Fs.existsSync(Path.join(distDir, manifest.server)) && manifest.assets.every((asset) => Fs.existsSync(Path.join(distDir, asset.path)))
    ? manifest
    : undefined
}

const consoleShell = (scripts: ReadonlyArray<string>, styles: ReadonlyArray<string>) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="./">
<link rel="icon" href="data:,">
<title>${CONSOLE_TITLE}</title>
<meta name="description" content="The Standard Compute Unit: a price index of LLM inference, anchored on-chain, and the exchange that bills at it.">
${styles.map((href) => `<link rel="stylesheet" href="./${href}">`).join("\n")}
${scripts.map((src) => `<script type="module" src="./${src}"></script>`).join("\n")}
</head>
<body>
<noscript>The console needs JavaScript. The public pages do not: <a href="./">the index</a>, <a href="./models">the models</a>. The API: <a href="./v1/docs">documentation</a>.</noscript>
<div id="app"></div>
</body>
</html>
`

/** Builds every entry into web/dist (replacing what was there) and returns the manifest. */
export const buildWeb = async (options: { readonly log?: (line: string) => void } = {}): Promise<WebManifest> => {
  const log = options.log ?? (() => undefined)
  const started = performance.now()
  const staging = `${distDir}.${process.pid}.tmp`
  Fs.rmSync(staging, { recursive: true, force: true })
  // One build per entry: esbuild decides what is live across all the entries of a build, so a shared build
  // hands the public page whatever the console uses from a module both import (viem's keccak, say): 8 KB gzip.
  const builds = await Promise.all(
    (Object.keys(ENTRIES) as Array<keyof typeof ENTRIES>).map((name) =>
      esbuild.build({
        entryPoints: { [name]: ENTRIES[name] },
        outdir: Path.join(staging, "assets"),
        entryNames: "[name]-[hash]",
        chunkNames: "chunk-[hash]",
        assetNames: "[name]-[hash]",
        bundle: true,
        splitting: true,
        format: "esm",
        platform: "browser",
        target: ["es2022"],
        minify: true,
        sourcemap: false,
        legalComments: "none",
        jsx: "automatic",
        jsxImportSource: "preact",
        metafile: true,
        logLevel: "silent",
        absWorkingDir: projectRoot,
        tsconfig: Path.join(webRoot, "tsconfig.json"),
        plugins: [browserOnlyPlugin, deepImportsPlugin]
      })
    )
  )
  // The same components, built for the server to render the public pages (their packages stay in node_modules).
  const serverBuild = await esbuild.build({
    entryPoints: { ssr: SERVER_ENTRY },
    outdir: Path.join(staging, "server"),
    entryNames: "[name]-[hash]",
    bundle: true,
    format: "esm",
    platform: "node",
    target: ["node20"],
    packages: "external",
    loader: { ".css": "empty" },
    sourcemap: false,
    jsx: "automatic",
    jsxImportSource: "preact",
    metafile: true,
    logLevel: "silent",
    absWorkingDir: projectRoot,
    tsconfig: Path.join(webRoot, "tsconfig.json")
  })
  const serverModule = Object.keys(serverBuild.metafile.outputs).find((file) => file.endsWith(".js"))!
  const metafile: esbuild.Metafile = {
    inputs: Object.assign({}, ...builds.map((b) => b.metafile.inputs)),
    outputs: Object.assign({}, ...builds.map((b) => b.metafile.outputs))
  }
  const outputs = metafile.outputs
  const assets: Array<WebAsset> = Object.keys(outputs).map((file) => {
    const bytes = Fs.readFileSync(Path.join(projectRoot, file))
    return { path: Path.relative(staging, Path.join(projectRoot, file)), bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length }
  })
  const entryOf = (name: string) => {
    const [file, output] = Object.entries(outputs).find(([, o]) => o.entryPoint !== undefined && Path.resolve(projectRoot, o.entryPoint) === Path.resolve((ENTRIES as Record<string, string>)[name]!))!
    return {
      scripts: [Path.relative(staging, Path.join(projectRoot, file))],
      styles: output.cssBundle === undefined ? [] : [Path.relative(staging, Path.join(projectRoot, output.cssBundle))]
    }
  }
  const consoleEntry = entryOf("console")
  Fs.writeFileSync(Path.join(staging, "console.html"), consoleShell(consoleEntry.scripts, consoleEntry.styles))
  const pages: WebManifest["pages"] = { public: entryOf("public"), console: { html: "console.html", ...consoleEntry } }
  const sources = Object.keys({ ...metafile.inputs, ...serverBuild.metafile.inputs }).filter((file) => !file.includes("node_modules")).map((file) => Path.relative(projectRoot, Path.resolve(projectRoot, file)))
  const manifest: WebManifest = {
    sourceHash: hashFiles([...sources.map((file) => Path.join(projectRoot, file)), lockfile]),
    builtAt: new Date().toISOString(),
    pages,
    assets,
    sources,
    server: Path.relative(staging, Path.join(projectRoot, serverModule))
  }
  Fs.writeFileSync(Path.join(staging, "manifest.json"), JSON.stringify(manifest, null, 2))
  // What went into each asset, for the size budget (docs/performance.md); not served.
  Fs.writeFileSync(Path.join(staging, "metafile.json"), JSON.stringify(metafile))
  // Swapped in whole: a service reading web/dist never sees half a build.
  const previous = `${distDir}.${process.pid}.old`
  if (Fs.existsSync(distDir)) Fs.renameSync(distDir, previous)
  Fs.renameSync(staging, distDir)
  Fs.rmSync(previous, { recursive: true, force: true })
  const js = assets.filter((a) => a.path.endsWith(".js")).reduce((sum, a) => sum + a.gzipBytes, 0)
  log(`web pages built in ${Math.round(performance.now() - started)} ms: ${assets.length} assets, JavaScript ${(js / 1024).toFixed(1)} KB gzip`)
  return manifest
}

/** The current build, rebuilt first when the sources changed (or none exists). */
export const ensureWebBuild = async (options: { readonly log?: (line: string) => void } = {}): Promise<WebManifest> =>
  currentBuild() ?? buildWeb(options)

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === Path.join(webRoot, "build.ts")) {
  const force = process.argv.includes("--force")
  const manifest = force ? await buildWeb({ log: console.log }) : currentBuild()
  if (manifest === undefined) await buildWeb({ log: console.log })
  else if (!force) console.log("web pages are current; nothing to build (--force rebuilds)")
}
