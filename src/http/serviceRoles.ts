/**
 * Which role (SERVICE_ROLES, domain/serviceRoles.ts) each route belongs to, in one table, and the 404 a replica
 * answers on a route of a role it does not run. The gate runs inside the request pipeline (request id, CORS, the
 * log line and the envelope as on any answer), ahead of the router; the hand-written fronts ahead of the stack
 * (src/http/fastPath.ts for the oracle, src/http/inferenceRoute.ts for the exchange) are not built on a replica
 * that does not run their role, so their requests reach the gate too.
 */
import { HttpApi, type HttpApiGroup, HttpServerRequest } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Effect } from "effect"
import { NotFound } from "../../domain/errors.ts"
import { runsEveryRole, runsRole, type ServiceRole, type ServiceRoles } from "../../domain/serviceRoles.ts"
import { renderError } from "./errorEnvelope.ts"
import { keyPathOf } from "./modelKeyPath.ts"
import { pathOf } from "./paths.ts"
import { patternOf } from "./routeTable.ts"

/** Served by every replica whatever its roles: readiness and the API documents. */
export const EVERY_REPLICA = "every replica"

/**
 * The one table: each group of ServerApi, or `group.endpoint` where one group's endpoints belong to different roles
 * (the maintainer's admin group). A group missing here is served by every replica (a test's extra group); the suite
 * checks every group of ServerApi is named (test/service-roles.test.ts).
 */
export const ROUTE_ROLES: Readonly<Record<string, ServiceRole | typeof EVERY_REPLICA>> = {
  service: EVERY_REPLICA,
  docs: EVERY_REPLICA,
  // The index's reads (and the fast path's hot reads among them).
  oracle: "oracle",
  "admin.revisions": "oracle",
  "admin.publish": "oracle",
  "admin.approve": "oracle",
  "admin.discard": "oracle",
  "admin.refork": "oracle",
  "admin.scan": "oracle",
  // The operator's commands (publication, the chain's state, the faucet) work on the oracle's chain.
  "admin.command": "oracle",
  // Inference and what an API key reads about it: its bills (`/v1/generations`) and its usage.
  chat: "exchange",
  messages: "exchange",
  responses: "exchange",
  embeddings: "exchange",
  models: "exchange",
  estimate: "exchange",
  usage: "exchange",
  generations: "exchange",
  "admin.autoRoutingList": "exchange",
  "admin.setAutoRoutingList": "exchange",
  // Identities, sessions, keys, balances and funding, organizations, apps, points.
  auth: "accounts",
  me: "accounts",
  keys: "accounts",
  account: "accounts",
  activity: "accounts",
  orgs: "accounts",
  pools: "accounts",
  apps: "accounts",
  accountTools: "accounts",
  invitationPage: "accounts",
  points: "accounts",
  leaderboard: "accounts",
  referrals: "accounts",
  referralLinks: "accounts",
  "admin.grantCredits": "accounts",
  "admin.freezeKey": "accounts",
  // The public pages, the console's shell and their assets.
  pages: "web"
}

/** The role of a route, from the table; undefined when every replica serves it. */
export const roleOfEndpoint = (group: string, endpoint: string): ServiceRole | undefined => {
  const role = ROUTE_ROLES[`${group}.${endpoint}`] ?? ROUTE_ROLES[group]
  return role === undefined || role === EVERY_REPLICA ? undefined : role
}

export interface RoleTable {
  /**
   * The role a request reaches: that of the route with its method and path, else (a wrong method) of a route at its
   * path; undefined when every replica serves it or no route has the path (the router answers those as anywhere).
   */
  readonly roleOf: (method: string, target: string) => ServiceRole | undefined
}

export const makeRoleTable = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): RoleTable => {
  const routes: Array<{ method: string; pattern: RegExp; role: ServiceRole | undefined }> = []
  HttpApi.reflect(api as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      routes.push({ method: endpoint.method, pattern: patternOf(endpoint.path), role: roleOfEndpoint(group.identifier, endpoint.name) })
    }
  })
  return {
    roleOf: (method, target) => {
      const keyPath = keyPathOf(target)
      const path = pathOf(keyPath._tag === "Rewritten" ? keyPath.target : target)
      const wanted = method === "HEAD" ? "GET" : method
      const atPath = routes.filter((route) => route.pattern.test(path))
      return (atPath.find((route) => route.method === wanted) ?? atPath[0])?.role
    }
  }
}

/** The answer on a route of a role this replica does not run: 404 `not_found`, naming the role. */
export const roleNotServed = (role: ServiceRole) =>
  renderError(
    new NotFound({
      message: `This replica does not serve the ${role} part of the service (its SERVICE_ROLES do not include ${role}); ask a replica that runs it.`,
      details: { role }
    })
  )

/** Answers 404 on a route of a role not in `roles`; every other request goes on to `app`. */
export const serviceRoleGate =
  (roles: ServiceRoles, table: RoleTable) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    runsEveryRole(roles)
      ? app
      : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const role = table.roleOf(request.method, request.url)
        return role === undefined || runsRole(roles, role) ? app : Effect.succeed(roleNotServed(role))
      })
