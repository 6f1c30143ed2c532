/**
 * The public pages: the shell for each page route, and the hashed assets.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { ServerApi } from "../api/ServerApi.ts"
import { pathOf } from "../http/paths.ts"
import { WebPages } from "../http/WebPages.ts"

export const PagesHandlers = HttpApiBuilder.group(ServerApi, "pages", (handlers) =>
  Effect.gen(function* () {
    const pages = yield* WebPages
    return handlers
      .handle("index", () => Effect.succeed(pages.page("/")))
      .handle("models", () => Effect.succeed(pages.page("/models")))
      .handleRaw("console", ({ request }) => Effect.succeed(pages.console(pathOf(request.url))))
      .handleRaw("consoleRoute", ({ request }) => Effect.succeed(pages.console(pathOf(request.url))))
      .handle("asset", ({ path }) => pages.asset(path.file))
  })
).pipe(Layer.provide(WebPages.Default))
