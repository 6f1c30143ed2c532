/**
 * The one way promise-style suites start the product's layers: configured like the service, through Config, from a
 * map of environment variables, held by a `ManagedRuntime` (Effect's runtime for code outside Effect) that builds
 * them once and releases them on `close`. Suites written as Effects use `@effect/vitest`'s `layer` instead.
 */
import { ConfigProvider, type Effect, Layer, ManagedRuntime } from "effect"

export interface StartedLayer<ROut> {
  /** Runs an effect against the built services. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, ROut>) => Promise<A>
  /** Releases everything the layer acquired (pools, servers, child processes); closing twice is harmless. */
  readonly close: () => Promise<void>
}

export const startLayer = async <ROut, E>(
  layer: Layer.Layer<ROut, E, never>,
  env: Record<string, string>
): Promise<StartedLayer<ROut>> => {
  const runtime = ManagedRuntime.make(
    layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
  )
  try {
    await runtime.runtime()
  } catch (error) {
    // Whatever was acquired before the failure is released, so a failed start leaks no server or process.
    await runtime.dispose()
    throw error
  }
  return {
    run: (effect) => runtime.runPromise(effect),
    close: () => runtime.dispose()
  }
}
