/**
 * The service's own entry point, with the test-only probe routes mounted: used to observe shutdown
 * with a request in flight.
 */
import { makeMainLayer } from "../../layers/Main.ts"
import { launchService } from "../../src/launch.ts"
import { ProbeApi, ProbeHandlers } from "./probeApi.ts"

launchService(makeMainLayer(ProbeApi, ProbeHandlers))
