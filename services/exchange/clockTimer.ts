/**
 * Timers for the upstream HTTP client's callbacks (./upstreamHttp.ts), on the fiber's Clock. Those timers live in
 * node's event callbacks and one of them is refreshed on every read of a stream, so on the live clock a timer is the
 * clock's own scheduler, a plain `setTimeout` refreshed in place: no fiber, nothing per read beyond node's own. Any
 * other clock (a TestClock) has no scheduler of its own: the wait runs through its `sleep` in a fiber, so a test moves
 * an upstream timeout with `TestClock.adjust` like every other rule about time.
 */
import { Clock, Duration, Effect, Fiber } from "effect"

export interface ClockTimer {
  /** Starts the wait again from now (a read arrived). */
  readonly refresh: () => void
  /** The task will not run. */
  readonly cancel: () => void
}

const LiveClock = Clock.make().constructor

export const startTimer = (clock: Clock.Clock, ms: number, task: () => void): ClockTimer => {
  if (clock instanceof LiveClock) {
    const handle = setTimeout(task, ms)
    return { refresh: () => void handle.refresh(), cancel: () => clearTimeout(handle) }
  }
  const wait = Effect.zipRight(clock.sleep(Duration.millis(ms)), Effect.sync(task))
  let fiber = Effect.runFork(wait)
  const cancel = () => void Effect.runFork(Fiber.interrupt(fiber))
  return {
    refresh: () => {
      cancel()
      fiber = Effect.runFork(wait)
    },
    cancel
  }
}
