/**
 * The paths and methods an HttpApi serves, so a request that matched no route can be told apart:
 * a known path with another method (405 with Allow) from a path that does not exist (404).
 */
import { HttpApi, type HttpApiGroup } from "@effect/platform"
import { keyPathOf } from "./modelKeyPath.ts"

export interface RouteTable {
  /**
   * Methods served at this path, empty when no route has this path. A model key written with a plain slash counts
   * as the one segment the pipeline rewrites it to, so checks made before that rewrite (the preflight, a body sent
   * to the wrong method) see the route the request will reach.
   */
  readonly methodsAt: (path: string) => ReadonlyArray<string>
  readonly routes: ReadonlyArray<{ readonly method: string; readonly path: string }>
  /** The template of the route a path reaches (`/v1/oracle/models/:key`), for metrics; undefined when none does. */
  readonly templateOf: (path: string) => string | undefined
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A route template (`/v1/oracle/models/:key`, a trailing `*`) as the pattern of the paths it takes. */
export const patternOf = (path: string): RegExp =>
  new RegExp(
    "^" +
      path
        .split("/")
        .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".+" : escapeRegExp(segment)))
        .join("/") +
      "/?$"
  )

export const makeRouteTable = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): RouteTable => {
  const routes: Array<{ method: string; path: string }> = []
  HttpApi.reflect(api as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      routes.push({ method: endpoint.method, path: endpoint.path })
    }
  })
  const compiled = routes.map((route) => ({ ...route, pattern: patternOf(route.path) }))
  return {
    routes,
    templateOf: (path) => {
      const keyPath = keyPathOf(path)
      const routed = keyPath._tag === "Rewritten" ? keyPath.target : path
      return compiled.find((route) => route.pattern.test(routed))?.path
    },
    methodsAt: (path) => {
      const keyPath = keyPathOf(path)
      const routed = keyPath._tag === "Rewritten" ? keyPath.target : path
      const methods = new Set<string>()
      for (const route of compiled) {
        if (route.pattern.test(routed)) methods.add(route.method)
      }
      if (methods.has("GET")) methods.add("HEAD")
      return [...methods].sort()
    }
  }
}
