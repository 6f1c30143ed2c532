/**
 * The request log: the account's requests newest first, filtered by the server (model, key, outcome, UTC dates) and
 * paged by its cursor ("Load more"); each row labelled with its format (chat, messages, responses or embeddings, an
 * embeddings request showing input tokens only); a row opens that request's bill, fetched when asked for, and for a `/v1/responses`
 * request the response it stored (StoredResponse.tsx).
 */
import { useSignal } from "@preact/signals"
import { Fragment } from "preact"
import { useEffect } from "preact/hooks"
import type { GenerationSummary, GenerationView } from "../../src/api/GenerationsApi.ts"
import { utc } from "../shared/format.ts"
import { useRead } from "../shared/useRead.tsx"
import { call } from "./api.ts"
import { BillDetail } from "./BillDetail.tsx"
import { StoredResponse } from "./StoredResponse.tsx"
import { credits } from "./format.ts"
import "./logs.css"

type Row = typeof GenerationSummary.Type
type Bill = typeof GenerationView.Type

interface Filters {
  readonly model: string
  readonly key: string
  readonly status: "" | "completed" | "interrupted"
  /** `YYYY-MM-DD`, a UTC day: from its start ... */
  readonly from: string
  /** ... to the end of this one. */
  readonly to: string
}

const NO_FILTERS: Filters = { model: "", key: "", status: "", from: "", to: "" }

const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString()

/** The filters as the endpoint takes them (only those set). */
const query = (f: Filters, cursor: string | undefined) => ({
  ...(f.model.trim() === "" ? {} : { model: f.model.trim() }),
  ...(f.key === "" ? {} : { key: f.key }),
  ...(f.status === "" ? {} : { status: f.status }),
  ...(f.from === "" ? {} : { from: new Date(`${f.from}T00:00:00Z`) }),
  ...(f.to === "" ? {} : { to: new Date(nextDay(f.to)) }),
  ...(cursor === undefined ? {} : { cursor })
})

const tokens = (n: number | null) => (n === null ? "—" : n.toLocaleString("en-US"))

/** The endpoint each inbound format came through, shown as the label's title. */
const ENDPOINT: Record<Row["format"], string> = {
  chat: "/v1/chat/completions",
  messages: "/v1/messages",
  responses: "/v1/responses",
  embeddings: "/v1/embeddings"
}

/** An embeddings request has input tokens only: its output, cache and reasoning cells are absent ("—"), not 0. */
const inputOnly = (row: Row) => row.format === "embeddings"

type BillState = { readonly state: "loading" } | { readonly state: "failed"; readonly message: string } | { readonly state: "ready"; readonly value: Bill }

