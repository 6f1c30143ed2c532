/**
 * `/`: the index as a visitor sees it. The current SCU and compute index with their changes and freshness, the
 * index over its whole history with the reconstitutions marked, the basket, the revisions with their hashes, the
 * reconstitution log, the methodology in force, and how to verify it all without trusting this page.
 */
import { useSignal } from "@preact/signals"
import { useEffect } from "preact/hooks"
import type { ReconstitutionEntry } from "../../domain/oracle/schemas.ts"
import { apiHref, read } from "../shared/api.ts"
import { ago, formatScaled, percentChange, plainNumber, shortHash, toCsv, csvHref, utc } from "../shared/format.ts"
import { MarkedPair } from "../shared/Provenance.tsx"
import { StepChart, type StepPoint } from "../shared/StepChart.tsx"
import { type Loaded, Status, useRead } from "../shared/useRead.tsx"

type Granularity = "per-revision" | "daily" | "weekly"

const DAY = 86_400_000
export const FIGURES_SHOWN = "cx:index-figures-shown"

/** The index level in force at `at`: the last point published at or before it. */
const levelAt = (points: ReadonlyArray<StepPoint>, at: number): number | undefined => {
  let found: number | undefined
  for (const point of points) {
    if (new Date(point.at).getTime() <= at) found = point.value
    else break
  }
  return found
}

/** The reads several sections share (one request each per page load). */
const perRevision = () => read("history:per-revision", (o) => o.history({ urlParams: { granularity: "per-revision" } }))
const currentScu = () => read("scu", (o) => o.scu())
/** The latest revision's record (its exact SCU, its transaction), once the history names it. */
const latestRevision = () =>
  perRevision().then((history) => {
    const last = typeof history === "string" ? undefined : history.data.at(-1)
    return last === undefined ? undefined : read(`revision:${last.revisionVersion}`, (o) => o.revision({ path: { revision: last.revisionVersion } }))
  })
/** Sections below the fold read after the figures at the top, so those arrive first under the rate limit. */
const belowTheFold = <A,>(readIt: () => Promise<A>) => () => latestRevision().then(readIt, readIt)
const reconstitutionLog = () => read("reconstitutions", (o) => o.reconstitutions())

