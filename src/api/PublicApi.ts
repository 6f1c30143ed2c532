/**
 * The public API document (`info.version` "1.0"): everything but inference.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { DocsGroup } from "./DocsApi.ts"
import { OracleGroup } from "./OracleApi.ts"
import { ServiceGroup } from "./ServiceApi.ts"
import { AlwaysPossibleErrors } from "./shared.ts"

export class PublicApi extends HttpApi.make("public")
  .add(OracleGroup)
  .add(DocsGroup)
  .add(ServiceGroup)
  .addError(AlwaysPossibleErrors[0])
  .addError(AlwaysPossibleErrors[1])
  .annotate(OpenApi.Title, "Compute Exchange API")
  .annotate(OpenApi.Version, "1.0")
  .annotate(
    OpenApi.Description,
    "Price-index oracle (SCU), accounts and service operations. Errors always use the envelope " +
      "`{error:{message,type,code,param?,details?,issues?}}`; clients branch on `error.code`."
  ) {}
