/**
 * A price's provenance mark (SPEC: verified, inferred, promotional), in words as well as colour, with what it means
 * on hover and to screen readers.
 */
const MEANING = {
  verified: "an operator recorded the vendor's own page stating this price",
  inferred: "derived; no vendor source recorded",
  promotional: "a promotional price, for a limited time"
} as const

export type Mark = keyof typeof MEANING

export const ProvenanceMark = (props: { readonly mark: Mark }) => (
  <span class={`mark mark-${props.mark}`} title={MEANING[props.mark]}>
    {props.mark}
  </span>
)

/** An input and output pair: one mark when they agree. */
export const Provenance = (props: { readonly pair: { readonly input: Mark; readonly output: Mark } }) =>
  props.pair.input === props.pair.output ? (
    <ProvenanceMark mark={props.pair.input} />
  ) : (
    <>
      in <ProvenanceMark mark={props.pair.input} />, out <ProvenanceMark mark={props.pair.output} />
    </>
  )

/** Where one number comes from, as the catalog publishes it (`priceSources`). */
export interface NumberSource {
  readonly provenance: Mark
  readonly sourceUrl: string | null
  readonly checkedAt: string | null
  readonly derivedFrom: string | null
  readonly promotionUntil: string | null
}

const day = (iso: string) => iso.slice(0, 10)

/**
 * A number's source in words: the vendor page that states it (and the day it was read), or, for an inferred number,
 * what it was derived from. A promotional number also says when the discount ends.
 */
export const SourceOf = (props: { readonly source: NumberSource }) => {
  const { source } = props
  const until = source.promotionUntil === null ? null : <> until {day(source.promotionUntil)}</>
  if (source.sourceUrl !== null) {
    return (
      <span class="price-source">
        <a href={source.sourceUrl} rel="noopener noreferrer" data-testid="source-link">vendor page</a>
        {source.checkedAt === null ? "" : <>, read {day(source.checkedAt)}</>}
        {until}
      </span>
    )
  }
  return (
    <span class="price-source muted">
      derived: {source.derivedFrom ?? "no source recorded"}
      {until}
    </span>
  )
}

/**
 * The input and output marks of a price, each vendor page behind them linked once (one link when both numbers
 * were read on the same page), for a table row that has no room for a source per number.
 */
export const MarkedPair = (props: { readonly input: NumberSource; readonly output: NumberSource }) => {
  const pages = [...new Set([props.input.sourceUrl, props.output.sourceUrl].filter((url): url is string => url !== null))]
  return (
    <>
      <Provenance pair={{ input: props.input.provenance, output: props.output.provenance }} />
      {pages.map((url, i) => (
        <>
          {" "}
          <a key={url} href={url} rel="noopener noreferrer" class="source-link" data-testid="source-link">
            {pages.length === 1 ? "source" : `source ${i + 1}`}
          </a>
        </>
      ))}
    </>
  )
}
