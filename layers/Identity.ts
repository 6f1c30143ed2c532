/**
 * Identity (issue 9): mail, sign-in, sessions and signed requests.
 */
import { Layer } from "effect"

export const IdentityLive = Layer.empty
