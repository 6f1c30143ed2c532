/**
 * The stored response of a `/v1/responses` request, beside its bill in the request log: read from
 * `GET /v1/generations/{id}/response` (the Response and the request's input items, kept 30 days unless the request
 * said `store: false`). Messages show their role and text, tool calls their name and pretty-printed arguments, tool
 * outputs the call they answer, reasoning its summary. A 404 says plainly that nothing was kept.
 */
import { useSignal } from "@preact/signals"
import { useEffect } from "preact/hooks"
import type { GenerationResponse } from "../../src/api/GenerationsApi.ts"
import { ApiFailure, call } from "./api.ts"

type Stored = typeof GenerationResponse.Type
type Item = { readonly [field: string]: unknown }

type State =
  | { readonly state: "loading" }
  | { readonly state: "absent" }
  | { readonly state: "failed"; readonly message: string }
  | { readonly state: "ready"; readonly value: Stored }

const ROLES: Record<string, string> = { user: "User", assistant: "Assistant", system: "System", developer: "Developer" }

const isItem = (value: unknown): value is Item => typeof value === "object" && value !== null && !Array.isArray(value)
const str = (value: unknown): string => (typeof value === "string" ? value : "")

/** A message's or a tool output's text: a string, or its parts' texts (a refusal marked as such), one per line. */
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content
      .filter(isItem)
      .map((part) => (part.type === "refusal" ? `[refusal] ${str(part.refusal)}` : str(part.text)))
      .join("\n")
    : ""

/** A tool call's arguments as indented JSON; as sent when they are not JSON. */
const pretty = (json: string): string => {
  try {
    return JSON.stringify(JSON.parse(json), null, 2)
  } catch {
    return json
  }
}

const summaryOf = (item: Item): string =>
  Array.isArray(item.summary) ? item.summary.filter(isItem).map((part) => str(part.text)).filter((text) => text !== "").join("\n\n") : ""

const toolName = (item: Item) => (typeof item.namespace === "string" && item.namespace !== "" ? `${item.namespace}.${str(item.name)}` : str(item.name))

const ItemView = (props: { readonly item: Item }) => {
  const item = props.item
  const type = typeof item.type === "string" ? item.type : "role" in item ? "message" : "item"
  switch (type) {
    case "message": {
      const role = str(item.role)
      return (
        <li class="response-item" data-kind="message" data-role={role}>
          <p class="item-label">{ROLES[role] ?? role}</p>
          <div class="answer">{textOf(item.content)}</div>
        </li>
      )
    }
    case "function_call":
    case "custom_tool_call": {
      const name = toolName(item)
      const body = type === "function_call" ? pretty(str(item.arguments)) : str(item.input)
      return (
        <li class="response-item" data-kind="tool-call">
          <p class="item-label">
            Tool call <code>{name}</code> <span class="muted">({str(item.call_id)})</span>
          </p>
          <pre class="tool-body" aria-label={`${type === "function_call" ? "Arguments" : "Input"} of ${name}`}>{body}</pre>
        </li>
      )
    }
    case "function_call_output":
    case "custom_tool_call_output":
      return (
        <li class="response-item" data-kind="tool-output">
          <p class="item-label">
            Tool output <span class="muted">for {str(item.call_id)}</span>
          </p>
          <pre class="tool-body">{textOf(item.output)}</pre>
        </li>
      )
    case "reasoning": {
      const summary = summaryOf(item)
      return (
        <li class="response-item" data-kind="reasoning">
          <p class="item-label">Reasoning summary</p>
          {summary === "" ? (
            <p class="muted">No summary{typeof item.encrypted_content === "string" ? " (the reasoning itself is sealed)" : ""}.</p>
          ) : (
            <div class="reasoning">{summary}</div>
          )}
        </li>
      )
    }
    default:
      return (
        <li class="response-item" data-kind="other">
          <p class="item-label">{type}</p>
          <pre class="tool-body">{JSON.stringify(item, null, 2)}</pre>
        </li>
      )
  }
}

const Items = (props: { readonly id: string; readonly title: string; readonly items: ReadonlyArray<Item>; readonly testId: string }) => (
  <section class="response-items" aria-labelledby={props.id}>
    <h4 id={props.id}>{props.title}</h4>
    {props.items.length === 0 ? (
      <p class="empty">None.</p>
    ) : (
      <ol role="list" data-testid={props.testId}>
        {props.items.map((item, index) => <ItemView key={typeof item.id === "string" ? item.id : index} item={item} />)}
      </ol>
    )}
  </section>
)

const statusText = (response: Stored["response"]): string =>
  response.incomplete_details !== null
    ? `${response.status} (${response.incomplete_details.reason})`
    : response.error !== null
    ? `${response.status}: ${response.error.message}`
    : response.status

export const StoredResponse = (props: { readonly requestId: string }) => {
  const stored = useSignal<State>({ state: "loading" })
  useEffect(() => {
    let current = true
    stored.value = { state: "loading" }
    call((c) => c.generations.generationResponse({ path: { id: props.requestId } })).then(
      (value) => void (current && (stored.value = { state: "ready", value })),
      (failure: unknown) => {
        if (!current) return
        stored.value = failure instanceof ApiFailure && failure.tag === "NotFound"
          ? { state: "absent" }
          : { state: "failed", message: failure instanceof Error ? failure.message : String(failure) }
      }
    )
    return () => void (current = false)
  }, [props.requestId])

  const headingId = `stored-${props.requestId}`
  const s = stored.value
  return (
    <section class="stored-response" aria-labelledby={headingId} data-testid="stored-response">
      <h3 id={headingId}>Stored response</h3>
      {s.state === "loading" && <p class="loading" role="status">Loading the stored response…</p>}
      {s.state === "failed" && <p class="error" role="alert">Could not load the stored response: {s.message}</p>}
      {s.state === "absent" && <p class="empty" data-testid="stored-response-absent">Not stored (store: false), deleted or expired.</p>}
      {s.state === "ready" && (
        <>
          <dl class="figures">
            <div><dt>Response</dt><dd><code>{s.value.response.id}</code></dd></div>
            <div><dt>Status</dt><dd data-testid="stored-response-status">{statusText(s.value.response)}</dd></div>
            <div><dt>Model</dt><dd>{s.value.response.model}</dd></div>
          </dl>
          {s.value.response.instructions !== null && (
            <section class="response-items" aria-labelledby={`${headingId}-instructions`}>
              <h4 id={`${headingId}-instructions`}>Instructions</h4>
              <div class="answer">{s.value.response.instructions}</div>
            </section>
          )}
          <Items id={`${headingId}-input`} title="Input items" items={s.value.inputItems} testId="stored-input" />
          <Items id={`${headingId}-output`} title="Output items" items={s.value.response.output} testId="stored-output" />
        </>
      )}
    </section>
  )
}
