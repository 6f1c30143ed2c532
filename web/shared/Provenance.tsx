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
