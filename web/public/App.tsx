/**
 * One public page from its data: the same tree the server renders to HTML and the browser hydrates.
 */
import type { PageData } from "../../domain/oracle/publicPages.ts"
import { Layout } from "../shared/Layout.tsx"
import { IndexPage } from "./IndexPage.tsx"
import { MethodologyPage } from "./MethodologyPage.tsx"
import { ModelsPage } from "./ModelsPage.tsx"
import { ModelPage } from "./models/ModelPage.tsx"
import { NotFoundPage } from "./NotFoundPage.tsx"
import { RevisionPage, RevisionsPage } from "./RevisionsPage.tsx"

const Page = (props: { readonly data: PageData }) => {
  const data = props.data
  switch (data.page) {
    case "index":
      return <IndexPage data={data} />
    case "models":
      return <ModelsPage data={data} />
    case "model":
      return <ModelPage data={data} />
    case "revisions":
      return <RevisionsPage data={data} />
    case "revision":
      return <RevisionPage data={data} />
    case "methodology":
      return <MethodologyPage data={data} />
    case "notFound":
      return <NotFoundPage data={data} />
  }
}

export const PublicApp = (props: { readonly data: PageData }) => (
  <Layout path={props.data.meta.path}>
    <Page data={props.data} />
  </Layout>
)
