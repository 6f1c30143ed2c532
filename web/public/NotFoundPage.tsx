import type { NotFoundPageData } from "../../domain/oracle/publicPages.ts"

export const NotFoundPage = (props: { readonly data: NotFoundPageData }) => (
  <section aria-labelledby="nf">
    <h1 id="nf">No such page</h1>
    <p>{props.data.message}</p>
    <p>
      See <a href="./">the index</a>, <a href="./models">the models</a> or <a href="./revisions">the revisions</a>.
    </p>
  </section>
)
