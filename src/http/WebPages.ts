/**
 * The web pages' files and the public pages' HTML. The browser code is built from web/ at start when its sources
 * changed (web/build.ts) and held in memory: the console's shell (`Cache-Control: no-cache`, so a new build is
 * picked up at once) and the hashed assets (`public, max-age=31536000, immutable`: a changed file has a new name).
 *
 * The public pages are rendered here on the server (DESIGN.md section 13) by the build's server module, from the
 * data services/oracle/PublicPages.ts reads in-process, and cached per snapshot: a page is rendered once per
 * snapshot (and freshness, and minute), answered with a strong ETag, and a request naming that ETag gets 304.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Runtime } from "effect"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { distDir, ensureWebBuild, type WebManifest } from "../../web/build.ts"
import { inlineStyleText, type RenderDocument } from "../../web/public/document.ts"
import { NotFound } from "../../domain/errors.ts"
import { publicRouteOf } from "../../domain/oracle/publicPages.ts"
import { type PageAnswer, PublicPages } from "../../services/oracle/PublicPages.ts"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import { pathOf } from "./paths.ts"
import { pageSecurityHeaders } from "./securityHeaders.ts"

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2"
}

/**
 * Rendered pages kept per snapshot (the index's three views, the models table's views, every model and revision),
 * bounded by their bytes: a crawler asking `/models?q=` with a thousand different words (half a megabyte each) must
 * not hold half a gigabyte. The oldest page goes first.
 */
const CACHE_BYTES = 48 * 1024 * 1024

/** The console's shell: no inline script or style, so the policy allows nothing inline (src/http/securityHeaders.ts). */
const CONSOLE_HEADERS = { "cache-control": "no-cache", ...pageSecurityHeaders() }

/**
 * The service's root as seen from a page at `path`: `./` at the root or one segment, `../` per segment more, so
 * every URL in the pages stays relative and a path prefix in front of the service still works.
 */
export const baseFor = (path: string): string => {
  const depth = Math.max(0, path.split("/").length - 2)
  return depth === 0 ? "./" : "../".repeat(depth)
}

interface Rendered {
  readonly body: Uint8Array
  readonly etag: string
  readonly status: number
  readonly location?: string
}

const utf8 = new TextEncoder()

