/**
 * The bill of the request the playground just sent, read from `GET /v1/generations/{id}` as the logs read it. The
 * bill is written when the request settles, a moment after the stream's last byte, so a 404 right after the stream
 * is asked again a few times before it counts as an answer.
 */
import { Effect, Schedule } from "effect"
import { Status, useRead } from "../../shared/useRead.tsx"
import { ApiFailure, call } from "../api.ts"
import { BillDetail } from "../BillDetail.tsx"

const SETTLING = Schedule.intersect(Schedule.spaced("250 millis"), Schedule.recurs(12))

const settledBill = (id: string) =>
  Effect.retry(
    Effect.tryPromise({ try: () => call((c) => c.generations.generation({ path: { id } })), catch: (failure) => failure as ApiFailure }),
    { schedule: SETTLING, while: (failure) => failure.tag === "NotFound" }
  )

export const PlaygroundBill = (props: { readonly id: string }) => {
  const bill = useRead(() => Effect.runPromise(settledBill(props.id)), [props.id])
  return (
    <div class="stack" aria-labelledby="playground-bill">
      <h2 id="playground-bill">The bill of this request</h2>
      <Status of={bill} what="the bill" />
      {bill.state === "ready" && <BillDetail generation={bill.value} />}
    </div>
  )
}
