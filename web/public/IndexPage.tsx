/**
 * `/`: the index as a visitor sees it, rendered on the server from the oracle's snapshot and hydrated as is. The
 * current SCU and compute index with their changes and freshness, the index over its whole history with the
 * reconstitutions marked, the basket, the latest revisions with their hashes, the reconstitution log, the
 * methodology in force, and how to verify it all without trusting this page.
 */
import type { IndexPageData } from "../../domain/oracle/publicPages.ts"
import { ago, csvHref, formatScaled, plainNumber, shortHash, toCsv, utc } from "../shared/format.ts"
import { apiHref, modelHref, revisionHref } from "../shared/links.ts"
import { MarkedPair } from "../shared/Provenance.tsx"
import { SvgStepChart } from "../shared/SvgChart.tsx"

const GRANULARITIES = [
  ["per-revision", "Per revision"],
  ["daily", "Daily"],
  ["weekly", "Weekly"]
] as const

const Headline = (props: { readonly data: IndexPageData }) => {
  const { headline, now } = props.data
  if (headline === null) {
    return (
      <section class="headline" aria-labelledby="now">
        <h1 id="now">The Standard Compute Unit</h1>
        <p class="empty">No revision of the index has been confirmed on-chain yet: there is no figure to show. The first one appears here once its block is confirmed.</p>
      </section>
    )
  }
  return (
    <section class="headline" aria-labelledby="now">
      <h1 id="now">The Standard Compute Unit</h1>
      <p class="lede">
        What one reference workload ({headline.referenceWorkload.inputTokens.toLocaleString("en")} input and {headline.referenceWorkload.outputTokens.toLocaleString("en")} output tokens)
        costs across the basket of leading models: the geometric mean of {headline.basketSize} families' costs.
      </p>
      <dl class="figures">
        <div>
          <dt>SCU (USD per reference workload)</dt>
          <dd class="big" data-testid="scu-usd">{formatScaled(headline.scuUsd18, 18, 18)}</dd>
        </div>
        <div>
          <dt>Compute index (genesis = 100)</dt>
          <dd class="big" data-testid="compute-index">{headline.computeIndex === null ? "n/a" : plainNumber(headline.computeIndex)}</dd>
        </div>
        {headline.changes.map((c) => (
          <div key={c.label}>
            <dt>Change over {c.label}</dt>
            <dd data-testid={`change-${c.label.replace(" ", "")}`}>{c.text}</dd>
          </div>
        ))}
        <div>
          <dt>Last revision</dt>
          <dd>
            <a href={revisionHref(headline.revisionVersion)} data-testid="latest-revision">#{headline.revisionVersion}</a>, published {utc(headline.publishedAt)} (
            {ago(headline.publishedAt, new Date(now).getTime())})
            {headline.stale ? (
              <span class="badge stale" role="status" data-testid="stale">
                Stale: the chain was last read {headline.lastSyncAt === null ? "never" : utc(headline.lastSyncAt)}; figures may be behind
              </span>
            ) : (
              <span class="badge fresh" data-testid="fresh">In sync with the chain</span>
            )}
          </dd>
        </div>
      </dl>
    </section>
  )
}

