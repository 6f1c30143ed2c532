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
    const shell = Fs.readFileSync(Path.join(distDir, manifest.pages.public.html))
    const assets = new Map(
      manifest.assets.map((asset) => [
        Path.basename(asset.path),
        { bytes: Fs.readFileSync(Path.join(distDir, asset.path)), contentType: CONTENT_TYPES[Path.extname(asset.path)] ?? "application/octet-stream" }
      ])
    )
    const page = HttpServerResponse.uint8Array(shell, {
      contentType: "text/html; charset=utf-8",
      headers: { "cache-control": "no-cache", "x-content-type-options": "nosniff", "referrer-policy": "same-origin" }
    })
    return {
      manifest,
      /** The page shell: every public page is the same document, routed in the browser. */
      page: () => page,
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
