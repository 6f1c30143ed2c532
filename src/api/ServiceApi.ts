/**
 * Service operations: readiness for load balancers and operators.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { SERVICE_ROLES } from "../../domain/serviceRoles.ts"

export const ServiceStatus = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  startedAt: Schema.String.annotations({ description: "ISO-8601 instant this process started" }),
  roles: Schema.Array(Schema.Literal(...SERVICE_ROLES)).annotations({
    description: "The roles this replica runs (SERVICE_ROLES); a route of another role answers 404 here"
  }),
  database: Schema.Struct({
    backend: Schema.Literal("postgres", "pglite"),
    latencyMs: Schema.Number.annotations({ description: "Round trip of a trivial query" })
  }),
  exchange: Schema.Struct({
    autoRouting: Schema.Struct({
      listEntries: Schema.Number.annotations({ description: "Entries on the operator's auto list (0: the routing engine chooses)" }),
      listReadable: Schema.Boolean.annotations({ description: "False while the stored list cannot be read (auto answers 503)" }),
      lastUnservableAt: Schema.NullOr(Schema.String).annotations({
        description: "Last time nothing on a non-empty auto list could serve a request (an operator alert); null if never"
      })
    })
  })
}).annotations({ identifier: "ServiceStatus" })

export class ServiceGroup extends HttpApiGroup.make("service")
  .add(
    HttpApiEndpoint.get("status", "/v1/status")
      .addSuccess(ServiceStatus)
      .annotate(OpenApi.Summary, "Readiness: 200 when the service and its database answer, else 503")
  )
  .annotate(OpenApi.Title, "Service") {}
