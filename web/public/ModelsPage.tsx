/**
 * `/models`: the price browser. The whole catalog, searchable, filterable and sortable, each model's list prices
 * beside its billed prices (+5% routing markup, exact from wei), its cache, reasoning and context-tier prices, its
 * window, whether the exchange routes to it, and each price's mark. A model opens in place (`?model=<key>`, so the
 * index page's basket links land on it) with its price history and a price-at lookup.
 */
import { useSignal } from "@preact/signals"
import { useEffect, useRef } from "preact/hooks"
import { useLocation } from "preact-iso"
import { apiHref } from "../shared/api.ts"
import { plainNumber, utc } from "../shared/format.ts"
import { MarkedPair, ProvenanceMark } from "../shared/Provenance.tsx"
import { Status, useRead } from "../shared/useRead.tsx"
import { billedUsd, type CatalogEntry, listedComponent, readCatalog, readPricing, tokens } from "./models/data.ts"
import { EmbeddingDetail, EmbeddingModelsSection } from "./models/EmbeddingModels.tsx"
import { ModelDetail } from "./models/ModelDetail.tsx"

type SortKey = "model" | "provider" | "family" | "input" | "output" | "cacheRead" | "reasoning" | "window"
type Direction = "ascending" | "descending"

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

const modelHref = (key: string) => `./models?model=${encodeURIComponent(key)}`

const None = () => <span class="muted">none</span>

const SortHeader = (props: {
  readonly column: SortKey
  readonly label: string
  readonly sort: { readonly key: SortKey; readonly direction: Direction }
  readonly onSort: (key: SortKey) => void
  readonly num?: boolean
}) => {
  const active = props.sort.key === props.column
  return (
    <th scope="col" class={props.num === true ? "num" : undefined} aria-sort={active ? props.sort.direction : undefined} data-sort={props.column}>
      <button type="button" class="sort" onClick={() => props.onSort(props.column)}>
        {props.label}
        <span class="sort-state" aria-hidden="true">{active ? (props.sort.direction === "ascending" ? " ▲" : " ▼") : " ↕"}</span>
        <span class="visually-hidden">{active ? `, sorted ${props.sort.direction}; activate to reverse` : ", activate to sort"}</span>
      </button>
    </th>
  )
}

