/**
 * The console's reads and actions: the typed client over the server's own definitions of the signed-in routes. Every
 * request carries the console's header, which the server requires of a cookie-authenticated change (DESIGN.md
 * section 13), and the session cookie goes with it (same origin). A failure rejects with the API's own message.
 */
import { FetchHttpClient, HttpApi, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { AccountGroup } from "../../src/api/AccountApi.ts"
import { AppsGroup } from "../../src/api/AppsApi.ts"
import { AuthGroup, MeGroup } from "../../src/api/AuthApi.ts"
import { KeysGroup } from "../../src/api/KeysApi.ts"
import { InvitationPageGroup, OrgsGroup } from "../../src/api/OrgsApi.ts"
import { LeaderboardGroup, PointsGroup, ReferralsGroup } from "../../src/api/PointsApi.ts"
import { PoolsGroup } from "../../src/api/PoolsApi.ts"
import { ModelsGroup } from "../../src/api/ExchangeApi.ts"
import { ActivityGroup, GenerationsGroup } from "../../src/api/GenerationsApi.ts"
import { CONSOLE_HEADER, CONSOLE_HEADER_VALUE } from "../../src/http/csrf.ts"

export class ConsoleApi extends HttpApi.make("console").add(AuthGroup).add(MeGroup).add(ModelsGroup).add(GenerationsGroup).add(ActivityGroup).add(AccountGroup).add(KeysGroup).add(OrgsGroup).add(InvitationPageGroup).add(PoolsGroup).add(AppsGroup).add(PointsGroup).add(LeaderboardGroup).add(ReferralsGroup) {}

/** The service's root: the shell's `<base>` points at it whatever console route is open. */
export const baseUrl = new URL(".", document.baseURI).href.replace(/\/$/, "")

const client = Effect.runPromise(
  HttpApiClient.make(ConsoleApi, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader(CONSOLE_HEADER, CONSOLE_HEADER_VALUE))
  }).pipe(Effect.provide(FetchHttpClient.layer))
)

export type ConsoleClient = Awaited<typeof client>

/** The error a call failed with, as the envelope's message; `unauthorized` when the session is gone. */
export class ApiFailure extends Error {
  constructor(message: string, readonly tag: string | undefined) {
    super(message)
  }
}

export const call = async <A, E>(run: (client: ConsoleClient) => Effect.Effect<A, E>): Promise<A> => {
  const exit = await Effect.runPromise(Effect.either(run(await client)))
  if (exit._tag === "Right") return exit.right
  const error = exit.left as unknown
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : undefined
  const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
  throw new ApiFailure(message, tag)
}
