/**
 * The public API document (`info.version` "1.0"): everything but inference.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { AuthGroup, MeGroup } from "./AuthApi.ts"
import { AccountGroup } from "./AccountApi.ts"
import { AccountToolsGroup, AppsGroup } from "./AppsApi.ts"
import { DocsGroup } from "./DocsApi.ts"
import { ActivityGroup, GenerationsGroup } from "./GenerationsApi.ts"
import { KeysGroup } from "./KeysApi.ts"
import { OracleGroup } from "./OracleApi.ts"
import { InvitationPageGroup, OrgsGroup } from "./OrgsApi.ts"
import { PoolsGroup } from "./PoolsApi.ts"
import { LeaderboardGroup, PointsGroup, ReferralLinksGroup, ReferralsGroup } from "./PointsApi.ts"
import { ServiceGroup } from "./ServiceApi.ts"
import { AlwaysPossibleErrors } from "./shared.ts"

export class PublicApi extends HttpApi.make("public")
  .add(OracleGroup)
  .add(DocsGroup)
  .add(ServiceGroup)
  .add(AuthGroup)
  .add(MeGroup)
  .add(KeysGroup)
  .add(AccountGroup)
  .add(GenerationsGroup)
  .add(ActivityGroup)
  .add(OrgsGroup)
  .add(PoolsGroup)
  .add(AppsGroup)
  .add(AccountToolsGroup)
  .add(InvitationPageGroup)
  .add(PointsGroup)
  .add(LeaderboardGroup)
  .add(ReferralsGroup)
  .add(ReferralLinksGroup)
  .addError(AlwaysPossibleErrors[0])
  .addError(AlwaysPossibleErrors[1])
  .annotate(OpenApi.Title, "Compute Exchange API")
  .annotate(OpenApi.Version, "1.0")
  .annotate(
    OpenApi.Description,
    "Price-index oracle (SCU), accounts and service operations. Errors always use the envelope " +
      "`{error:{message,type,code,param?,details?,issues?}}`; clients branch on `error.code`."
  ) {}
