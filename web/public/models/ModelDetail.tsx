/**
 * One model in full, opened from the table (and by `/models?model=<key>`): every listed price beside its billed
 * price and mark, the context tiers, the price history as a chart with its table, and a price-at lookup.
 */
import { useSignal } from "@preact/signals"
import { useEffect, useRef } from "preact/hooks"
import type { PriceAtResponse, PricingResponse } from "../../../domain/oracle/schemas.ts"
import { read } from "../../shared/api.ts"
import { plainNumber, utc } from "../../shared/format.ts"
import { type NumberSource, Provenance, ProvenanceMark, SourceOf } from "../../shared/Provenance.tsx"
import { Status, useRead } from "../../shared/useRead.tsx"
import { type Billed, billedUsd, type BilledFigure, type CatalogEntry, type Component, listedComponent, tokens } from "./data.ts"
import { PriceHistoryChart } from "./PriceHistoryChart.tsx"

type Pricing = PricingResponse | undefined

const todayUtc = () => new Date().toISOString().slice(0, 10)

const ComponentRow = (props: {
  readonly label: string
  readonly component: Component | null
  readonly source: NumberSource | null
  readonly billed: BilledFigure | null | undefined
  readonly pegUsd: number | undefined
}) => {
  const listed = listedComponent(props.component)
  const billed = props.pegUsd === undefined ? undefined : billedUsd(props.billed, props.pegUsd)
  return (
    <tr data-price={props.label}>
      <th scope="row">{props.label}</th>
      <td class="num">{listed ?? <span class="muted">none</span>}</td>
      <td class="num">{props.component === null ? <span class="muted">none</span> : billed ?? <span class="muted">n/a</span>}</td>
      <td>{props.component === null ? "" : <ProvenanceMark mark={props.component.provenance} />}</td>
      <td>{props.source === null ? "" : <SourceOf source={props.source} />}</td>
    </tr>
  )
}

