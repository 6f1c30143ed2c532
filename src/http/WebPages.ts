/**
 * The public pages' files, built from web/ at start when their sources changed (web/build.ts) and held in memory:
 * the page shell (`Cache-Control: no-cache`, so a new build is picked up at once) and the hashed assets
 * (`public, max-age=31536000, immutable`: a changed file has a new name).
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect, Runtime } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { distDir, ensureWebBuild, type WebManifest } from "../../web/build.ts"
import { NotFound } from "../../domain/errors.ts"

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2"
}

export class WebPages extends Effect.Service<WebPages>()("WebPages", {
  effect: Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const manifest: WebManifest = yield* Effect.promise(() =>
      ensureWebBuild({ log: (line) => Runtime.runSync(runtime)(Effect.logInfo(line)) })
    )
    const shellOf = (name: keyof WebManifest["pages"]) => Fs.readFileSync(Path.join(distDir, manifest.pages[name].html), "utf8")
    const shells = { public: shellOf("public"), console: shellOf("console") }
    const assets = new Map(
      manifest.assets.map((asset) => [
        Path.basename(asset.path),
        { bytes: Fs.readFileSync(Path.join(distDir, asset.path)), contentType: CONTENT_TYPES[Path.extname(asset.path)] ?? "application/octet-stream" }
      ])
    )
    const pageHeaders = { "cache-control": "no-cache", "x-content-type-options": "nosniff", "referrer-policy": "same-origin" }
    /**
     * The shell for a page at `path`: its `<base>` points at the service's root relative to that path (`./` at one
     * segment, `../` per segment more), so every URL in the pages stays relative and a path prefix in front of the
     * service still works, whatever route of the console the browser opened.
     */
    const shellAt = (name: keyof typeof shells, path: string) => {
      const depth = Math.max(0, path.split("/").filter((segment) => segment !== "").length - 1)
      const base = depth === 0 ? "./" : "../".repeat(depth)
      return HttpServerResponse.text(shells[name].replace('<base href="./">', `<base href="${base}">`), {
        contentType: "text/html; charset=utf-8",
        headers: pageHeaders
      })
    }
    return {
      manifest,
      /** The public pages' shell: every public page is the same document, routed in the browser. */
      page: (path: string) => shellAt("public", path),
      /** The console's shell, for any of its routes. */
      console: (path: string) => shellAt("console", path),
      asset: (file: string) => {
        const found = assets.get(file)
        return found === undefined
          ? Effect.fail(new NotFound({ message: `No asset ${file}: the page that asked for it is older than the running build; reload it.` }))
          : Effect.succeed(
            HttpServerResponse.uint8Array(found.bytes, {
              contentType: found.contentType,
              headers: { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }
            })
          )
      }
    } as const
  })
}) {}