/** True when an If-None-Match header names this ETag (or `*`); weak validators compare by their opaque part. */
const matches = (header: string | undefined, etag: string): boolean =>
  header !== undefined && header.split(",").some((tag) => {
    const candidate = tag.trim().replace(/^W\//, "")
    return candidate === "*" || candidate === etag
  })

export class WebPages extends Effect.Service<WebPages>()("WebPages", {
  effect: Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const manifest: WebManifest = yield* Effect.promise(() =>
      ensureWebBuild({ log: (line) => Runtime.runSync(runtime)(Effect.logInfo(line)) })
    )
    const renderDocument = (yield* Effect.promise(
      () => import(pathToFileURL(Path.join(distDir, manifest.server)).href) as Promise<{ readonly renderDocument: RenderDocument }>
    )).renderDocument
    const publicPages = yield* PublicPages
    const config = yield* AppConfig
    const configuredOrigin = Option.map(config.publicBaseUrl, (url) => url.replace(/\/$/, ""))
    const consoleShell = Fs.readFileSync(Path.join(distDir, manifest.pages.console.html), "utf8")
    const assets = new Map(
      manifest.assets.map((asset) => [
        Path.basename(asset.path),
        { bytes: Fs.readFileSync(Path.join(distDir, asset.path)), contentType: CONTENT_TYPES[Path.extname(asset.path)] ?? "application/octet-stream" }
      ])
    )
    const { scripts, styles } = manifest.pages.public
    // Inlined in every page: on a first visit a linked stylesheet is one more round trip before the first paint.
    const css = styles.map((file) => assets.get(Path.basename(file))?.bytes.toString() ?? "").join("\n")
    // Every public page (the 404 too) allows that one inline style by its hash, and nothing else inline.
    const pageHeaders = { "cache-control": "no-cache", ...pageSecurityHeaders({ styles: [inlineStyleText(css)] }) }

    /** Where canonical and Open Graph URLs point: PUBLIC_BASE_URL, else the address the request came to. */
    const originOf = (request: HttpServerRequest.HttpServerRequest) =>
      Option.getOrElse(configuredOrigin, () => {
        const proto = config.trustProxy._tag === "None" ? undefined : request.headers["x-forwarded-proto"]?.split(",")[0]?.trim()
        return `${proto === "https" ? "https" : "http"}://${request.headers["host"] ?? "localhost"}`
      })

    let cacheKey = ""
    const cache = new Map<string, Rendered>()
    let cachedBytes = 0
    const remember = (entry: string, rendered: Rendered) => {
      cache.set(entry, rendered)
      cachedBytes += rendered.body.byteLength
      for (const [oldest, page] of cache) {
        if (cachedBytes <= CACHE_BYTES) break
        cache.delete(oldest)
        cachedBytes -= page.body.byteLength
      }
    }

    const render = (answer: PageAnswer, path: string, origin: string): Rendered => {
      if (answer._tag === "Redirect") {
        const location = `${baseFor(path)}${answer.location.slice(1)}`
        return { body: new Uint8Array(), etag: "", status: 301, location }
      }
      const html = renderDocument(answer.data, { base: baseFor(path), origin, css, scripts })
      const body = utf8.encode(html)
      return { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`, status: answer.status }
    }

    const respond = (rendered: Rendered, ifNoneMatch: string | undefined) => {
      if (rendered.location !== undefined) {
        return HttpServerResponse.empty({ status: rendered.status, headers: { location: rendered.location, "cache-control": "no-cache" } })
      }
      const headers = { ...pageHeaders, etag: rendered.etag }
      return rendered.status === 200 && matches(ifNoneMatch, rendered.etag)
        ? HttpServerResponse.empty({ status: 304, headers })
        : HttpServerResponse.uint8Array(rendered.body, { status: rendered.status, contentType: "text/html; charset=utf-8", headers })
    }

    /** The page at the request's path and query, from the cache when the snapshot it was rendered from is current. */
    const publicPage = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function* () {
        const queryAt = request.url.indexOf("?")
        const path = pathOf(request.url)
        const params = new URLSearchParams(queryAt === -1 ? "" : request.url.slice(queryAt + 1))
        const origin = originOf(request)
        const key = yield* publicPages.cacheKey
        if (key !== cacheKey) {
          cache.clear()
          cachedBytes = 0
          cacheKey = key
        }
        const entry = `${origin} ${request.url}`
        const held = cache.get(entry)
        if (held !== undefined) return respond(held, request.headers["if-none-match"])
        const rendered = render(yield* publicPages.page(publicRouteOf(path, params)), path, origin)
        remember(entry, rendered)
        return respond(rendered, request.headers["if-none-match"])
      }).pipe(Effect.withSpan("WebPages.publicPage"))

    const sitemap = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.map(publicPages.paths, (paths) => {
        const origin = originOf(request)
        const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;")
        const body = [
          '<?xml version="1.0" encoding="UTF-8"?>',
          '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
          ...paths.map((path) => `<url><loc>${escape(`${origin}${path}`)}</loc></url>`),
          "</urlset>",
          ""
        ].join("\n")
        return HttpServerResponse.text(body, { contentType: "application/xml; charset=utf-8", headers: { "cache-control": "no-cache" } })
      })

    const robots = (request: HttpServerRequest.HttpServerRequest) =>
      HttpServerResponse.text(
        ["User-agent: *", "Allow: /", "Disallow: /console", "", `Sitemap: ${originOf(request)}/sitemap.xml`, ""].join("\n"),
        { contentType: "text/plain; charset=utf-8", headers: { "cache-control": "no-cache" } }
      )

    return {
      manifest,
      publicPage,
      sitemap,
      robots,
      /** The console's shell, for any of its routes, its `<base>` pointing at the service's root. */
      console: (path: string) =>
        HttpServerResponse.text(consoleShell.replace('<base href="./">', `<base href="${baseFor(path)}">`), {
          contentType: "text/html; charset=utf-8",
          headers: CONSOLE_HEADERS
        }),
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
