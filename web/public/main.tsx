/**
 * The public pages: the index (`/`) and the model browser (`/models`), routed in the browser over one shell.
 */
import { render } from "preact"
import { pinBase } from "../shared/base.ts"
import { LocationProvider, Route, Router } from "preact-iso"
import { Layout } from "../shared/Layout.tsx"
import "../shared/styles.css"
import { IndexPage } from "./IndexPage.tsx"
import { ModelsPage } from "./ModelsPage.tsx"
import { NotFoundPage } from "./NotFoundPage.tsx"

const App = () => (
  <LocationProvider>
    <Layout>
      <Router>
        <Route path="/" component={IndexPage} />
        <Route path="/models" component={ModelsPage} />
        <Route default component={NotFoundPage} />
      </Router>
    </Layout>
  </LocationProvider>
)

pinBase()
render(<App />, document.getElementById("app")!)
