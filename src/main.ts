/**
 * `npm start`: the whole service on the configured (or embedded) dependencies, until SIGTERM/SIGINT.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { MainLive } from "../layers/Main.ts"

Layer.launch(MainLive).pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