export const ModelsPage = () => {
  const location = useLocation()
  const selected = location.query["model"]
  const catalog = useRead(readCatalog)
  const pricing = useRead(readPricing)
  const search = useSignal("")
  const provider = useSignal("")
  const routableOnly = useSignal(false)
  const sort = useSignal<{ key: SortKey; direction: Direction }>({ key: "model", direction: "ascending" })

  // Closing a model's details returns the focus to its row, where the reader left the table.
  const lastOpened = useRef<string | undefined>(undefined)
  useEffect(() => {
    const previous = lastOpened.current
    lastOpened.current = selected
    if (selected !== undefined || previous === undefined) return
    const link = [...document.querySelectorAll<HTMLAnchorElement>("[data-testid=models-table] a.model-key, [data-testid=embedding-models-table] a.model-key")].find(
      (a) => a.textContent === previous
    )
    link?.focus()
  }, [selected, catalog.state])

  const onSort = (key: SortKey) => {
    sort.value = sort.value.key === key ? { key, direction: sort.value.direction === "ascending" ? "descending" : "ascending" } : { key, direction: "ascending" }
  }

  if (catalog.state !== "ready") {
    return (
      <section aria-labelledby="models">
        <h1 id="models">Models and their prices</h1>
        <Status of={catalog} what="the catalog" />
      </section>
    )
  }

  const all = catalog.value.models
  const providers = [...new Map(all.map((m) => [m.provider.key, m.provider])).values()].sort((a, b) => text(a.name, b.name))
  const needle = search.value.trim().toLowerCase()
  const sign = sort.value.direction === "ascending" ? 1 : -1
  const compare = SORTS[sort.value.key]
  const shown = all
    .filter((m) => matches(m, needle) && (provider.value === "" || m.provider.key === provider.value) && (!routableOnly.value || m.integrated))
    .sort((a, b) => compare(a, b, sign) || text(a.modelKey, b.modelKey))
  const pegUsd = pricing.state === "ready" ? pricing.value.pegUsd : undefined
  const billed = (figure: Parameters<typeof billedUsd>[0]) =>
    pricing.state === "loading" ? <span class="muted">…</span> : pegUsd === undefined ? <span class="muted">n/a</span> : billedUsd(figure, pegUsd) ?? <span class="muted">n/a</span>
  const billedOf = (key: string) => (pricing.state === "ready" ? pricing.value.models[key] : undefined)
  const byKey = <M extends { readonly modelKey: string }>(models: ReadonlyArray<M>) =>
    selected === undefined ? undefined : models.find((m) => m.modelKey === selected) ?? models.find((m) => m.modelKey.toLowerCase() === selected.toLowerCase())
  const open = byKey(all)
  const embeddings = catalog.value.embeddingModels
  const openEmbedding = open === undefined ? byKey(embeddings) : undefined
  const routable = all.filter((m) => m.integrated).length

  return (
    <>
      <section aria-labelledby="models">
        <h1 id="models">Models and their prices</h1>
        <p class="lede">
          Every model the oracle prices: {all.length} models from {providers.length} providers, {routable} of them routable through the exchange. Prices
          are in USD per million tokens, listed as the vendor quotes them and billed as the exchange charges them (the list price plus a 5% routing
          markup, computed exactly from the billed price in wei). Each price carries a mark: verified, inferred or promotional. Catalog as of{" "}
          {utc(catalog.value.generatedAt)}. <a href={apiHref("/v1/oracle/catalog")}>The catalog as JSON</a> ·{" "}
          <a href={apiHref("/v1/oracle/pricing")}>billed prices as JSON</a>.
          {catalog.value.truncated ? " The API cut this catalog short: not every priced model is listed." : ""}
          {embeddings.length === 0 ? "" : ` The ${embeddings.length} embedding models, priced per input token only, are listed apart below.`}
        </p>
        {pricing.state === "failed" && <Status of={pricing} what="the billed prices" />}
      </section>

      {selected !== undefined &&
        (openEmbedding !== undefined ? (
          <EmbeddingDetail key={openEmbedding.modelKey} entry={openEmbedding} pricing={pricing.state === "ready" ? pricing.value : undefined} closeHref="./models" />
        ) : open === undefined ? (
          <section aria-labelledby="model-detail-heading" data-testid="model-detail">
            <h2 id="model-detail-heading">No model {selected}</h2>
            <p class="empty">The catalog has no model with the key “{selected}”. <a href="./models">Show all models</a>.</p>
          </section>
        ) : (
          <ModelDetail
            key={open.modelKey}
            entry={open}
            pricing={pricing.state === "ready" ? pricing.value : undefined}
            pricingFailed={pricing.state === "failed"}
            closeHref="./models"
          />
        ))}

      <section aria-labelledby="catalog-heading">
        <h2 id="catalog-heading">The catalog</h2>
        <form class="models-controls" role="search" aria-label="Filter the models" onSubmit={(e) => e.preventDefault()}>
          <div class="field">
            <label for="models-search">Search models</label>
            <input
              id="models-search"
              type="search"
              value={search.value}
              onInput={(e) => (search.value = e.currentTarget.value)}
              placeholder="key, name, provider or family"
              autoComplete="off"
              spellcheck={false}
            />
          </div>
          <div class="field">
            <label for="models-provider">Provider</label>
            <select id="models-provider" value={provider.value} onChange={(e) => (provider.value = e.currentTarget.value)}>
              <option value="">All providers</option>
              {providers.map((p) => (
                <option key={p.key} value={p.key}>{p.name}</option>
              ))}
            </select>
          </div>
          <div class="field checkbox">
            <input id="models-routable" type="checkbox" checked={routableOnly.value} onChange={(e) => (routableOnly.value = e.currentTarget.checked)} />
            <label for="models-routable">Routable only</label>
          </div>
        </form>
        <p role="status" data-testid="model-count" class="model-count">
          {shown.length} of {all.length} models
        </p>
        {all.length === 0 ? (
          <p class="empty">The catalog is empty: no model is priced yet.</p>
        ) : shown.length === 0 ? (
          <p class="empty" data-testid="no-match">
            No model matches{needle === "" ? "" : ` “${search.value.trim()}”`}
            {provider.value === "" ? "" : ` from ${providers.find((p) => p.key === provider.value)?.name ?? provider.value}`}
            {routableOnly.value ? " among the routable ones" : ""}.
          </p>
        ) : (
          <div class="table-scroll models-scroll" tabIndex={0} role="region" aria-labelledby="catalog-caption">
            <table class="models-table" data-testid="models-table">
              <caption id="catalog-caption" class="visually-hidden">
                Priced models, sorted by {SORT_LABELS[sort.value.key]} ({sort.value.direction}); prices in USD per million tokens
              </caption>
              <thead>
                <tr>
                  <SortHeader column="model" label="Model" sort={sort.value} onSort={onSort} />
                  <SortHeader column="provider" label="Provider" sort={sort.value} onSort={onSort} />
                  <SortHeader column="family" label="Family" sort={sort.value} onSort={onSort} />
                  <SortHeader column="input" label="Input listed" sort={sort.value} onSort={onSort} num />
                  <th scope="col" class="num">Input billed (+5%)</th>
                  <SortHeader column="output" label="Output listed" sort={sort.value} onSort={onSort} num />
                  <th scope="col" class="num">Output billed (+5%)</th>
                  <SortHeader column="cacheRead" label="Cache read" sort={sort.value} onSort={onSort} num />
                  <th scope="col" class="num">Cache write 5 min / 1 h</th>
                  <SortHeader column="reasoning" label="Reasoning output" sort={sort.value} onSort={onSort} num />
                  <th scope="col">Context tiers</th>
                  <SortHeader column="window" label="Window (input tokens)" sort={sort.value} onSort={onSort} num />
                  <th scope="col">Routable</th>
                  <th scope="col">Mark</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((m) => {
                  const b = billedOf(m.modelKey)
                  const tiers = m.contextTiers ?? []
                  const cacheRead = listedComponent(m.cache?.cachedInput ?? null)
                  const write5m = listedComponent(m.cache?.cacheWrite5m ?? null)
                  const write1h = listedComponent(m.cache?.cacheWrite1h ?? null)
                  const reasoning = listedComponent(m.reasoning?.reasoningOutput ?? null)
                  const isOpen = open?.modelKey === m.modelKey
                  return (
                    <tr key={m.modelKey} data-model={m.modelKey} class={isOpen ? "open" : undefined}>
                      <td data-col="model">
                        <a href={modelHref(m.modelKey)} class="model-key" aria-current={isOpen ? "true" : undefined}>{m.modelKey}</a>
                        <span class="model-name">{m.displayName}</span>
                        {m.indexMember && <span class="badge member">index member</span>}
                        {isOpen && <span class="visually-hidden"> (details open above)</span>}
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

      <EmbeddingModelsSection
        models={embeddings}
        pricing={pricing.state === "ready" ? pricing.value : undefined}
        pricingLoading={pricing.state === "loading"}
        openKey={openEmbedding?.modelKey}
      />
    </>
  )
}