const Headline = () => {
  const data = useRead(async () => {
    const [history, health, scu, revision] = await Promise.all([perRevision(), read("health", (o) => o.health()), currentScu(), latestRevision()])
    const series = typeof history === "string" ? [] : history.data
    const last = series.at(-1)
    const points = series.flatMap((p) => (p.computeIndex === null ? [] : [{ at: p.date, value: p.computeIndex }]))
    return { last, health, scu, points, revision }
  })
  useEffect(() => {
    // The moment the figures a visitor came for are on screen (bench:web reads it from the performance timeline).
    if (data.state === "ready" && performance.getEntriesByName(FIGURES_SHOWN).length === 0) performance.mark(FIGURES_SHOWN)
  }, [data.state])
  if (data.state !== "ready") return <Status of={data} what="the current index" />
  const { last, health, scu, points, revision } = data.value
  if (last === undefined || scu === undefined || revision === undefined) {
    return (
      <section class="headline" aria-labelledby="now">
        <h1 id="now">The Standard Compute Unit</h1>
        <p class="empty">No revision of the index has been confirmed on-chain yet: there is no figure to show. The first one appears here once its block is confirmed.</p>
      </section>
    )
  }
  const now = Date.now()
  const computeIndex = last.computeIndex
  const changes = ([["24 h", DAY], ["7 d", 7 * DAY], ["30 d", 30 * DAY]] as const).map(([label, span]) => {
    const then = levelAt(points, now - span)
    return { label, text: then === undefined || computeIndex === null ? "n/a (older than the index)" : percentChange(then, computeIndex) }
  })
  return (
    <section class="headline" aria-labelledby="now">
      <h1 id="now">The Standard Compute Unit</h1>
      <p class="lede">
        What one reference workload ({scu.referenceWorkload.inputTokens.toLocaleString("en")} input and {scu.referenceWorkload.outputTokens.toLocaleString("en")} output tokens)
        costs across the basket of leading models: the geometric mean of {revision.basketSize} families' costs.
      </p>
      <dl class="figures">
        <div>
          <dt>SCU (USD per reference workload)</dt>
          <dd class="big" data-testid="scu-usd">{formatScaled(revision.scuUsd18, 18, 18)}</dd>
        </div>
        <div>
          <dt>Compute index (genesis = 100)</dt>
          <dd class="big" data-testid="compute-index">{computeIndex === null ? "n/a" : plainNumber(computeIndex)}</dd>
        </div>
        {changes.map((c) => (
          <div key={c.label}>
            <dt>Change over {c.label}</dt>
            <dd data-testid={`change-${c.label.replace(" ", "")}`}>{c.text}</dd>
          </div>
        ))}
        <div>
          <dt>Last revision</dt>
          <dd>
            <span data-testid="latest-revision">#{revision.revisionVersion}</span>, published {utc(revision.publishedAt)} ({ago(revision.publishedAt, now)})
            {health.stale ? (
              <span class="badge stale" role="status" data-testid="stale">
                Stale: the chain was last read {health.lastSyncAt === null ? "never" : utc(health.lastSyncAt)}; figures may be behind
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

const IndexChart = (props: { readonly marks: Loaded<ReadonlyArray<{ at: string; label: string }>> }) => {
  const granularity = useSignal<Granularity>("per-revision")
  const history = useRead(
    () => (granularity.value === "per-revision" ? perRevision() : read(`history:${granularity.value}`, (o) => o.history({ urlParams: { granularity: granularity.value } }))),
    [granularity.value]
  )
  const points: ReadonlyArray<StepPoint> =
    history.state === "ready" && typeof history.value !== "string"
      ? history.value.data.flatMap((p) => (p.computeIndex === null ? [] : [{ at: p.date, value: p.computeIndex }]))
      : []
  return (
    <section aria-labelledby="history">
      <h2 id="history">The index over its whole history</h2>
      <fieldset class="segmented">
        <legend>Points</legend>
        {(["per-revision", "daily", "weekly"] as const).map((g) => (
          <label key={g}>
            <input type="radio" name="granularity" value={g} checked={granularity.value === g} onChange={() => (granularity.value = g)} />
            {g === "per-revision" ? "Per revision" : g === "daily" ? "Daily" : "Weekly"}
          </label>
        ))}
      </fieldset>
      <Status of={history} what="the index history" />
      {history.state === "ready" && (
        <StepChart
          title={`Compute index, ${granularity.value}`}
          valueLabel="compute index"
          points={points}
          marks={props.marks.state === "ready" ? props.marks.value : []}
          csvName={`compute-index-${granularity.value}.csv`}
          format={plainNumber}
        />
      )}
    </section>
  )
}

const Basket = () => {
  const data = useRead(async () => {
    // The marks come from the catalog, a large read: it waits for the figures at the top.
    const [scu, catalog] = await Promise.all([currentScu(), belowTheFold(() => read("catalog", (o) => o.catalog()))()])
    return { scu, marks: new Map(catalog.models.map((m) => [m.modelKey, m])) }
  })
  if (data.state !== "ready") return <section aria-labelledby="basket"><h2 id="basket">The basket</h2><Status of={data} what="the basket" /></section>
  const { scu, marks } = data.value
  const rows = scu === undefined ? [] : [...scu.breakdown.familyRepresentatives].sort((a, b) => a.family.localeCompare(b.family))
  const csv = toCsv(
    ["family", "model", "input_usd_per_million", "output_usd_per_million", "blended_cost_usd"],
    rows.map((r) => [r.family, r.modelKey, plainNumber(r.inputPriceUsdPerMillion), plainNumber(r.outputPriceUsdPerMillion), plainNumber(r.blendedCostUsd)])
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
          <div class="table-scroll">
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
                {rows.map((r) => {
                  const entry = marks.get(r.modelKey)
                  return (
                    <tr key={r.family}>
                      <td>{r.family}</td>
                      <td><a href={`./models?model=${encodeURIComponent(r.modelKey)}`}>{r.modelKey}</a></td>
                      <td class="num">{plainNumber(r.inputPriceUsdPerMillion)}</td>
                      <td class="num">{plainNumber(r.outputPriceUsdPerMillion)}</td>
                      <td class="num">{plainNumber(r.blendedCostUsd)}</td>
                      <td>{entry === undefined ? "n/a" : <MarkedPair input={entry.priceSources.input} output={entry.priceSources.output} />}</td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  )
}

const Revisions = (props: { readonly log: Loaded<ReadonlyArray<LogEntry>> }) => {
  const history = useRead(perRevision)
  if (history.state !== "ready" || typeof history.value === "string") {
    return <section aria-labelledby="revisions"><h2 id="revisions">Revisions</h2><Status of={history} what="the revisions" /></section>
  }
  const txOf = new Map(props.log.state === "ready" ? props.log.value.map((e) => [e.revisionVersion, e.txHash]) : [])
  const shown = [...history.value.data].reverse().slice(0, 25)
  return (
    <section aria-labelledby="revisions">
      <h2 id="revisions">Revisions</h2>
      <p>
        The latest {shown.length} of {history.value.count}. Each revision's manifest is content-addressed: its keccak256 over the JCS text is the
        metadata hash the registry holds. <a href={apiHref("/v1/oracle/history?granularity=per-revision")}>All of them as JSON</a>.
      </p>
      <div class="table-scroll">
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
            {shown.map((p) => {
              const tx = txOf.get(p.revisionVersion)
              return (
                <tr key={p.revisionVersion}>
                  <td>#{p.revisionVersion}</td>
                  <td>{utc(p.date)}</td>
                  <td class="num">{p.computeIndex === null ? "n/a" : plainNumber(p.computeIndex)}</td>
                  <td><a class="hash" href={apiHref(`/v1/oracle/manifest/${p.metadataHash}`)} title={p.metadataHash}>{shortHash(p.metadataHash)}</a></td>
                  <td>
                    {tx === undefined ? (
                      <a href={apiHref(`/v1/oracle/revisions/${p.revisionVersion}`)}>record</a>
                    ) : (
                      <a class="hash" href={apiHref(`/v1/oracle/revisions/${p.revisionVersion}`)} title={tx}>{shortHash(tx)}</a>
                    )}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
    </section>
  )
}

type LogEntry = typeof ReconstitutionEntry.Type

const ReconstitutionLog = (props: { readonly log: Loaded<ReadonlyArray<LogEntry>> }) => (
  <section aria-labelledby="log">
    <h2 id="log">Reconstitution log</h2>
    <Status of={props.log} what="the reconstitution log" />
    {props.log.state === "ready" &&
      (props.log.value.length === 0 ? (
        <p class="empty">No reconstitution yet: the basket is as it was at genesis.</p>
      ) : (
        <>
          <p>
            Every change to the basket, newest first. <a href={apiHref("/v1/oracle/reconstitutions/export")}>The whole log as Markdown</a>.
          </p>
          <ol class="log" reversed>
            {[...props.log.value].reverse().slice(0, 30).map((e) => (
              <li key={e.revisionVersion}>
                <p>
                  <strong>Revision #{e.revisionVersion}</strong>, {utc(e.publishedAt)}: {e.summary}
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
      ))}
  </section>
)

const Methodology = () => {
  const data = useRead(belowTheFold(() => read("methodology", (o) => o.methodology())))
  if (data.state !== "ready") return <section aria-labelledby="method"><h2 id="method">Methodology</h2><Status of={data} what="the methodology" /></section>
  const active = data.value.entries.find((e) => e.version === data.value.activeVersion)
  return (
    <section aria-labelledby="method">
      <h2 id="method">Methodology in force</h2>
      {active === undefined ? (
        <p class="empty">No methodology is active.</p>
      ) : (
        <>
          <p>
            <strong>Version {active.version}: {active.title}.</strong> {active.formulaSummary}
          </p>
          <p>{active.rationale}</p>
          <p>
            <a href={active.specUrl}>The full methodology</a> · <a href={apiHref("/v1/oracle/methodology")}>every version as JSON</a>
          </p>
        </>
      )}
    </section>
  )
}

const Verify = () => {
  const contract = useRead(belowTheFold(() => read("contract", (o) => o.contractMetadata())))
  return (
    <section id="verify" aria-labelledby="verify-h">
      <h2 id="verify-h">Verify it yourself</h2>
      <Status of={contract} what="the registry contract" />
      {contract.state === "ready" && (
        <dl class="facts">
          <div><dt>Registry contract</dt><dd class="hash" data-testid="registry-address">{contract.value.address}</dd></div>
          <div><dt>Chain id</dt><dd data-testid="chain-id">{contract.value.chainId}</dd></div>
          <div><dt>Contract version</dt><dd>{contract.value.version ?? "unknown"}</dd></div>
        </dl>
      )}
      <p>
        Every revision's manifest lists the basket's prices; its hash is what the registry holds. Recompute each revision's SCU and both hashes from
        its manifest and compare them with the chain:
      </p>
      <pre><code>npm run oracle -- verify</code></pre>
      <p>
        Downloads: <a href={apiHref("/v1/oracle/history?granularity=per-revision")}>history (JSON)</a> ·{" "}
        <a href={apiHref("/v1/oracle/basket")}>basket (JSON)</a> · <a href={apiHref("/v1/oracle/reconstitutions")}>reconstitutions (JSON)</a> ·{" "}
        <a href={apiHref("/v1/oracle/catalog")}>catalog (JSON)</a> · CSV beside each chart and table on this page.
      </p>
    </section>
  )
}

export const IndexPage = () => {
  const log = useRead(belowTheFold(async (): Promise<ReadonlyArray<LogEntry>> => (await reconstitutionLog()).entries))
  const marks: Loaded<ReadonlyArray<{ at: string; label: string }>> =
    log.state === "ready"
      ? {
        state: "ready",
        // A reconstitution changes who is in the basket; a revision that only moves prices is not marked.
        value: log.value
          .filter((e) => e.previousVersion !== null && e.changes.some((c) => c.type !== "PriceChanged"))
          .map((e) => ({ at: e.publishedAt, label: e.summary }))
      }
      : log
  return (
    <>
      <Headline />
      <IndexChart marks={marks} />
      <Basket />
      <Revisions log={log} />
      <ReconstitutionLog log={log} />
      <Methodology />
      <Verify />
    </>
  )
}