export const LogsPage = () => {
  const keys = useRead(() => call((c) => c.keys.listKeys()), [])
  const draft = useSignal<Filters>(NO_FILTERS)
  const applied = useSignal<Filters>(NO_FILTERS)
  const rows = useSignal<ReadonlyArray<Row>>([])
  const cursor = useSignal<string | null>(null)
  const loading = useSignal(true)
  const error = useSignal<string | null>(null)
  const moreError = useSignal<string | null>(null)
  const open = useSignal<string | null>(null)
  const bill = useSignal<BillState>({ state: "loading" })

  // The first page again whenever the applied filters change; an answer to filters since replaced is dropped.
  useEffect(() => {
    let current = true
    loading.value = true
    call((c) => c.generations.listGenerations({ urlParams: query(applied.value, undefined) })).then(
      (page) => {
        if (!current) return
        rows.value = page.data
        cursor.value = page.nextCursor
        error.value = null
        loading.value = false
      },
      (failure: Error) => {
        if (!current) return
        rows.value = []
        cursor.value = null
        error.value = failure.message
        loading.value = false
      }
    )
    return () => void (current = false)
  }, [applied.value])

  const apply = (event: Event) => {
    event.preventDefault()
    open.value = null
    applied.value = { ...draft.value }
  }
  const clear = () => {
    draft.value = NO_FILTERS
    if (applied.value !== NO_FILTERS) applied.value = NO_FILTERS
  }
  const more = async () => {
    if (cursor.value === null) return
    moreError.value = null
    try {
      const page = await call((c) => c.generations.listGenerations({ urlParams: query(applied.value, cursor.value ?? undefined) }))
      rows.value = [...rows.value, ...page.data]
      cursor.value = page.nextCursor
    } catch (failure) {
      moreError.value = (failure as Error).message
    }
  }
  const toggle = async (id: string) => {
    if (open.value === id) {
      open.value = null
      return
    }
    open.value = id
    bill.value = { state: "loading" }
    try {
      const value = await call((c) => c.generations.generation({ path: { id } }))
      if (open.value === id) bill.value = { state: "ready", value }
    } catch (failure) {
      if (open.value === id) bill.value = { state: "failed", message: (failure as Error).message }
    }
  }

  const keyLabel = new Map<string, string>(keys.state === "ready" ? keys.value.data.map((k) => [k.id, k.label ?? `${k.prefix}…`] as const) : [])
  const set = (field: keyof Filters) => (e: Event) => (draft.value = { ...draft.value, [field]: (e.target as HTMLInputElement).value })
  const filtered = Object.values(applied.value).some((v) => v !== "")

  return (
    <section aria-labelledby="logs" class="logs">
      <h1 id="logs">Request log</h1>
      <form class="filters" onSubmit={apply} aria-label="Filters">
        <div>
          <label for="f-model">Model</label>
          <input id="f-model" placeholder="e.g. openai/gpt-4.1" value={draft.value.model} onInput={set("model")} />
        </div>
        <div>
          <label for="f-key">Key</label>
          <select id="f-key" value={draft.value.key} onChange={set("key")}>
            <option value="">Any key</option>
            {keys.state === "ready" && keys.value.data.map((k) => <option key={k.id} value={k.id}>{k.label ?? k.prefix}{k.status === "active" ? "" : ` (${k.status})`}</option>)}
          </select>
        </div>
        <div>
          <label for="f-status">Outcome</label>
          <select id="f-status" value={draft.value.status} onChange={set("status")}>
            <option value="">Any</option>
            <option value="completed">Completed</option>
            <option value="interrupted">Interrupted</option>
          </select>
        </div>
        <div>
          <label for="f-from">From (UTC day)</label>
          <input id="f-from" type="date" value={draft.value.from} onInput={set("from")} />
        </div>
        <div>
          <label for="f-to">To (UTC day, included)</label>
          <input id="f-to" type="date" value={draft.value.to} onInput={set("to")} />
        </div>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button type="button" class="link" onClick={clear}>Clear</button>
        </div>
      </form>
      {error.value !== null && <p class="error" role="alert">Could not load the log: {error.value}</p>}
      {loading.value && <p class="loading" role="status">Loading the request log…</p>}
      {!loading.value && error.value === null && rows.value.length === 0 && (
        <p class="empty">
          {filtered ? (
            "No request matches these filters: widen them or clear them."
          ) : (
            <>No requests yet: <a href="console/keys">create a key</a> and send one, or use the <a href="console/playground">playground</a>.</>
          )}
        </p>
      )}
      {rows.value.length > 0 && (
        <div class="table-scroll">
          <table data-testid="logs-table" class="logs-table">
            <caption class="visually-hidden">Requests, newest first; choose a row to see its bill</caption>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                <th scope="col">Model</th>
                <th scope="col">Format</th>
                <th scope="col">Key</th>
                <th scope="col">Outcome</th>
                <th scope="col" class="num">Input</th>
                <th scope="col" class="num">Output</th>
                <th scope="col" class="num">Cache read</th>
                <th scope="col" class="num">Cache write</th>
                <th scope="col" class="num">Reasoning</th>
                <th scope="col" class="num">Charge, credits</th>
              </tr>
            </thead>
            <tbody>
              {rows.value.map((row) => (
                <Fragment key={row.id}>
                  <tr data-id={row.id} class={open.value === row.id ? "open" : undefined} onClick={() => void toggle(row.id)}>
                    <td>
                      <button type="button" class="link" aria-expanded={open.value === row.id} onClick={(e) => (e.stopPropagation(), void toggle(row.id))}>
                        {utc(row.createdAt)}
                      </button>
                    </td>
                    <td data-testid="log-model">
                      {row.modelUsed}
                      {row.fallback && <span class="fallback" title={`asked for ${row.modelRequested}`}> (fallback from {row.modelRequested})</span>}
                    </td>
                    <td data-testid="log-format">
                      <span class={`format-badge format-${row.format}`} title={ENDPOINT[row.format]}>{row.format}</span>
                    </td>
                    <td>{row.keyId === null ? "—" : keyLabel.get(row.keyId) ?? row.keyId}</td>
                    <td>{row.status}</td>
                    <td class="num" data-testid="log-input">{tokens(row.usage.freshInput)}</td>
                    <td class="num" data-testid="log-output">{tokens(inputOnly(row) ? null : row.usage.output)}</td>
                    <td class="num">{tokens(inputOnly(row) ? null : row.usage.cacheRead)}</td>
                    <td class="num">{tokens(inputOnly(row) || (row.usage.cacheWrite5m === null && row.usage.cacheWrite1h === null) ? null : (row.usage.cacheWrite5m ?? 0) + (row.usage.cacheWrite1h ?? 0))}</td>
                    <td class="num">{tokens(inputOnly(row) ? null : row.usage.reasoning)}</td>
                    <td class="num" data-testid="log-charge">{credits(row.chargeWei)}</td>
                  </tr>
                  {open.value === row.id && (
                    <tr class="bill-row">
                      <td colSpan={11}>
                        <h2 class="bill-title">Bill of {row.id}</h2>
                        {bill.value.state === "loading" && <p class="loading" role="status">Loading the bill…</p>}
                        {bill.value.state === "failed" && <p class="error" role="alert">Could not load the bill: {bill.value.message}</p>}
                        {bill.value.state === "ready" && (
                          <BillDetail generation={bill.value.value} />
                        )}
                        {row.format === "responses" && <StoredResponse requestId={row.id} />}
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor.value !== null && (
        <p>
          <button type="button" onClick={more}>Load more</button>
          {moreError.value !== null && <span class="error" role="alert"> {moreError.value}</span>}
        </p>
      )}
      {rows.value.length > 0 && cursor.value === null && <p class="muted">{rows.value.length} request{rows.value.length === 1 ? "" : "s"}, all shown.</p>}
    </section>
  )
}
