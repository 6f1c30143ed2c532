/**
 * `/models`: the price browser, rendered on the server in full and hydrated. The whole catalog, searchable,
 * filterable and sortable (a form and links without JavaScript, in place with it, the address following either
 * way), each model's list prices beside its billed prices (+5% routing markup, exact from wei), its cache, reasoning
 * and context-tier prices, its window, whether the exchange routes to it, and each price's mark. Each model links to
 * its own page.
 */
import { useSignal } from "@preact/signals"
import { useEffect } from "preact/hooks"
import { type ModelsPageData, type ModelsQuery, type ModelsSortKey as SortKey, modelsQueryString } from "../../domain/oracle/publicPages.ts"
import { plainNumber, utc } from "../shared/format.ts"
import { apiHref, modelHref } from "../shared/links.ts"
import { MarkedPair, ProvenanceMark } from "../shared/Provenance.tsx"
import { billedUsd, type CatalogEntry, listedComponent, tokens } from "./models/data.ts"
import { EmbeddingModelsSection } from "./models/EmbeddingModels.tsx"

const SORT_LABELS: Record<SortKey, string> = {
  model: "model key",
  provider: "provider",
  family: "family",
  input: "listed input price",
  output: "listed output price",
  cacheRead: "cache read price",
  reasoning: "reasoning output price",
  window: "context window"
}

const text = (a: string, b: string) => a.localeCompare(b, "en")
/** Absent values (no cache price, no window) sort last in either direction. */
const optional = (a: number | undefined, b: number | undefined, sign: number) =>
  a === undefined ? (b === undefined ? 0 : 1) : b === undefined ? -1 : (a - b) * sign

const SORTS: Record<SortKey, (a: CatalogEntry, b: CatalogEntry, sign: number) => number> = {
  model: (a, b, sign) => text(a.modelKey, b.modelKey) * sign,
  provider: (a, b, sign) => text(a.provider.name, b.provider.name) * sign,
  family: (a, b, sign) => text(a.family, b.family) * sign,
  input: (a, b, sign) => (a.currentPrice.inputPriceUsdPerMillion - b.currentPrice.inputPriceUsdPerMillion) * sign,
  output: (a, b, sign) => (a.currentPrice.outputPriceUsdPerMillion - b.currentPrice.outputPriceUsdPerMillion) * sign,
  cacheRead: (a, b, sign) => optional(a.cache?.cachedInput?.usdPerMillion ?? undefined, b.cache?.cachedInput?.usdPerMillion ?? undefined, sign),
  reasoning: (a, b, sign) => optional(a.reasoning?.reasoningOutput.usdPerMillion ?? undefined, b.reasoning?.reasoningOutput.usdPerMillion ?? undefined, sign),
  window: (a, b, sign) => optional(a.maxInputTokens, b.maxInputTokens, sign)
}

/** Case-insensitive: the text anywhere in the key, the display name, the provider (key or name) or the family. */
const matches = (entry: CatalogEntry, needle: string) =>
  needle === "" ||
  [entry.modelKey, entry.displayName, entry.provider.key, entry.provider.name, entry.family].some((field) => field.toLowerCase().includes(needle))

const None = () => <span class="muted">none</span>

/**
 * A sortable column's header: a real link to the table sorted by it (so sorting works without JavaScript); with
 * JavaScript the table re-sorts in place and the address follows.
 */
const SortHeader = (props: {
  readonly column: SortKey
  readonly label: string
  readonly query: ModelsQuery
  readonly onSort: (key: SortKey) => void
  readonly num?: boolean
}) => {
  const active = props.query.sort === props.column
  const next: ModelsQuery = { ...props.query, sort: props.column, dir: active && props.query.dir === "ascending" ? "descending" : "ascending" }
  return (
    <th scope="col" class={props.num === true ? "num" : undefined} aria-sort={active ? props.query.dir : undefined} data-sort={props.column}>
      <a
        class="sort"
        href={`./models${modelsQueryString(next)}#catalog-heading`}
        onClick={(event) => {
          event.preventDefault()
          props.onSort(props.column)
        }}
      >
        {props.label}
        <span class="sort-state" aria-hidden="true">{active ? (props.query.dir === "ascending" ? " ▲" : " ▼") : " ↕"}</span>
        <span class="visually-hidden">{active ? `, sorted ${props.query.dir}; activate to reverse` : ", activate to sort"}</span>
      </a>
    </th>
  )
}

