/**
 * Identity (issue 9): CF IDs, e-mail codes and the outbox, sessions, SIWE and signed-request nonces, personal accounts.
 */
import { Effect } from "effect"

export default Effect.void
