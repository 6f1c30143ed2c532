/**
 * The embedding models of the price browser (DESIGN.md section 10): listed apart from the chat models, because they
 * are priced per input token only and never enter the index. A table of every one (input price listed and billed,
 * per million tokens, its vectors and batch size), and, on its own page, one model with its dated prices as the
 * catalog publishes them.
 */
import type { EmbeddingBilled } from "../../../domain/oracle/publicPages.ts"
import type { EmbeddingCatalogEntry, PricingResponse } from "../../../domain/oracle/schemas.ts"
import { plainNumber, utc } from "../../shared/format.ts"
import { modelHref } from "../../shared/links.ts"
import { ProvenanceMark, SourceOf } from "../../shared/Provenance.tsx"
import { billedUsd, tokens } from "./data.ts"

type Pricing = PricingResponse

/** The vector sizes a request may ask for, in words: `1536` (fixed), `up to 3072`, or the vendor's list. */
export const dimensionsText = (entry: EmbeddingCatalogEntry): string => {
  if (entry.dimensions === undefined) return "not published"
  if (entry.dimensionOptions !== undefined) return `${tokens(entry.dimensions)} (or ${entry.dimensionOptions.filter((d) => d !== entry.dimensions).map(tokens).join(", ")})`
  if (entry.flexibleDimensions) return `${tokens(entry.dimensions)} (any size up to ${tokens(entry.maxDimensions ?? entry.dimensions)})`
  return tokens(entry.dimensions)
}

const billedInput = (pricing: Pricing, key: string) => billedUsd(pricing.embeddingModels[key]?.input, pricing.pegUsd) ?? <span class="muted">n/a</span>

export const EmbeddingModelsSection = (props: {
  readonly models: ReadonlyArray<EmbeddingCatalogEntry>
  readonly pricing: Pricing
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
                <tr key={m.modelKey} data-model={m.modelKey}>
                  <td data-col="model">
                    <a href={modelHref(m.modelKey)} class="model-key">{m.modelKey}</a>
                    <span class="model-name">{m.displayName}</span>
                  </td>
                  <td data-col="provider">{m.provider.name}</td>
                  <td class="num" data-col="input-listed">{plainNumber(m.currentPrice.inputPriceUsdPerMillion)}</td>
                  <td class="num" data-col="input-billed">{billedInput(props.pricing, m.modelKey)}</td>
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

/** One embedding model on its own page: its facts, its price now with its source, and every dated price. */
export const EmbeddingDetail = (props: { readonly entry: EmbeddingCatalogEntry; readonly billed: EmbeddingBilled | null; readonly pegUsd: number }) => {
  const { entry } = props
  return (
    <section class="model-detail" aria-labelledby="model-detail-heading" data-testid="model-detail">
      <div class="detail-head">
        <h1 id="model-detail-heading">
          <span class="hash">{entry.modelKey}</span> <span class="muted">({entry.displayName}, an embedding model)</span>
        </h1>
        <a href="./models">All models</a>
      </div>
      <dl class="facts">
        <div><dt>Provider</dt><dd>{entry.provider.name} ({entry.provider.key})</dd></div>
        <div><dt>Family</dt><dd>{entry.family}</dd></div>
        <div><dt>In the index basket</dt><dd>no: embedding models are never indexed</dd></div>
        <div><dt>Input, listed USD/M</dt><dd data-testid="detail-input-listed">{plainNumber(entry.currentPrice.inputPriceUsdPerMillion)}</dd></div>
        <div><dt>Input, billed USD/M (+5%)</dt><dd data-testid="detail-input-billed">{props.billed === null ? <span class="muted">n/a</span> : billedUsd(props.billed.input, props.pegUsd) ?? <span class="muted">n/a</span>}</dd></div>
        <div><dt>Output</dt><dd>not priced: an embedding model returns vectors, not tokens</dd></div>
        <div><dt>Dimensions</dt><dd data-testid="detail-dimensions">{dimensionsText(entry)}</dd></div>
        <div><dt>Tokens per input</dt><dd>{entry.maxInputTokens === undefined ? "not published" : tokens(entry.maxInputTokens)}</dd></div>
        <div><dt>Inputs per request</dt><dd>{entry.maxBatchInputs === undefined ? "not published" : tokens(entry.maxBatchInputs)}</dd></div>
        <div><dt>Price source</dt><dd><ProvenanceMark mark={entry.priceSources.input.provenance} /> <SourceOf source={entry.priceSources.input} /></dd></div>
        {entry.releasedAt !== null && <div><dt>Released (UTC)</dt><dd>{utc(entry.releasedAt)}</dd></div>}
      </dl>
      {entry.priceSources.note !== null && <p class="price-note" data-testid="price-note">Operator's note on this price: {entry.priceSources.note}</p>}
      <div class="table-scroll models-scroll" tabIndex={0}>
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