export const ModelsPage = (props: { readonly data: ModelsPageData }) => {
  const data = props.data
  const query = useSignal<ModelsQuery>(data.query)
  const state = query.value

  // The address says what the table shows, so a reload or a shared link opens the same view (replaced, not pushed:
  // typing a search is not a trail of pages).
  useEffect(() => {
    const target = `${window.location.pathname}${modelsQueryString(state)}${window.location.hash}`
    if (target !== `${window.location.pathname}${window.location.search}${window.location.hash}`) window.history.replaceState(null, "", target)
  }, [state])

  const update = (change: Partial<ModelsQuery>) => (query.value = { ...query.value, ...change })
  const onSort = (key: SortKey) =>
    update(state.sort === key ? { dir: state.dir === "ascending" ? "descending" : "ascending" } : { sort: key, dir: "ascending" })

  const all = data.models
  const providers = [...new Map(all.map((m) => [m.provider.key, m.provider])).values()].sort((a, b) => text(a.name, b.name))
  const needle = state.q.trim().toLowerCase()
  const sign = state.dir === "ascending" ? 1 : -1
  const compare = SORTS[state.sort]
  const shown = all
    .filter((m) => matches(m, needle) && (state.provider === "" || m.provider.key === state.provider) && (!state.routable || m.integrated))
    .sort((a, b) => compare(a, b, sign) || text(a.modelKey, b.modelKey))
  const pegUsd = data.pricing.pegUsd
  const billed = (figure: Parameters<typeof billedUsd>[0]) => billedUsd(figure, pegUsd) ?? <span class="muted">n/a</span>
  const embeddings = data.embeddingModels
  const routable = all.filter((m) => m.integrated).length

  return (
    <>
      <section aria-labelledby="models">
        <h1 id="models">Models and their prices</h1>
        <p class="lede">
          Every model the oracle prices: {all.length} models from {providers.length} providers, {routable} of them routable through the exchange. Prices
          are in USD per million tokens, listed as the vendor quotes them and billed as the exchange charges them (the list price plus a 5% routing
          markup, computed exactly from the billed price in wei). Each price carries a mark: verified, inferred or promotional. Catalog as of{" "}
          {utc(data.generatedAt)}. <a href={apiHref("/v1/oracle/catalog")}>The catalog as JSON</a> ·{" "}
          <a href={apiHref("/v1/oracle/pricing")}>billed prices as JSON</a>.
          {data.truncated ? " The API cut this catalog short: not every priced model is listed." : ""}
          {embeddings.length === 0 ? "" : ` The ${embeddings.length} embedding models, priced per input token only, are listed apart below.`}
        </p>
      </section>

      <section aria-labelledby="catalog-heading">
        <h2 id="catalog-heading">The catalog</h2>
        <form class="models-controls" role="search" aria-label="Filter the models" method="get" action="./models#catalog-heading" onSubmit={(e) => e.preventDefault()}>
          <div class="field">
            <label for="models-search">Search models</label>
            <input
              id="models-search"
              name="q"
              type="search"
              value={state.q}
              onInput={(e) => update({ q: e.currentTarget.value })}
              placeholder="key, name, provider or family"
              autoComplete="off"
              spellcheck={false}
            />
          </div>
          <div class="field">
            <label for="models-provider">Provider</label>
            <select id="models-provider" name="provider" value={state.provider} onChange={(e) => update({ provider: e.currentTarget.value })}>
              <option value="">All providers</option>
              {providers.map((p) => (
                <option key={p.key} value={p.key}>{p.name}</option>
              ))}
            </select>
          </div>
          <div class="field checkbox">
            <input id="models-routable" name="routable" value="1" type="checkbox" checked={state.routable} onChange={(e) => update({ routable: e.currentTarget.checked })} />
            <label for="models-routable">Routable only</label>
          </div>
          {state.sort !== "model" && <input type="hidden" name="sort" value={state.sort} />}
          {state.dir !== "ascending" && <input type="hidden" name="dir" value={state.dir} />}
          <button type="submit" class="secondary">Filter</button>
        </form>
        <p role="status" data-testid="model-count" class="model-count">
          {shown.length} of {all.length} models
        </p>
        {all.length === 0 ? (
          <p class="empty">The catalog is empty: no model is priced yet.</p>
        ) : shown.length === 0 ? (
          <p class="empty" data-testid="no-match">
            No model matches{needle === "" ? "" : ` “${state.q.trim()}”`}
            {state.provider === "" ? "" : ` from ${providers.find((p) => p.key === state.provider)?.name ?? state.provider}`}
            {state.routable ? " among the routable ones" : ""}.
          </p>
        ) : (
          <div class="table-scroll models-scroll" tabIndex={0} role="region" aria-labelledby="catalog-caption">
            <table class="models-table" data-testid="models-table">
              <caption id="catalog-caption" class="visually-hidden">
                Priced models, sorted by {SORT_LABELS[state.sort]} ({state.dir}); prices in USD per million tokens
              </caption>
              <thead>
                <tr>
                  <SortHeader column="model" label="Model" query={state} onSort={onSort} />
                  <SortHeader column="provider" label="Provider" query={state} onSort={onSort} />
                  <SortHeader column="family" label="Family" query={state} onSort={onSort} />
                  <SortHeader column="input" label="Input listed" query={state} onSort={onSort} num />
                  <th scope="col" class="num">Input billed (+5%)</th>
                  <SortHeader column="output" label="Output listed" query={state} onSort={onSort} num />
                  <th scope="col" class="num">Output billed (+5%)</th>
                  <SortHeader column="cacheRead" label="Cache read" query={state} onSort={onSort} num />
                  <th scope="col" class="num">Cache write 5 min / 1 h</th>
                  <SortHeader column="reasoning" label="Reasoning output" query={state} onSort={onSort} num />
                  <th scope="col">Context tiers</th>
                  <SortHeader column="window" label="Window (input tokens)" query={state} onSort={onSort} num />
                  <th scope="col">Routable</th>
                  <th scope="col">Mark</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((m) => {
                  const b = data.pricing.models[m.modelKey]
                  const tiers = m.contextTiers ?? []
                  const cacheRead = listedComponent(m.cache?.cachedInput ?? null)
                  const write5m = listedComponent(m.cache?.cacheWrite5m ?? null)
                  const write1h = listedComponent(m.cache?.cacheWrite1h ?? null)
                  const reasoning = listedComponent(m.reasoning?.reasoningOutput ?? null)
                  return (
                    <tr key={m.modelKey} data-model={m.modelKey}>
                      <td data-col="model">
                        <a href={modelHref(m.modelKey)} class="model-key">{m.modelKey}</a>
                        <span class="model-name">{m.displayName}</span>
                        {m.indexMember && <span class="badge member">index member</span>}
                      </td>
                      <td data-col="provider">{m.provider.name}</td>
                      <td data-col="family">{m.family}</td>
                      <td class="num" data-col="input-listed">{plainNumber(m.currentPrice.inputPriceUsdPerMillion)}</td>
                      <td class="num" data-col="input-billed">{billed(b?.input)}</td>
                      <td class="num" data-col="output-listed">{plainNumber(m.currentPrice.outputPriceUsdPerMillion)}</td>
                      <td class="num" data-col="output-billed">{billed(b?.output)}</td>
                      <td class="num" data-col="cache-read">
                        {cacheRead === undefined ? <None /> : <>{cacheRead}<span class="billed">billed {billed(b?.cache?.cachedInput)}</span></>}
                      </td>
                      <td class="num" data-col="cache-write">
                        {write5m === undefined && write1h === undefined ? (
                          <None />
                        ) : (
                          <>
                            {write5m ?? "none"} / {write1h ?? "none"}
                            <span class="billed">billed {write5m === undefined ? "none" : billed(b?.cache?.cacheWrite5m)} / {write1h === undefined ? "none" : billed(b?.cache?.cacheWrite1h)}</span>
                          </>
                        )}
                      </td>
                      <td class="num" data-col="reasoning">
                        {reasoning === undefined ? <None /> : <>{reasoning}<span class="billed">billed {billed(b?.reasoning?.reasoningOutput)}</span></>}
                      </td>
                      <td data-col="tiers">
                        {tiers.length === 0 ? (
                          <None />
                        ) : (
                          <ul class="tiers">
                            {tiers.map((t) => (
                              <li key={t.fromInputTokens}>
                                from {tokens(t.fromInputTokens)} tokens: {plainNumber(t.inputPriceUsdPerMillion)} / {plainNumber(t.outputPriceUsdPerMillion)}{" "}
                                <ProvenanceMark mark={t.provenance} />
                              </li>
                            ))}
                          </ul>
                        )}
                      </td>
                      <td class="num" data-col="window">{m.maxInputTokens === undefined ? <span class="muted">unknown</span> : tokens(m.maxInputTokens)}</td>
                      <td data-col="routable">{m.integrated ? "yes" : "no"}</td>
                      <td data-col="mark"><MarkedPair input={m.priceSources.input} output={m.priceSources.output} /></td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
        )}
        <p class="note">
          Cache and reasoning prices show the listed price, or its ratio of the input price when the vendor quotes a ratio, with the billed price
          below. Context tiers list the input / output price from a prompt length on. Times are UTC.
        </p>
      </section>

      <EmbeddingModelsSection models={embeddings} pricing={data.pricing} />
    </>
  )
}
