/**
 * A process that holds an embedded anvil and nothing else (test/anvil-parent-death.test.ts): starts it through
 * services/chain/anvil.ts on the port given as the first argument, prints `{"anvilPid":N}` and waits to be killed.
 */
import { Effect, Scope } from "effect"
import { startAnvil } from "../../services/chain/anvil.ts"

const port = Number(process.argv[2])
const scope = Effect.runSync(Scope.make())
const node = await Effect.runPromise(Scope.extend(startAnvil({ port, chainId: 8453 }), scope))
process.stdout.write(`${JSON.stringify({ anvilPid: node.process.pid })}\n`)
setInterval(() => undefined, 60_000)
