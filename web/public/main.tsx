/**
 * The public pages: the index (`/`) and the model browser (`/models`), routed in the browser over one shell.
 */
import { render } from "preact"
import { pinBase } from "../shared/base.ts"
import { lazy, LocationProvider, Route, Router } from "preact-iso"
import { Layout } from "../shared/Layout.tsx"
import "../shared/styles.css"
import { IndexPage } from "./IndexPage.tsx"
import { NotFoundPage } from "./NotFoundPage.tsx"

// A visit to `/` does not fetch the model browser's code (a fifth of the page's own JavaScript).
const ModelsPage = lazy(() => import("./ModelsPage.tsx").then((module) => module.ModelsPage))

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
