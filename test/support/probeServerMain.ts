/**
 * The service's own entry point, with the test-only probe routes mounted: used to observe shutdown
 * with a request in flight.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { makeMainLayer } from "../../layers/Main.ts"
import { ProbeApi, ProbeHandlers } from "./probeApi.ts"

Layer.launch(makeMainLayer(ProbeApi, ProbeHandlers)).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