const Prices = (props: { readonly entry: CatalogEntry; readonly billed: Billed | undefined; readonly pegUsd: number | undefined }) => {
  const { entry, billed, pegUsd } = props
  const sources = entry.priceSources
  const main = (label: string, listed: number, figure: BilledFigure | undefined, source: NumberSource) => (
    <tr data-price={label}>
      <th scope="row">{label}</th>
      <td class="num" data-testid={`detail-${label}-listed`}>{plainNumber(listed)}</td>
      <td class="num" data-testid={`detail-${label}-billed`}>{pegUsd === undefined ? <span class="muted">n/a</span> : billedUsd(figure, pegUsd) ?? <span class="muted">n/a</span>}</td>
      <td><ProvenanceMark mark={source.provenance} /></td>
      <td><SourceOf source={source} /></td>
    </tr>
  )
  return (
    <>
      <div class="table-scroll models-scroll">
        <table data-testid="detail-prices">
          <caption>Prices now, USD per million tokens: as the vendor lists them and as billed here (+5% routing markup)</caption>
          <thead>
            <tr>
              <th scope="col">Price</th>
              <th scope="col" class="num">Listed</th>
              <th scope="col" class="num">Billed (+5%)</th>
              <th scope="col">Mark</th>
              <th scope="col">Source</th>
            </tr>
          </thead>
          <tbody>
            {main("input", entry.currentPrice.inputPriceUsdPerMillion, billed?.input, sources.input)}
            {main("output", entry.currentPrice.outputPriceUsdPerMillion, billed?.output, sources.output)}
            <ComponentRow label="cache read" component={entry.cache?.cachedInput ?? null} source={sources.cachedInput} billed={billed?.cache?.cachedInput} pegUsd={pegUsd} />
            <ComponentRow label="cache write, 5 min" component={entry.cache?.cacheWrite5m ?? null} source={sources.cacheWrite5m} billed={billed?.cache?.cacheWrite5m} pegUsd={pegUsd} />
            <ComponentRow label="cache write, 1 h" component={entry.cache?.cacheWrite1h ?? null} source={sources.cacheWrite1h} billed={billed?.cache?.cacheWrite1h} pegUsd={pegUsd} />
            <ComponentRow label="reasoning output" component={entry.reasoning?.reasoningOutput ?? null} source={entry.reasoning === null ? null : sources.reasoningOutput} billed={billed?.reasoning?.reasoningOutput} pegUsd={pegUsd} />
          </tbody>
        </table>
      </div>
      {sources.note !== null && <p class="price-note" data-testid="price-note">Operator's note on this price: {sources.note}</p>}
    </>
  )
}

const Tiers = (props: { readonly entry: CatalogEntry }) => {
  const tiers = props.entry.contextTiers ?? []
  if (tiers.length === 0) return <p>No context tiers: the prices above hold for every prompt length{props.entry.maxInputTokens === undefined ? "" : ` up to ${tokens(props.entry.maxInputTokens)} input tokens`}.</p>
  return (
    <div class="table-scroll models-scroll">
      <table data-testid="detail-tiers">
        <caption>Context tiers: list prices for long prompts, USD per million tokens</caption>
        <thead>
          <tr>
            <th scope="col" class="num">From input tokens</th>
            <th scope="col" class="num">Input</th>
            <th scope="col" class="num">Output</th>
            <th scope="col">Mark</th>
            <th scope="col">Source</th>
          </tr>
        </thead>
        <tbody>
          {tiers.map((t) => {
            const source = props.entry.priceSources.contextTiers.find((s) => s.fromInputTokens === t.fromInputTokens)
            return (
              <tr key={t.fromInputTokens}>
                <td class="num">{tokens(t.fromInputTokens)}</td>
                <td class="num">{plainNumber(t.inputPriceUsdPerMillion)}</td>
                <td class="num">{plainNumber(t.outputPriceUsdPerMillion)}</td>
                <td><ProvenanceMark mark={t.provenance} /></td>
                <td>{source === undefined ? "" : <SourceOf source={source.input.provenance === t.provenance ? source.input : source.output} />}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

const History = (props: { readonly modelKey: string }) => {
  const history = useRead(
    () => read(`price-history:${props.modelKey}`, (o) => o.priceHistory({ path: { key: encodeURIComponent(props.modelKey) }, urlParams: { granularity: "per-revision" } })),
    [props.modelKey]
  )
  return (
    <section aria-labelledby="detail-history">
      <h3 id="detail-history">Price history</h3>
      <Status of={history} what="the price history" />
      {history.state === "ready" &&
        (typeof history.value === "string" ? (
          <p class="error" role="alert">The price history arrived as CSV rather than JSON; it cannot be charted here.</p>
        ) : (
          <>
            <p>
              List prices at each revision of the index ({utc(history.value.from)} to {utc(history.value.to)}); a point's source is the revision's
              manifest when the model was in the basket, else the catalog.
              {history.value.truncated ? " Only the newest points are shown." : ""}
              {history.value.unavailableRevisions.length > 0 ? ` Revisions whose manifest could not be read: ${history.value.unavailableRevisions.map((r) => `#${r}`).join(", ")}.` : ""}
            </p>
            <PriceHistoryChart modelKey={props.modelKey} points={history.value.data} until={history.value.to} />
          </>
        ))}
    </section>
  )
}

type Lookup =
  | { readonly state: "idle" }
  | { readonly state: "loading"; readonly at: string }
  | { readonly state: "failed"; readonly message: string }
  | { readonly state: "ready"; readonly value: PriceAtResponse }

const PriceAt = (props: { readonly modelKey: string }) => {
  const date = useSignal(todayUtc())
  const time = useSignal("")
  const lookup = useSignal<Lookup>({ state: "idle" })
  const submit = (event: Event) => {
    event.preventDefault()
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date.value)) {
      lookup.value = { state: "failed", message: "enter a date (YYYY-MM-DD)." }
      return
    }
    const at = new Date(`${date.value}T${time.value === "" ? "00:00" : time.value}:00.000Z`)
    if (Number.isNaN(at.getTime())) {
      lookup.value = { state: "failed", message: "that date or time does not exist." }
      return
    }
    const iso = at.toISOString()
    lookup.value = { state: "loading", at: iso }
    read(`price-at:${props.modelKey}:${iso}`, (o) => o.priceAt({ path: { key: encodeURIComponent(props.modelKey) }, urlParams: { date: at } })).then(
      (value) => void (lookup.value = { state: "ready", value }),
      (error: unknown) => void (lookup.value = { state: "failed", message: error instanceof Error ? error.message : String(error) })
    )
  }
  const result = lookup.value
  return (
    <section aria-labelledby="detail-price-at">
      <h3 id="detail-price-at">Price at a past moment</h3>
      <form class="price-at" onSubmit={submit}>
        <div class="field">
          <label for="price-at-date">Date (UTC)</label>
          <input id="price-at-date" type="date" required max={todayUtc()} value={date.value} onInput={(e) => (date.value = e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="price-at-time">Time (UTC, optional; midnight if empty)</label>
          <input id="price-at-time" type="time" value={time.value} onInput={(e) => (time.value = e.currentTarget.value)} />
        </div>
        <button type="submit">Look up the price</button>
      </form>
      <div aria-live="polite" data-testid="price-at-result">
        {result.state === "loading" && <p class="loading">Looking up the price at {utc(result.at)}…</p>}
        {result.state === "failed" && <p class="error" role="alert">No price: {result.message}</p>}
        {result.state === "ready" && (
          <dl class="facts">
            <div><dt>At (UTC)</dt><dd>{utc(result.value.date)}</dd></div>
            <div><dt>Input, listed USD/M</dt><dd data-testid="price-at-input">{plainNumber(result.value.inputPriceUsdPerMillion)}</dd></div>
            <div><dt>Output, listed USD/M</dt><dd data-testid="price-at-output">{plainNumber(result.value.outputPriceUsdPerMillion)}</dd></div>
            <div>
              <dt>Source</dt>
              <dd data-testid="price-at-source">
                {result.value.source === "manifest"
                  ? `the manifest of revision #${result.value.revisionVersion ?? "?"}${result.value.methodologyVersion === undefined ? "" : ` (methodology ${result.value.methodologyVersion})`}`
                  : "the catalog (the model was not in the basket then)"}
              </dd>
            </div>
            <div><dt>Observed (UTC)</dt><dd>{utc(result.value.observedAt)}</dd></div>
            {result.value.metadataHash !== undefined && <div><dt>Manifest hash</dt><dd class="hash">{result.value.metadataHash}</dd></div>}
          </dl>
        )}
      </div>
    </section>
  )
}

export const ModelDetail = (props: { readonly entry: CatalogEntry; readonly pricing: Pricing; readonly pricingFailed: boolean; readonly closeHref: string }) => {
  const { entry } = props
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    heading.current?.focus()
  }, [entry.modelKey])
  const billed = props.pricing?.models[entry.modelKey]
  return (
    <section class="model-detail" aria-labelledby="model-detail-heading" data-testid="model-detail">
      <div class="detail-head">
        <h2 id="model-detail-heading" tabIndex={-1} ref={heading}>
          <span class="hash">{entry.modelKey}</span> <span class="muted">({entry.displayName})</span>
        </h2>
        <a href={props.closeHref}>Close the details</a>
      </div>
      <dl class="facts">
        <div><dt>Provider</dt><dd>{entry.provider.name} ({entry.provider.key})</dd></div>
        <div><dt>Family</dt><dd>{entry.family}</dd></div>
        <div><dt>In the index basket</dt><dd>{entry.indexMember ? "yes: this model represents its family" : "no"}</dd></div>
        <div><dt>Routable here</dt><dd>{entry.integrated ? "yes" : "no: priced, but the exchange does not route to it"}</dd></div>
        <div><dt>Context window</dt><dd>{entry.maxInputTokens === undefined ? "not published" : `${tokens(entry.maxInputTokens)} input tokens`}</dd></div>
        <div><dt>Price observed (UTC)</dt><dd>{utc(entry.currentPrice.observedAt)}</dd></div>
        <div><dt>Price marks</dt><dd><Provenance pair={entry.currentPrice.provenance} /></dd></div>
        {entry.releasedAt !== null && <div><dt>Released (UTC)</dt><dd>{utc(entry.releasedAt)}</dd></div>}
      </dl>
      {props.pricingFailed && <p class="error">The billed prices could not be loaded; the listed prices are shown alone.</p>}
      <Prices entry={entry} billed={billed} pegUsd={props.pricing?.pegUsd} />
      <Tiers entry={entry} />
      <History modelKey={entry.modelKey} />
      <PriceAt modelKey={entry.modelKey} />
    </section>
  )
}
