/**
 * The server's API plus a probe group that only tests mount: endpoints that exercise the shared
 * request pipeline (a validated body, a defect, the resolved client address, a slow answer) without
 * adding such routes to the product. Same API id, so the product's handler layers serve it unchanged.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServerRequest } from "@effect/platform"
import { Effect, Schema } from "effect"
import { ValidationFailed } from "../../domain/errors.ts"
import { AdminApi } from "../../src/api/AdminApi.ts"
import { InferenceApi } from "../../src/api/InferenceApi.ts"
import { PagesApi } from "../../src/api/PagesApi.ts"
import { PublicApi } from "../../src/api/PublicApi.ts"
import { reportAllIssues } from "../../src/api/shared.ts"
import { errorWire } from "../../src/http/errorEnvelope.ts"

export const EchoPayload = reportAllIssues(
  Schema.Struct({
    name: Schema.String.pipe(Schema.minLength(1)),
    count: Schema.Int.pipe(Schema.between(1, 10)),
    tags: Schema.optional(Schema.Array(Schema.String))
  })
)

class ProbeGroup extends HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.post("echo", "/test/echo").setPayload(EchoPayload).addSuccess(EchoPayload).addError(errorWire(ValidationFailed)))
  .add(HttpApiEndpoint.get("defect", "/test/defect").addSuccess(Schema.String))
  .add(HttpApiEndpoint.get("clientIp", "/test/client-ip").addSuccess(Schema.Struct({ ip: Schema.NullOr(Schema.String) })))
  .add(
    HttpApiEndpoint.get("slow", "/test/slow")
      .setUrlParams(Schema.Struct({ ms: Schema.NumberFromString }))
      .addSuccess(Schema.Struct({ sleptMs: Schema.Number }))
  ) {}

export class ProbeApi extends HttpApi.make("server").addHttpApi(PublicApi).addHttpApi(InferenceApi).addHttpApi(AdminApi).addHttpApi(PagesApi).add(ProbeGroup) {}

export const ProbeHandlers = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  handlers
    .handle("echo", ({ payload }) => Effect.succeed(payload))
    .handle("defect", () => Effect.die(new Error("boom in SecretLedgerRepository at /srv/app/secret.ts:42")))
    .handle("clientIp", () =>
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => ({
        ip: request.remoteAddress._tag === "Some" ? request.remoteAddress.value : null
      }))
    )
    .handle("slow", ({ urlParams }) => Effect.as(Effect.sleep(urlParams.ms), { sleptMs: urlParams.ms }))
)
