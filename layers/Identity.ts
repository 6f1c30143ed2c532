/**
 * Identity (issue 9): mail, sign-in, sessions and signed requests, and the SessionAuth middleware every group behind
 * a session uses. SqlClient and AppConfig come from outside.
 */
import { Layer } from "effect"
import { EmailCodes } from "../services/accounts/EmailCodes.ts"
import { Identities } from "../services/accounts/Identity.ts"
import { Mailer } from "../services/accounts/Mailer.ts"
import { Sessions } from "../services/accounts/Sessions.ts"
import { SignedRequests } from "../services/accounts/SignedRequests.ts"
import { SignIn } from "../services/accounts/SignIn.ts"
import { Siwe } from "../services/accounts/Siwe.ts"
import { SessionAuthLive } from "../src/handlers/auth.ts"

const IdentityServicesLive = SignIn.Default.pipe(
  Layer.provideMerge(
    Layer.mergeAll(EmailCodes.Default, Siwe.Default, SignedRequests.Default)
  ),
  Layer.provideMerge(
    Layer.mergeAll(Mailer.Default, Identities.Default, Sessions.Default)
  )
)

export const IdentityLive = Layer.mergeAll(IdentityServicesLive, SessionAuthLive.pipe(Layer.provide(IdentityServicesLive)))
