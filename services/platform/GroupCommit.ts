/**
 * Group commit: callers submit items one by one; one worker runs them in batches, each batch being whatever queued
 * while the previous one ran (up to `maxBatch`), so one statement (one transaction, one WAL flush) serves many callers
 * and the batch grows with the load instead of waiting for a timer. Each caller gets its own item's result; a batch
 * that fails as a whole fails each of its callers with that cause.
 *
 * A batch, once taken, runs to its end (not interruptible): its items are written or not, never half. When the scope
 * closes, the worker finishes its batch, then whatever is still queued runs before the scope is gone.
 */
import { Deferred, Effect, Either, Exit, Queue, type Scope } from "effect"

interface Pending<I, O, E> {
  readonly item: I
  readonly done: Deferred.Deferred<O, E>
}

export interface GroupCommit<I, O, E> {
  readonly submit: (item: I) => Effect.Effect<O, E>
}

export const makeGroupCommit = <I, O, E>(options: {
  /** One result per item, in the items' order. */
  readonly run: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<Either.Either<O, E>>>
  readonly maxBatch: number
}): Effect.Effect<GroupCommit<I, O, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Pending<I, O, E>>()

    const runBatch = (batch: ReadonlyArray<Pending<I, O, E>>): Effect.Effect<void> =>
      Effect.flatMap(Effect.exit(options.run(batch.map((p) => p.item))), (exit) =>
        Effect.forEach(
          batch,
          (pending, i) =>
            Exit.isFailure(exit)
              ? Deferred.failCause(pending.done, exit.cause)
              : exit.value[i] === undefined
              ? Deferred.die(pending.done, new Error(`a batch of ${batch.length} answered ${exit.value.length} results`))
              : Either.match(exit.value[i]!, {
                onLeft: (error) => Deferred.fail(pending.done, error),
                onRight: (value) => Deferred.succeed(pending.done, value)
              }),
          { discard: true }
        ))

    // Added before the worker is forked, so it runs after the worker stopped: nothing submitted is left waiting.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Queue.takeAll(queue), (left) => (left.length === 0 ? Effect.void : runBatch(Array.from(left))))
    )

    yield* Effect.forkScoped(
      Effect.forever(
        // Interruptible only while it waits for the first item: an item taken is always run.
        Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(restore(Queue.take(queue)), (first) =>
            Effect.flatMap(Queue.takeUpTo(queue, options.maxBatch - 1), (rest) => runBatch([first, ...rest])))
        )
      )
    )

    const submit = (item: I): Effect.Effect<O, E> =>
      Effect.flatMap(Deferred.make<O, E>(), (done) => Effect.zipRight(Queue.offer(queue, { item, done }), Deferred.await(done)))

    return { submit }
  })
