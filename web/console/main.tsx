/**
 * The console (`/console/...`): one shell routed in the browser. Signed out, every route shows the sign-in (an
 * invitation's link shows the invitation above it); signed in, the overview (with funding and withdrawals), the keys,
 * the limits and the organizations, in the active context.
 */
import { render } from "preact"
import { pinBase } from "../shared/base.ts"
import { useEffect } from "preact/hooks"
import { LocationProvider, Route, Router } from "preact-iso"
import "../shared/styles.css"
import "./console.css"
import { ActivityPage } from "./ActivityPage.tsx"
import { AppsPage } from "./AppsPage.tsx"
import { LogsPage } from "./LogsPage.tsx"
import { ConsoleLayout } from "./ConsoleLayout.tsx"
import { KeysPage } from "./KeysPage.tsx"
import { LimitsPage } from "./LimitsPage.tsx"
import { OverviewPage } from "./OverviewPage.tsx"
import { InvitationPage } from "./orgs/InvitationPage.tsx"
import { OrgPage } from "./orgs/OrgPage.tsx"
import { OrgsPage } from "./orgs/OrgsPage.tsx"
import { PlaygroundPage } from "./playground/PlaygroundPage.tsx"
import { PointsPage } from "./PointsPage.tsx"
import { contextKey, identity, refreshIdentity } from "./session.ts"
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
          // An invitation's link shows the invitation to a signed-out visitor, with the sign-in beneath it.
          <Router>
            <Route path="/console/invitations/:token" component={InvitationPage} />
            <Route default component={SignIn} />
          </Router>
        ) : (
          // Keyed by the active context: a switch remounts the page, which reads everything again in the new context.
          <Router key={contextKey(who)}>
            <Route path="/console" component={OverviewPage} />
            <Route path="/console/keys" component={KeysPage} />
            <Route path="/console/limits" component={LimitsPage} />
            <Route path="/console/activity" component={ActivityPage} />
            <Route path="/console/logs" component={LogsPage} />
            <Route path="/console/orgs" component={OrgsPage} />
            <Route path="/console/orgs/:id" component={OrgPage} />
            <Route path="/console/invitations/:token" component={InvitationPage} />
            <Route path="/console/apps" component={AppsPage} />
            <Route path="/console/points" component={PointsPage} />
            <Route path="/console/playground" component={PlaygroundPage} />
            <Route default component={OverviewPage} />
          </Router>
        )}
      </ConsoleLayout>
    </LocationProvider>
  )
}

pinBase()
render(<App />, document.getElementById("app")!)
