/**
 * One request's bill as `GET /v1/generations/{id}` states it: the charge, how it follows from the tokens per bucket
 * and their rates (each with its provenance mark), the context tier, the markup and the peg, the attested revision
 * the prices come from, and every upstream attempt. Money is shown from its digit strings, never through a float.
 */
import { formatScaled, shortHash, utc } from "../shared/format.ts"
import type { GenerationView } from "../../src/api/GenerationsApi.ts"
import { credits } from "./format.ts"

type Generation = typeof GenerationView.Type

const count = (tokens: number | null) => (tokens === null ? "not reported" : tokens.toLocaleString("en-US"))

export const BillDetail = (props: { readonly generation: Generation }) => {
  const g = props.generation
  const markupPercent = formatScaled(String((BigInt(g.bill.markup.numerator) * 10n ** 20n) / BigInt(g.bill.markup.denominator) - 10n ** 20n), 18, 4)
  return (
    <div class="bill" data-testid="bill">
      <dl class="figures">
        <div>
          <dt>Charged, credits (exact)</dt>
          <dd class="big" data-testid="bill-charge">{formatScaled(g.bill.chargeWei)}</dd>
          <dd class="muted"><span data-testid="bill-charge-wei">{g.bill.chargeWei}</span> wei</dd>
        </div>
        <div><dt>Model used</dt><dd>{g.modelUsed}{g.modelUsed !== g.modelRequested ? ` (asked: ${g.modelRequested})` : ""}</dd></div>
        <div><dt>Format</dt><dd data-testid="bill-format">{g.format}{g.format === "embeddings" ? " (input tokens only)" : ""}</dd></div>
        <div><dt>Outcome</dt><dd>{g.status}{g.stream ? ", streamed" : ""}</dd></div>
        <div><dt>Sent (UTC)</dt><dd>{utc(g.createdAt)}</dd></div>
      </dl>
      <div class="table-scroll">
        <table>
          <caption>How the charge follows from the tokens</caption>
          <thead>
            <tr>
              <th scope="col">Bucket</th>
              <th scope="col" class="num">Tokens</th>
              <th scope="col" class="num">USD per million</th>
              <th scope="col">Priced as</th>
              <th scope="col">Provenance</th>
            </tr>
          </thead>
          <tbody>
            {g.bill.legs.map((leg) => (
              <tr key={leg.kind}>
                <th scope="row">{leg.kind}</th>
                <td class="num">{leg.tokens.toLocaleString("en-US")}</td>
                <td class="num">{formatScaled(leg.rateUsd18PerMillion)}</td>
                <td>{leg.pricedAs}</td>
                <td>{leg.provenance}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <dl class="figures">
        <div><dt>Subtotal, USD</dt><dd>{formatScaled(g.bill.subtotalUsd18)}</dd></div>
        <div><dt>Markup</dt><dd>{markupPercent}% ({g.bill.markup.numerator}/{g.bill.markup.denominator})</dd></div>
        <div><dt>Peg, USD per credit</dt><dd>{formatScaled(g.bill.pegUsd18)}</dd></div>
        <div><dt>Context tier from</dt><dd>{g.bill.tierFromInputTokens === null ? "base prices" : `${g.bill.tierFromInputTokens.toLocaleString("en-US")} input tokens`}</dd></div>
        <div><dt>Held while in flight, credits</dt><dd>{credits(g.bill.holdWei)}</dd></div>
        <div>
          <dt>Prices attested by</dt>
          <dd>
            {g.bill.revision === null ? (
              "no revision yet"
            ) : (
              <a href={`v1/oracle/manifest/${g.bill.revision.metadataHash}`} title={g.bill.revision.metadataHash}>
                revision {g.bill.revision.revisionVersion} ({shortHash(g.bill.revision.metadataHash)})
              </a>
            )}
          </dd>
        </div>
        <div><dt>Price in effect from (UTC)</dt><dd>{utc(g.bill.priceEffectiveFrom)}</dd></div>
        {g.format !== "embeddings" && <div><dt>Reasoning tokens (in output)</dt><dd>{count(g.usage.reasoning)}</dd></div>}
      </dl>
      <div class="table-scroll">
        <table>
          <caption>Upstream attempts, in order</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Provider</th>
              <th scope="col">Outcome</th>
              <th scope="col" class="num">Status</th>
              <th scope="col" class="num">ms</th>
            </tr>
          </thead>
          <tbody>
            {g.attempts.map((attempt, index) => (
              <tr key={index}>
                <td>{attempt.model}</td>
                <td>{attempt.provider}</td>
                <td>{attempt.outcome}{attempt.message === null ? "" : `: ${attempt.message}`}</td>
                <td class="num">{attempt.status ?? "—"}</td>
                <td class="num">{attempt.ms}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  )
}
