/**
 * The embedding models of the price browser (DESIGN.md section 10): listed apart from the chat models, because they
 * are priced per input token only and never enter the index. A table of every one (input price listed and billed,
 * per million tokens, its vectors and batch size), and, opened by `/models?model=<key>`, one model with its dated
 * prices as the catalog publishes them.
 */
import { useEffect, useRef } from "preact/hooks"
import type { EmbeddingCatalogEntry, PricingResponse } from "../../../domain/oracle/schemas.ts"
import { plainNumber, utc } from "../../shared/format.ts"
import { ProvenanceMark, SourceOf } from "../../shared/Provenance.tsx"
import { billedUsd, tokens } from "./data.ts"

type Pricing = PricingResponse | undefined

const modelHref = (key: string) => `./models?model=${encodeURIComponent(key)}`

/** The vector sizes a request may ask for, in words: `1536` (fixed), `up to 3072`, or the vendor's list. */
export const dimensionsText = (entry: EmbeddingCatalogEntry): string => {
  if (entry.dimensions === undefined) return "not published"
  if (entry.dimensionOptions !== undefined) return `${tokens(entry.dimensions)} (or ${entry.dimensionOptions.filter((d) => d !== entry.dimensions).map(tokens).join(", ")})`
  if (entry.flexibleDimensions) return `${tokens(entry.dimensions)} (any size up to ${tokens(entry.maxDimensions ?? entry.dimensions)})`
  return tokens(entry.dimensions)
}

const billedInput = (pricing: Pricing, key: string, loading: boolean) => {
  if (loading) return <span class="muted">…</span>
  const figure = pricing?.embeddingModels[key]?.input
  return pricing === undefined ? <span class="muted">n/a</span> : billedUsd(figure, pricing.pegUsd) ?? <span class="muted">n/a</span>
}

