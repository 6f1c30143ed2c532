/**
 * `/methodology`: the published methodology (docs/methodology.md, parsed once by the server), and every version's
 * record as the oracle serves it.
 */
import type { MethodologyPageData } from "../../domain/oracle/publicPages.ts"
import { apiHref } from "../shared/links.ts"
import { MethodologyDocumentView } from "./MethodologyDocument.tsx"

export const MethodologyPage = (props: { readonly data: MethodologyPageData }) => (
  <>
    <article class="prose" data-testid="methodology-document">
      <MethodologyDocumentView document={props.data.document} />
    </article>
    <section aria-labelledby="methodology-versions">
      <h2 id="methodology-versions">Every version</h2>
      <p>
        The version in force is {props.data.activeVersion}. A revision carries the version that produced it for ever.{" "}
        <a href={apiHref("/v1/oracle/methodology")}>Every version as JSON</a>.
      </p>
      <ul data-testid="methodology-versions">
        {props.data.entries.map((e) => (
          <li key={e.version}>
            <strong>Version {e.version}{e.version === props.data.activeVersion ? " (in force)" : ""}: {e.title}.</strong> {e.formulaSummary}{" "}
            <a href={apiHref(`/v1/oracle/methodology/${e.version}`)}>record</a>
          </li>
        ))}
      </ul>
    </section>
  </>
)
