/**
 * `/models/<vendor>/<model>`: one model's page, rendered on the server. Every listed price beside its billed price,
 * mark and source, the context tiers, the price history as a chart and a table, its family and basket status,
 * whether the exchange routes it now, and a price-at lookup (a form the server answers, so it works without
 * JavaScript).
 */
import type { ModelPageData } from "../../../domain/oracle/publicPages.ts"
import { plainNumber, utc } from "../../shared/format.ts"
import { apiHref, modelHref } from "../../shared/links.ts"
import { type NumberSource, Provenance, ProvenanceMark, SourceOf } from "../../shared/Provenance.tsx"
import { SvgStepChart } from "../../shared/SvgChart.tsx"
import { type Billed, billedUsd, type BilledFigure, type CatalogEntry, type Component, listedComponent, tokens } from "./data.ts"
import { EmbeddingDetail } from "./EmbeddingModels.tsx"

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
      <div class="table-scroll models-scroll" tabIndex={0}>
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
    <div class="table-scroll models-scroll" tabIndex={0}>
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

type History = NonNullable<ModelPageData["history"]>

const sourceText = (p: History["points"][number]) => (p.source === "manifest" ? `manifest of revision #${p.revisionVersion ?? "?"}` : "catalog")

const PriceHistory = (props: { readonly modelKey: string; readonly history: ModelPageData["history"] }) => {
  const history = props.history
  return (
    <section aria-labelledby="detail-history">
      <h2 id="detail-history">Price history</h2>
      {history === null ? (
        <p class="empty">No price history is published for this model.</p>
      ) : (
        <>
          <p>
            List prices at each revision of the index ({utc(history.from)} to {utc(history.to)}); a point's source is the revision's manifest when the
            model was in the basket, else the catalog.
            {history.truncated ? " Only the newest points are shown." : ""}
            {history.unavailableRevisions.length > 0 ? ` Revisions whose manifest could not be read: ${history.unavailableRevisions.map((r) => `#${r}`).join(", ")}.` : ""}{" "}
            <a href={apiHref(`/v1/oracle/models/${encodeURIComponent(props.modelKey)}/price-history?granularity=per-revision`)}>As JSON</a>.
          </p>
          <SvgStepChart
            title={`${props.modelKey}: list price per million tokens, USD`}
            valueLabel="USD per million tokens"
            series={[
              { label: "input", points: history.points.map((p) => ({ at: p.date, value: p.inputPriceUsdPerMillion })) },
              { label: "output", points: history.points.map((p) => ({ at: p.date, value: p.outputPriceUsdPerMillion })), dashed: true }
            ]}
            until={history.to}
            csvName={`${props.modelKey.replace(/[^A-Za-z0-9.-]+/g, "-")}-price-history.csv`}
            format={plainNumber}
            zeroBased
            testId="price-history-chart"
          />
          <div class="table-scroll models-scroll" tabIndex={0}>
            <table data-testid="price-history-table">
              <caption>Price at each point, USD per million tokens, and where it was read</caption>
              <thead>
                <tr>
                  <th scope="col">At (UTC)</th>
                  <th scope="col" class="num">Input</th>
                  <th scope="col" class="num">Output</th>
                  <th scope="col">Source</th>
                </tr>
              </thead>
              <tbody>
                {history.points.map((p) => (
                  <tr key={p.date}>
                    <td>{utc(p.date)}</td>
                    <td class="num">{plainNumber(p.inputPriceUsdPerMillion)}</td>
                    <td class="num">{plainNumber(p.outputPriceUsdPerMillion)}</td>
                    <td>{sourceText(p)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  )
}

/** A past price, looked up by the server: the form is a GET to this page, so it works with JavaScript off. */
const PriceAt = (props: { readonly modelKey: string; readonly lookup: ModelPageData["priceAt"]; readonly today: string }) => {
  const lookup = props.lookup
  return (
    <section aria-labelledby="detail-price-at" id="price-at">
      <h2 id="detail-price-at">Price at a past moment</h2>
      <form class="price-at" method="get" action={`${modelHref(props.modelKey)}#price-at`}>
        <div class="field">
          <label for="price-at-date">Date (UTC)</label>
          <input id="price-at-date" name="date" type="date" required max={props.today} value={lookup?.date ?? props.today} />
        </div>
        <div class="field">
          <label for="price-at-time">Time (UTC, optional; midnight if empty)</label>
          <input id="price-at-time" name="time" type="time" value={lookup?.time ?? ""} />
        </div>
        <button type="submit">Look up the price</button>
      </form>
      <div aria-live="polite" data-testid="price-at-result">
        {lookup !== null && !lookup.result.ok && <p class="error" role="alert">No price: {lookup.result.message}</p>}
        {lookup !== null && lookup.result.ok && (
          <dl class="facts">
            <div><dt>At (UTC)</dt><dd>{utc(lookup.result.value.date)}</dd></div>
            <div><dt>Input, listed USD/M</dt><dd data-testid="price-at-input">{plainNumber(lookup.result.value.inputPriceUsdPerMillion)}</dd></div>
            <div><dt>Output, listed USD/M</dt><dd data-testid="price-at-output">{plainNumber(lookup.result.value.outputPriceUsdPerMillion)}</dd></div>
            <div>
              <dt>Source</dt>
              <dd data-testid="price-at-source">
                {lookup.result.value.source === "manifest"
                  ? `the manifest of revision #${lookup.result.value.revisionVersion ?? "?"}${lookup.result.value.methodologyVersion === undefined ? "" : ` (methodology ${lookup.result.value.methodologyVersion})`}`
                  : "the catalog (the model was not in the basket then)"}
              </dd>
            </div>
            <div><dt>Observed (UTC)</dt><dd>{utc(lookup.result.value.observedAt)}</dd></div>
            {lookup.result.value.metadataHash !== undefined && <div><dt>Manifest hash</dt><dd class="hash">{lookup.result.value.metadataHash}</dd></div>}
          </dl>
        )}
      </div>
    </section>
  )
}

const Family = (props: { readonly data: ModelPageData; readonly entry: CatalogEntry }) => (
  <section aria-labelledby="detail-family">
    <h2 id="detail-family">Its family: {props.entry.family}</h2>
    <p>
      {props.entry.indexMember
        ? "This model holds its family's one slot in the index basket: its input and output list prices enter the SCU."
        : "This model is not in the index basket: another model represents its family, or the family has no slot."}
    </p>
    {props.data.family.length === 0 ? (
      <p class="muted">No other model of this family is priced.</p>
    ) : (
      <ul data-testid="family-members">
        {props.data.family.map((m) => (
          <li key={m.modelKey}>
            <a href={modelHref(m.modelKey)}>{m.modelKey}</a> ({m.displayName}){m.indexMember ? ": in the basket" : ""}
          </li>
        ))}
      </ul>
    )}
  </section>
)

export const ModelPage = (props: { readonly data: ModelPageData }) => {
  const data = props.data
  const today = data.now.slice(0, 10)
  if (data.model.kind === "embedding") {
    return <EmbeddingDetail entry={data.model.entry} billed={data.model.billed} pegUsd={data.pegUsd} />
  }
  const entry = data.model.entry
  return (
    <section class="model-detail" aria-labelledby="model-detail-heading" data-testid="model-detail">
      <div class="detail-head">
        <h1 id="model-detail-heading">
          <span class="hash">{entry.modelKey}</span> <span class="muted">({entry.displayName})</span>
        </h1>
        <a href="./models">All models</a>
      </div>
      <dl class="facts">
        <div><dt>Provider</dt><dd>{entry.provider.name} ({entry.provider.key})</dd></div>
        <div><dt>Family</dt><dd>{entry.family}</dd></div>
        <div><dt>In the index basket</dt><dd data-testid="detail-index-member">{entry.indexMember ? "yes: this model represents its family" : "no"}</dd></div>
        <div><dt>Routable here now</dt><dd data-testid="detail-routable">{data.routableNow ? "yes: the exchange serves it" : "no: priced, but the exchange does not route to it now"}</dd></div>
        <div><dt>Context window</dt><dd>{entry.maxInputTokens === undefined ? "not published" : `${tokens(entry.maxInputTokens)} input tokens`}</dd></div>
        <div><dt>Price observed (UTC)</dt><dd>{utc(entry.currentPrice.observedAt)}</dd></div>
        <div><dt>Price marks</dt><dd><Provenance pair={entry.currentPrice.provenance} /></dd></div>
        {entry.releasedAt !== null && <div><dt>Released (UTC)</dt><dd>{utc(entry.releasedAt)}</dd></div>}
      </dl>
      <Prices entry={entry} billed={data.model.billed ?? undefined} pegUsd={data.pegUsd} />
      <h2 id="detail-tiers-heading">Context tiers</h2>
      <Tiers entry={entry} />
      <Family data={data} entry={entry} />
      <PriceHistory modelKey={entry.modelKey} history={data.history} />
      <PriceAt modelKey={entry.modelKey} lookup={data.priceAt} today={today} />
    </section>
  )
}
