/**
 * The web pages: each public page rendered on the server, the sitemap and robots.txt, the console's shell for each
 * of its routes, and the hashed assets.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { ServerApi } from "../api/ServerApi.ts"
import { pathOf } from "../http/paths.ts"
import { WebPages } from "../http/WebPages.ts"

/** The pages group over whichever WebPages is provided (layers/Roles.ts builds it only for the web role). */
export const PagesGroupLive = HttpApiBuilder.group(ServerApi, "pages", (handlers) =>
  Effect.gen(function* () {
    const pages = yield* WebPages
    return handlers
      .handleRaw("index", ({ request }) => pages.publicPage(request))
      .handleRaw("models", ({ request }) => pages.publicPage(request))
      .handleRaw("model", ({ request }) => pages.publicPage(request))
      .handleRaw("revisions", ({ request }) => pages.publicPage(request))
      .handleRaw("revision", ({ request }) => pages.publicPage(request))
      .handleRaw("methodology", ({ request }) => pages.publicPage(request))
      .handleRaw("sitemap", ({ request }) => pages.sitemap(request))
      .handleRaw("robots", ({ request }) => Effect.succeed(pages.robots(request)))
      .handleRaw("console", ({ request }) => Effect.succeed(pages.console(pathOf(request.url))))
      .handleRaw("consoleRoute", ({ request }) => Effect.succeed(pages.console(pathOf(request.url))))
      .handle("asset", ({ path }) => pages.asset(path.file))
  })
)

export const PagesHandlers = PagesGroupLive.pipe(Layer.provide(WebPages.Default))
