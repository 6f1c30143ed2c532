/**
 * The playground: pick a model (a catalogue model, `auto`, or a fallback list), send one chat with streaming, and see
 * the answer and its reasoning as they arrive, the routing headers (which model served, who chose it, whether it
 * fell back) and, once settled, the bill of that very request. It spends only the key chosen above, only on Send.
 */
import { useSignal } from "@preact/signals"
import { Effect, Fiber } from "effect"
import { Status, useRead } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { type ChatEvent, type RoutingHeaders, streamChat } from "./chatStream.ts"
import { PlaygroundBill } from "./PlaygroundBill.tsx"
import { PlaygroundKey, storedSecret } from "./PlaygroundKey.tsx"

type Run =
  | { readonly state: "idle" }
  | { readonly state: "sending" }
  | { readonly state: "streaming" | "done" | "stopped"; readonly headers: RoutingHeaders }
  | { readonly state: "failed"; readonly message: string; readonly headers: RoutingHeaders | null }

const HEADER_ROWS: ReadonlyArray<readonly [keyof RoutingHeaders, string]> = [
  ["modelRequested", "Model requested"],
  ["modelUsed", "Model used"],
  ["fallbackUsed", "Fell back"],
  ["chooser", "Chosen by"],
  ["provider", "Provider"],
  ["routingStrategy", "Routing"],
  ["requestId", "Request id"]
]

export const PlaygroundPage = () => {
  const secret = useSignal<string | null>(storedSecret())
  const models = useRead(() => call((c) => c.models.models()))
  const model = useSignal("auto")
  const fallbacks = useSignal("")
  const prompt = useSignal("")
  const answer = useSignal("")
  const reasoning = useSignal("")
  const run = useSignal<Run>({ state: "idle" })
  const billId = useSignal<string | null>(null)
  const running = useSignal<Fiber.RuntimeFiber<void, unknown> | null>(null)

  const send = (event: Event) => {
    event.preventDefault()
    if (secret.value === null || prompt.value.trim() === "") return
    answer.value = ""
    reasoning.value = ""
    billId.value = null
    run.value = { state: "sending" }
    let headers: RoutingHeaders | null = null
    const onEvent = (chatEvent: ChatEvent) => {
      if (chatEvent._tag === "Started") {
        headers = chatEvent.headers
        run.value = { state: "streaming", headers }
      } else if (chatEvent._tag === "Delta") {
        answer.value += chatEvent.content
        reasoning.value += chatEvent.reasoning
      }
    }
    const fallbackList = fallbacks.value.split(",").map((name) => name.trim()).filter((name) => name !== "")
    const fiber = Effect.runFork(
      streamChat({ secret: secret.value, target: { model: model.value, fallbacks: fallbackList }, prompt: prompt.value, onEvent }).pipe(
        Effect.matchEffect({
          onFailure: (failure) => Effect.sync(() => (run.value = { state: "failed", message: failure.message, headers })),
          onSuccess: () => Effect.sync(() => (run.value = headers === null ? { state: "idle" } : { state: "done", headers }))
        }),
        Effect.asVoid,
        Effect.onInterrupt(() => Effect.sync(() => (run.value = headers === null ? { state: "idle" } : { state: "stopped", headers }))),
        Effect.ensuring(
          Effect.sync(() => {
            running.value = null
            // Whatever happened after the routing headers arrived, the request has a bill (a stop included).
            billId.value = (headers as RoutingHeaders | null)?.requestId ?? null
          })
        )
      )
    )
    running.value = fiber
  }
  const stop = () => {
    if (running.value !== null) Effect.runFork(Fiber.interrupt(running.value))
  }
  const current = run.value
  const shownHeaders = "headers" in current ? current.headers : null

  return (
    <section aria-labelledby="playground">
      <h1 id="playground">Playground</h1>
      <PlaygroundKey secret={secret} />
      <form onSubmit={send} aria-labelledby="playground-request">
        <h2 id="playground-request">The request</h2>
        <label for="playground-model">Model</label>
        <select id="playground-model" value={model.value} onChange={(e) => (model.value = (e.target as HTMLSelectElement).value)}>
          <option value="auto">auto: the exchange picks a model for the prompt</option>
          {models.state === "ready" && models.value.data.filter((m) => m.kind === "text").map((m) => <option key={m.id} value={m.id}>{m.displayName} ({m.id})</option>)}
        </select>
        <Status of={models} what="the routable models" />
        <label for="playground-fallbacks">Fallbacks, in order (optional, comma-separated model ids)</label>
        <input id="playground-fallbacks" value={fallbacks.value} onInput={(e) => (fallbacks.value = (e.target as HTMLInputElement).value)} />
        <label for="playground-prompt">Message</label>
        <textarea id="playground-prompt" rows={4} required value={prompt.value} onInput={(e) => (prompt.value = (e.target as HTMLTextAreaElement).value)} />
        <div class="actions">
          <button type="submit" disabled={secret.value === null || running.value !== null}>Send</button>{" "}
          {running.value !== null && <button type="button" onClick={stop}>Stop</button>}
        </div>
        {secret.value === null && <p class="empty">Choose the key to spend above first.</p>}
      </form>
      {current.state === "sending" && <p role="status">Sending…</p>}
      {current.state === "failed" && <p class="error" role="alert">{current.message}</p>}
      {current.state === "stopped" && <p role="status">Stopped: the exchange bills only what was produced before the stop.</p>}
      {(answer.value !== "" || reasoning.value !== "") && (
        <div class="stack" aria-labelledby="playground-answer">
          <h2 id="playground-answer">The answer</h2>
          {reasoning.value !== "" && (
            <details>
              <summary>Reasoning</summary>
              <p class="reasoning" data-testid="playground-reasoning">{reasoning.value}</p>
            </details>
          )}
          <p class="answer" aria-live="polite" data-testid="playground-answer">{answer.value}</p>
        </div>
      )}
      {shownHeaders !== null && (
        <dl class="figures" aria-label="Routing headers" data-testid="playground-headers">
          {HEADER_ROWS.map(([field, label]) => (
            <div key={field}><dt>{label}</dt><dd data-testid={`header-${field}`}>{shownHeaders[field] ?? "—"}</dd></div>
          ))}
        </dl>
      )}
      {billId.value !== null && <PlaygroundBill id={billId.value} />}
    </section>
  )
}
