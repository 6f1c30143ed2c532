/**
 * One call to a vendor (DESIGN.md section 10): the request in the provider's wire format through its adapter
 * (./providers/), answered as the whole reply's events or as a stream once its first event arrived. A service, so a
 * test swaps the vendors for a script (layers/Test.ts `ScriptedUpstream`, no sockets) and everything above it,
 * routing, key pools, cooldowns and failover, runs unchanged.
 */
import { Effect, type Stream } from "effect"
import type { ChatEvent, ChatRequest } from "../../domain/exchange/canonical.ts"
import { adapterFor, type UpstreamTarget } from "./providers/index.ts"
import type { UpstreamFailure } from "./upstreamHttp.ts"

/** What a call answers: the whole reply's events, or its stream once the first event arrived. */
export type Reply =
  | { readonly _tag: "Whole"; readonly events: ReadonlyArray<ChatEvent> }
  | { readonly _tag: "Stream"; readonly events: Stream.Stream<ChatEvent, UpstreamFailure> }

export class UpstreamCalls extends Effect.Service<UpstreamCalls>()("UpstreamCalls", {
  succeed: {
    call: (chat: ChatRequest, target: UpstreamTarget, stream: boolean): Effect.Effect<Reply, UpstreamFailure> => {
      const adapter = adapterFor(target.provider.format)
      return stream
        ? Effect.map(adapter.stream(chat, target), (events): Reply => ({ _tag: "Stream", events }))
        : Effect.map(adapter.complete(chat, target), (events): Reply => ({ _tag: "Whole", events }))
    }
  }
}) {}
