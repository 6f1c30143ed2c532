/**
 * The typed client against a running service: every endpoint is a method whose request and answer are checked by
 * the Schemas the server itself uses (src/api/). It prints the service's status, the SCU, and the models the oracle
 * tracks, then asks a model that does not exist, to show a refusal arriving as a typed failure.
 *
 *   BASE_URL=http://127.0.0.1:8080 node --import tsx examples/typed-client.ts
 */
import { FetchHttpClient } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect } from "effect"
import { makeClient } from "compute-exchange/api"

const program = Effect.gen(function* () {
  const client = yield* makeClient(yield* Config.string("BASE_URL"))
  const status = yield* client.service.status()
  console.log(`service ${status.status}, version ${status.version}, database ${status.database.backend}`)
  const scu = yield* client.oracle.scu()
  // 204 before the first confirmed revision: the method then answers nothing.
  console.log(scu === undefined ? "no confirmed revision yet" : `SCU ${scu.scuUsd} USD (compute index ${scu.computeIndex ?? "n/a"})`)
  const models = yield* client.oracle.models()
  console.log(`${models.models.length} models tracked`)
  const missing = yield* Effect.flip(client.oracle.model({ path: { key: "no-such-model" } }))
  console.log(`asking for no-such-model: ${missing._tag}`)
})

program.pipe(Effect.provide(FetchHttpClient.layer), NodeRuntime.runMain)
