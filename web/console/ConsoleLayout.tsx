/** The console's frame: skip link, navigation, who is signed in and sign-out, the main landmark. */
import type { ComponentChildren } from "preact"
import { useLocation } from "preact-iso"
import { call } from "./api.ts"
import { ContextSwitcher } from "./orgs/ContextSwitcher.tsx"
import { identity } from "./session.ts"

const NAV = [
  { path: "/console", href: "console", label: "Overview" },
  { path: "/console/keys", href: "console/keys", label: "Keys" },
  { path: "/console/playground", href: "console/playground", label: "Playground" },
  { path: "/console/limits", href: "console/limits", label: "Limits" },
  { path: "/console/activity", href: "console/activity", label: "Activity" },
  { path: "/console/logs", href: "console/logs", label: "Logs" },
  { path: "/console/orgs", href: "console/orgs", label: "Organizations" },
  { path: "/console/apps", href: "console/apps", label: "Connected apps" },
  { path: "/console/points", href: "console/points", label: "Points" }
] as const

export const ConsoleLayout = (props: { readonly children: ComponentChildren }) => {
  const { path } = useLocation()
  const who = identity.value
  const signOut = async () => {
    await call((c) => c.auth.logout()).catch(() => undefined)
    identity.value = null
  }
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="site">
        <a class="brand" href="./">Compute Exchange</a>
        <nav aria-label="Console">
          <ul>
            {who !== null && who !== undefined &&
              NAV.map((item) => (
                <li key={item.path}>
                  <a href={item.href} aria-current={path === item.path ? "page" : undefined}>{item.label}</a>
                </li>
              ))}
            <li><a href="./">Index</a></li>
          </ul>
        </nav>
        <ContextSwitcher />
        {who !== null && who !== undefined && (
          <p class="who">
            <span data-testid="signed-in-as">{who.display_name}</span> <button type="button" class="link" onClick={signOut}>Sign out</button>
          </p>
        )}
      </header>
      <main id="main" tabIndex={-1}>{props.children}</main>
    </>
  )
}
