/**
 * Identity (issue 9): mail, sign-in, sessions and signed requests, and the SessionAuth middleware every group behind
 * a session uses; with points and referrals (issue 12), which identity creation and sign-in award, and organizations with
 * their invitations and spending pools, and connected apps' grants. SqlClient and
 * AppConfig come from outside.
 */
import { Layer } from "effect"
import { AppGrants } from "../services/accounts/AppGrants.ts"
import { EmailCodes } from "../services/accounts/EmailCodes.ts"
import { Identities } from "../services/accounts/Identity.ts"
import { Invitations } from "../services/accounts/Invitations.ts"
import { KeyCacheInvalidation } from "../services/accounts/KeyCacheInvalidation.ts"
import { Organizations } from "../services/accounts/Organizations.ts"
import { Pools } from "../services/accounts/Pools.ts"
import { Mailer } from "../services/accounts/Mailer.ts"
import { Points } from "../services/accounts/Points.ts"
import { Referrals } from "../services/accounts/Referrals.ts"
import { Sessions } from "../services/accounts/Sessions.ts"
import { SignedRequests } from "../services/accounts/SignedRequests.ts"
import { SignIn } from "../services/accounts/SignIn.ts"
import { Siwe } from "../services/accounts/Siwe.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { SessionAuthLive } from "../src/handlers/auth.ts"

const IdentityServicesLive = Layer.mergeAll(SignIn.Default, Invitations.Default, Pools.Default, AppGrants.Default).pipe(
  Layer.provideMerge(Organizations.Default),
  Layer.provideMerge(
    Layer.mergeAll(EmailCodes.Default, Siwe.Default, SignedRequests.Default)
  ),
  Layer.provideMerge(
    Layer.mergeAll(Mailer.Default, Identities.Default)
  ),
  Layer.provideMerge(Referrals.Default),
  Layer.provideMerge(Points.Default),
  Layer.provideMerge(Layer.mergeAll(Sessions.Default, Jobs.Default, KeyCacheInvalidation.Default))
)

export const IdentityLive = Layer.mergeAll(IdentityServicesLive, SessionAuthLive.pipe(Layer.provide(IdentityServicesLive)))