export const EmbeddingModelsSection = (props: {
  readonly models: ReadonlyArray<EmbeddingCatalogEntry>
  readonly pricing: Pricing
  readonly pricingLoading: boolean
  readonly openKey: string | undefined
}) => {
  const models = [...props.models].sort((a, b) => a.modelKey.localeCompare(b.modelKey, "en"))
  return (
    <section aria-labelledby="embedding-heading" data-testid="embedding-models">
      <h2 id="embedding-heading">Embedding models</h2>
      <p>
        Models that turn text into vectors. They are priced per input token only (there is no output to price), listed as the vendor quotes them and
        billed with the same 5% routing markup, and they never enter the index: the index prices chat models only.
      </p>
      {models.length === 0 ? (
        <p class="empty">No embedding model is priced yet.</p>
      ) : (
        <div class="table-scroll models-scroll" tabIndex={0} role="region" aria-labelledby="embedding-caption">
          <table class="models-table" data-testid="embedding-models-table">
            <caption id="embedding-caption" class="visually-hidden">Embedding models, by model key; prices in USD per million input tokens</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Provider</th>
                <th scope="col" class="num">Input listed</th>
                <th scope="col" class="num">Input billed (+5%)</th>
                <th scope="col" class="num">Dimensions</th>
                <th scope="col" class="num">Tokens per input</th>
                <th scope="col" class="num">Inputs per request</th>
                <th scope="col">Mark</th>
              </tr>
            </thead>
            <tbody>
              {models.map((m) => (
                <tr key={m.modelKey} data-model={m.modelKey} class={props.openKey === m.modelKey ? "open" : undefined}>
                  <td data-col="model">
                    <a href={modelHref(m.modelKey)} class="model-key" aria-current={props.openKey === m.modelKey ? "true" : undefined}>{m.modelKey}</a>
                    <span class="model-name">{m.displayName}</span>
                  </td>
                  <td data-col="provider">{m.provider.name}</td>
                  <td class="num" data-col="input-listed">{plainNumber(m.currentPrice.inputPriceUsdPerMillion)}</td>
                  <td class="num" data-col="input-billed">{billedInput(props.pricing, m.modelKey, props.pricingLoading)}</td>
                  <td class="num" data-col="dimensions">{dimensionsText(m)}</td>
                  <td class="num" data-col="max-input">{m.maxInputTokens === undefined ? <span class="muted">unknown</span> : tokens(m.maxInputTokens)}</td>
                  <td class="num" data-col="batch">{m.maxBatchInputs === undefined ? <span class="muted">unknown</span> : tokens(m.maxBatchInputs)}</td>
                  <td data-col="mark">
                    <ProvenanceMark mark={m.currentPrice.provenance} />
                    {m.priceSources.input.sourceUrl !== null && (
                      <>
                        {" "}
                        <a href={m.priceSources.input.sourceUrl} rel="noopener noreferrer" class="source-link" data-testid="source-link">source</a>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

/** One embedding model, opened in place: its facts, its price now with its source, and every dated price. */
export const EmbeddingDetail = (props: { readonly entry: EmbeddingCatalogEntry; readonly pricing: Pricing; readonly closeHref: string }) => {
  const { entry } = props
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    heading.current?.focus()
  }, [entry.modelKey])
  return (
    <section class="model-detail" aria-labelledby="model-detail-heading" data-testid="model-detail">
      <div class="detail-head">
        <h2 id="model-detail-heading" tabIndex={-1} ref={heading}>
          <span class="hash">{entry.modelKey}</span> <span class="muted">({entry.displayName}, an embedding model)</span>
        </h2>
        <a href={props.closeHref}>Close the details</a>
      </div>
      <dl class="facts">
        <div><dt>Provider</dt><dd>{entry.provider.name} ({entry.provider.key})</dd></div>
        <div><dt>Family</dt><dd>{entry.family}</dd></div>
        <div><dt>In the index basket</dt><dd>no: embedding models are never indexed</dd></div>
        <div><dt>Input, listed USD/M</dt><dd data-testid="detail-input-listed">{plainNumber(entry.currentPrice.inputPriceUsdPerMillion)}</dd></div>
        <div><dt>Input, billed USD/M (+5%)</dt><dd data-testid="detail-input-billed">{billedInput(props.pricing, entry.modelKey, false)}</dd></div>
        <div><dt>Output</dt><dd>not priced: an embedding model returns vectors, not tokens</dd></div>
        <div><dt>Dimensions</dt><dd data-testid="detail-dimensions">{dimensionsText(entry)}</dd></div>
        <div><dt>Tokens per input</dt><dd>{entry.maxInputTokens === undefined ? "not published" : tokens(entry.maxInputTokens)}</dd></div>
        <div><dt>Inputs per request</dt><dd>{entry.maxBatchInputs === undefined ? "not published" : tokens(entry.maxBatchInputs)}</dd></div>
        <div><dt>Price source</dt><dd><ProvenanceMark mark={entry.priceSources.input.provenance} /> <SourceOf source={entry.priceSources.input} /></dd></div>
        {entry.releasedAt !== null && <div><dt>Released (UTC)</dt><dd>{utc(entry.releasedAt)}</dd></div>}
      </dl>
      {entry.priceSources.note !== null && <p class="price-note" data-testid="price-note">Operator's note on this price: {entry.priceSources.note}</p>}
      <div class="table-scroll models-scroll">
        <table data-testid="embedding-price-history">
          <caption>Price history: the input price from each date on, USD per million tokens</caption>
          <thead>
            <tr>
              <th scope="col">From (UTC)</th>
              <th scope="col" class="num">Input listed</th>
              <th scope="col">Mark</th>
            </tr>
          </thead>
          <tbody>
            {entry.priceHistory.map((p) => (
              <tr key={p.effectiveFrom}>
                <td>{utc(p.effectiveFrom)}</td>
                <td class="num">{plainNumber(p.inputPriceUsdPerMillion)}</td>
                <td><ProvenanceMark mark={p.provenance} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}
