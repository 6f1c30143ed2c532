/**
 * `/revisions` and `/revisions/<n>`: every confirmed revision of the index, and one revision in full: its header,
 * the manifest it hashes, the transaction that anchored it, the SCU it published, and what its reconstitution
 * changed.
 */
import type { RevisionPageData, RevisionRow, RevisionsPageData } from "../../domain/oracle/publicPages.ts"
import { csvHref, formatScaled, plainNumber, shortHash, toCsv, utc } from "../shared/format.ts"
import { apiHref, modelHref, revisionHref } from "../shared/links.ts"

const changeType = (type: string) => (type === "ModelAdded" ? "Added" : type === "ModelRemoved" ? "Removed" : "Price")

export const RevisionsPage = (props: { readonly data: RevisionsPageData }) => {
  const rows: ReadonlyArray<RevisionRow> = props.data.revisions
  const csv = toCsv(
    ["revision", "published_utc", "scu_usd", "compute_index", "methodology", "metadata_hash", "tx_hash"],
    rows.map((r) => [r.revisionVersion, r.publishedAt, formatScaled(r.scuUsd18, 18, 18).replace(/,/g, ""), r.computeIndex, r.methodologyVersion, r.metadataHash, r.txHash])
  )
  return (
    <section aria-labelledby="revisions-heading">
      <h1 id="revisions-heading">Revisions of the index</h1>
      <p class="lede">
        Every confirmed revision, newest first: {rows.length} in all. Each anchored a manifest's keccak256 (over its JCS text) in the registry contract; its
        page shows the manifest, the transaction and what changed. <a href={csvHref(csv)} download="revisions.csv">Download CSV</a> ·{" "}
        <a href={apiHref("/v1/oracle/history?granularity=per-revision")}>as JSON</a>.
      </p>
      {rows.length === 0 ? (
        <p class="empty">No revision of the index has been confirmed on-chain yet.</p>
      ) : (
        <div class="table-scroll" tabIndex={0}>
          <table data-testid="all-revisions-table">
            <caption class="visually-hidden">Confirmed revisions, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Revision</th>
                <th scope="col">Published (UTC)</th>
                <th scope="col" class="num">SCU, USD</th>
                <th scope="col" class="num">Compute index</th>
                <th scope="col">Change</th>
                <th scope="col">Manifest (metadata hash)</th>
                <th scope="col">Transaction</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.revisionVersion} data-revision={r.revisionVersion}>
                  <td><a href={revisionHref(r.revisionVersion)}>#{r.revisionVersion}</a></td>
                  <td>{utc(r.publishedAt)}</td>
                  <td class="num">{formatScaled(r.scuUsd18, 18, 18)}</td>
                  <td class="num">{r.computeIndex === null ? "n/a" : plainNumber(r.computeIndex)}</td>
                  <td>{r.summary ?? <span class="muted">none</span>}</td>
                  <td><a class="hash" href={apiHref(`/v1/oracle/manifest/${r.metadataHash}`)} title={r.metadataHash}>{shortHash(r.metadataHash)}</a></td>
                  <td><span class="hash" title={r.txHash}>{shortHash(r.txHash)}</span></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

export const RevisionPage = (props: { readonly data: RevisionPageData }) => {
  const { revision, reconstitution } = props.data
  const models = [...revision.basket.models].sort((a, b) => a.family.localeCompare(b.family, "en"))
  return (
    <>
      <section aria-labelledby="revision-heading">
        <h1 id="revision-heading">Revision #{revision.revisionVersion}</h1>
        <nav class="pager" aria-label="Other revisions">
          {props.data.previous !== null && <a href={revisionHref(props.data.previous)} rel="prev">Revision #{props.data.previous}</a>}
          <a href="./revisions">Every revision</a>
          {props.data.next !== null && <a href={revisionHref(props.data.next)} rel="next">Revision #{props.data.next}</a>}
        </nav>
        <dl class="facts">
          <div><dt>SCU published (USD per reference workload)</dt><dd class="big" data-testid="revision-scu">{formatScaled(revision.scuUsd18, 18, 18)}</dd></div>
          <div><dt>Compute index</dt><dd data-testid="revision-index">{props.data.computeIndex === null ? "n/a" : plainNumber(props.data.computeIndex)}</dd></div>
          <div><dt>Published (UTC)</dt><dd>{utc(revision.publishedAt)}</dd></div>
          <div><dt>Confirmed (UTC)</dt><dd>{utc(revision.confirmedAt)}</dd></div>
          <div><dt>Methodology</dt><dd><a href="./methodology">version {revision.methodologyVersion}</a></dd></div>
          <div><dt>Basket</dt><dd>{revision.basketSize} families</dd></div>
          <div><dt>Block</dt><dd data-testid="revision-block">{revision.publishedBlock}</dd></div>
          <div><dt>Transaction</dt><dd class="hash" data-testid="revision-tx">{revision.txHash}</dd></div>
          <div>
            <dt>Manifest (metadata hash)</dt>
            <dd class="hash">
              <a href={apiHref(`/v1/oracle/manifest/${props.data.metadataHash}`)} data-testid="revision-manifest">{props.data.metadataHash}</a>
            </dd>
          </div>
          <div><dt>Content hash</dt><dd class="hash">{props.data.contentHash}</dd></div>
        </dl>
        <p>
          The registry holds the metadata hash: keccak256 over the manifest's JCS text. <a href={apiHref(`/v1/oracle/revisions/${revision.revisionVersion}`)}>This revision as JSON</a>.
        </p>
      </section>
      <section aria-labelledby="revision-changes">
        <h2 id="revision-changes">What changed</h2>
        {reconstitution === null ? (
          <p class="empty">Nothing: the basket and its prices are as in the revision before.</p>
        ) : (
          <>
            <p>{reconstitution.summary}</p>
            {reconstitution.changes.length > 0 && (
              <ul data-testid="revision-change-list">
                {reconstitution.changes.map((c, i) => (
                  <li key={i}><span class="change-type">{changeType(c.type)}</span> <a href={modelHref(c.modelKey)}>{c.modelKey}</a>: {c.description}</li>
                ))}
              </ul>
            )}
          </>
        )}
      </section>
      <section aria-labelledby="revision-basket">
        <h2 id="revision-basket">The basket it priced</h2>
        {models.length === 0 ? (
          <p class="empty">This revision's manifest is not stored here.</p>
        ) : (
          <div class="table-scroll" tabIndex={0}>
            <table data-testid="revision-basket-table">
              <caption class="visually-hidden">The basket of revision #{revision.revisionVersion}, list prices in USD per million tokens</caption>
              <thead>
                <tr>
                  <th scope="col">Family</th>
                  <th scope="col">Model</th>
                  <th scope="col" class="num">Input, USD/M</th>
                  <th scope="col" class="num">Output, USD/M</th>
                </tr>
              </thead>
              <tbody>
                {models.map((m) => (
                  <tr key={m.family}>
                    <td>{m.family}</td>
                    <td><a href={modelHref(m.modelKey)}>{m.modelKey}</a></td>
                    <td class="num">{formatScaled(m.inputPrice, 18, 18)}</td>
                    <td class="num">{formatScaled(m.outputPrice, 18, 18)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  )
}