const IndexChart = (props: { readonly data: IndexPageData }) => {
  const { history, marks } = props.data
  return (
    <section aria-labelledby="history">
      <h2 id="history">The index over its whole history</h2>
      <nav class="segmented" aria-label="Points of the chart">
        <span class="segmented-label">Points:</span>
        <ul>
          {GRANULARITIES.map(([g, label]) => (
            <li key={g}>
              <a href={g === "per-revision" ? "./#history" : `./?granularity=${g}#history`} aria-current={history.granularity === g ? "true" : undefined} data-granularity={g}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <SvgStepChart
        title={`Compute index, ${history.granularity}`}
        valueLabel="compute index"
        series={[{ label: "compute index", points: history.points }]}
        marks={marks}
        csvName={`compute-index-${history.granularity}.csv`}
        format={plainNumber}
        testId="index-chart"
      />
    </section>
  )
}

const Basket = (props: { readonly data: IndexPageData }) => {
  const rows = props.data.basket
  const csv = toCsv(
    ["family", "model", "input_usd_per_million", "output_usd_per_million", "blended_cost_usd"],
    rows.map((r) => [r.family, r.modelKey, plainNumber(r.input), plainNumber(r.output), plainNumber(r.blended)])
  )
  return (
    <section aria-labelledby="basket">
      <h2 id="basket">The basket</h2>
      {rows.length === 0 ? (
        <p class="empty">The basket is empty until the first revision is confirmed.</p>
      ) : (
        <>
          <p>
            One representative per model family; its blended cost is the price of the reference workload. Prices are the vendor's list prices in USD per
            million tokens. <a href={csvHref(csv)} download="basket.csv">Download CSV</a>
          </p>
          <div class="table-scroll" tabIndex={0}>
            <table data-testid="basket-table">
              <caption class="visually-hidden">The basket's members</caption>
              <thead>
                <tr>
                  <th scope="col">Family</th>
                  <th scope="col">Model</th>
                  <th scope="col" class="num">Input, USD/M</th>
                  <th scope="col" class="num">Output, USD/M</th>
                  <th scope="col" class="num">Blended cost, USD</th>
                  <th scope="col">Price mark</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.family}>
                    <td>{r.family}</td>
                    <td><a href={modelHref(r.modelKey)}>{r.modelKey}</a></td>
                    <td class="num">{plainNumber(r.input)}</td>
                    <td class="num">{plainNumber(r.output)}</td>
                    <td class="num">{plainNumber(r.blended)}</td>
                    <td>{r.sources === null ? "n/a" : <MarkedPair input={r.sources.input} output={r.sources.output} />}</td>
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

const Revisions = (props: { readonly data: IndexPageData }) => {
  const { count, latest } = props.data.revisions
  return (
    <section aria-labelledby="revisions">
      <h2 id="revisions">Revisions</h2>
      <p>
        The latest {latest.length} of {count}: <a href="./revisions">every revision</a>. Each revision's manifest is content-addressed: its keccak256 over
        the JCS text is the metadata hash the registry holds. <a href={apiHref("/v1/oracle/history?granularity=per-revision")}>All of them as JSON</a>.
      </p>
      <div class="table-scroll" tabIndex={0}>
        <table data-testid="revisions-table">
          <caption class="visually-hidden">Confirmed revisions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Revision</th>
              <th scope="col">Published (UTC)</th>
              <th scope="col" class="num">Compute index</th>
              <th scope="col">Manifest (metadata hash)</th>
              <th scope="col">Transaction</th>
            </tr>
          </thead>
          <tbody>
            {latest.map((r) => (
              <tr key={r.revisionVersion}>
                <td><a href={revisionHref(r.revisionVersion)}>#{r.revisionVersion}</a></td>
                <td>{utc(r.publishedAt)}</td>
                <td class="num">{r.computeIndex === null ? "n/a" : plainNumber(r.computeIndex)}</td>
                <td><a class="hash" href={apiHref(`/v1/oracle/manifest/${r.metadataHash}`)} title={r.metadataHash}>{shortHash(r.metadataHash)}</a></td>
                <td><a class="hash" href={apiHref(`/v1/oracle/revisions/${r.revisionVersion}`)} title={r.txHash}>{shortHash(r.txHash)}</a></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}

const ReconstitutionLog = (props: { readonly data: IndexPageData }) => {
  const log = props.data.log
  return (
    <section aria-labelledby="log">
      <h2 id="log">Reconstitution log</h2>
      {log.length === 0 ? (
        <p class="empty">No reconstitution yet: the basket is as it was at genesis.</p>
      ) : (
        <>
          <p>
            The latest changes to the basket, newest first; <a href="./revisions">each revision's page</a> lists its own.{" "}
            <a href={apiHref("/v1/oracle/reconstitutions/export")}>The whole log as Markdown</a>.
          </p>
          <ol class="log" reversed>
            {log.map((e) => (
              <li key={e.revisionVersion}>
                <p>
                  <strong><a href={revisionHref(e.revisionVersion)}>Revision #{e.revisionVersion}</a></strong>, {utc(e.publishedAt)}: {e.summary}
                </p>
                <ul>
                  {e.changes.map((c, i) => (
                    <li key={i}><span class="change-type">{c.type === "ModelAdded" ? "Added" : c.type === "ModelRemoved" ? "Removed" : "Price"}</span> {c.modelKey}: {c.description}</li>
                  ))}
                </ul>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  )
}

const Methodology = (props: { readonly data: IndexPageData }) => {
  const active = props.data.methodology
  return (
    <section aria-labelledby="method">
      <h2 id="method">Methodology in force</h2>
      {active === null ? (
        <p class="empty">No methodology is active.</p>
      ) : (
        <>
          <p>
            <strong>Version {active.version}: {active.title}.</strong> {active.formulaSummary}
          </p>
          <p>{active.rationale}</p>
          <p>
            <a href="./methodology">The full methodology</a> · <a href={apiHref("/v1/oracle/methodology")}>every version as JSON</a>
          </p>
        </>
      )}
    </section>
  )
}

const Verify = (props: { readonly data: IndexPageData }) => {
  const contract = props.data.contract
  return (
    <section id="verify" aria-labelledby="verify-h">
      <h2 id="verify-h">Verify it yourself</h2>
      {contract === null ? (
        <p class="error">The registry contract could not be read just now; <a href={apiHref("/v1/oracle/contract-metadata")}>its record</a> says where it is.</p>
      ) : (
        <dl class="facts">
          <div><dt>Registry contract</dt><dd class="hash" data-testid="registry-address">{contract.address}</dd></div>
          <div><dt>Chain id</dt><dd data-testid="chain-id">{contract.chainId}</dd></div>
          <div><dt>Contract version</dt><dd>{contract.version ?? "unknown"}</dd></div>
        </dl>
      )}
      <p>
        Every revision's manifest lists the basket's prices; its hash is what the registry holds. Recompute each revision's SCU and both hashes from
        its manifest and compare them with the chain:
      </p>
      <pre tabIndex={0}><code>npm run oracle -- verify</code></pre>
      <p>
        Downloads: <a href={apiHref("/v1/oracle/history?granularity=per-revision")}>history (JSON)</a> ·{" "}
        <a href={apiHref("/v1/oracle/basket")}>basket (JSON)</a> · <a href={apiHref("/v1/oracle/reconstitutions")}>reconstitutions (JSON)</a> ·{" "}
        <a href={apiHref("/v1/oracle/catalog")}>catalog (JSON)</a> · CSV beside each chart and table on this page.
      </p>
    </section>
  )
}

export const IndexPage = (props: { readonly data: IndexPageData }) => (
  <>
    <Headline data={props.data} />
    <IndexChart data={props.data} />
    <Basket data={props.data} />
    <Revisions data={props.data} />
    <ReconstitutionLog data={props.data} />
    <Methodology data={props.data} />
    <Verify data={props.data} />
  </>
)
