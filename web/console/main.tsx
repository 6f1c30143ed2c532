/**
 * The console (`/console/...`): one shell routed in the browser. Signed out, every route shows the sign-in; signed
 * in, the overview (with funding and withdrawals), the keys and the limits.
 */
import { render } from "preact"
import { pinBase } from "../shared/base.ts"
import { useEffect } from "preact/hooks"
import { LocationProvider, Route, Router } from "preact-iso"
import "../shared/styles.css"
import "./console.css"
import { ConsoleLayout } from "./ConsoleLayout.tsx"
import { KeysPage } from "./KeysPage.tsx"
import { LimitsPage } from "./LimitsPage.tsx"
import { OverviewPage } from "./OverviewPage.tsx"
import { identity, refreshIdentity } from "./session.ts"
import { SignIn } from "./SignIn.tsx"

const App = () => {
  useEffect(() => void refreshIdentity(), [])
  const who = identity.value
  return (
    <LocationProvider>
      <ConsoleLayout>
        {who === undefined ? (
          <p role="status" class="loading">Checking your session…</p>
        ) : who === null ? (
          <SignIn />
        ) : (
          <Router>
            <Route path="/console" component={OverviewPage} />
            <Route path="/console/keys" component={KeysPage} />
            <Route path="/console/limits" component={LimitsPage} />
            <Route default component={OverviewPage} />
          </Router>
        )}
      </ConsoleLayout>
    </LocationProvider>
  )
}

pinBase()
render(<App />, document.getElementById("app")!)
