/**
 * The one way test harnesses start the product's layers: configured like the service, through Config, from a map
 * of environment variables; built into a scope of their own; stopped by closing that scope.
 */
import { ConfigProvider, type Context, Effect, Exit, Layer, Scope } from "effect"

export interface StartedLayer<ROut> {
  readonly context: Context.Context<ROut>
  /** Runs an effect against the built services. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, ROut>) => Promise<A>
  /** Runs an effect against the built services and hands back how it ended (a failure as a value). */
  readonly runExit: <A, E>(effect: Effect.Effect<A, E, ROut>) => Promise<Exit.Exit<A, E>>
  /** Releases everything the layer acquired (pools, servers, child processes); closing twice is harmless. */
  readonly close: () => Promise<void>
}

export const startLayer = async <ROut, E>(
  layer: Layer.Layer<ROut, E, never>,
  env: Record<string, string>
): Promise<StartedLayer<ROut>> => {
  const configured = layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
  const scope = Effect.runSync(Scope.make())
  const built = await Effect.runPromiseExit(Layer.buildWithScope(configured, scope))
  if (Exit.isFailure(built)) {
    // Whatever was acquired before the failure is released, so a failed start leaks no server or process.
    await Effect.runPromise(Scope.close(scope, built))
    return Effect.runPromise(Effect.failCause(built.cause))
  }
  const context = built.value
  return {
    context,
    run: (effect) => Effect.runPromise(Effect.provide(effect, context)),
    runExit: (effect) => Effect.runPromiseExit(Effect.provide(effect, context)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
