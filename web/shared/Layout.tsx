/**
 * Every public page's frame: a skip link, the site's navigation (the current page marked), the main landmark, and a
 * footer. Links are relative to the page's `<base>`, the service's root, so a path prefix in front of it works.
 */
import type { ComponentChildren } from "preact"

const NAV = [
  { href: "/", label: "Index" },
  { href: "/models", label: "Models" },
  { href: "/revisions", label: "Revisions" },
  { href: "/methodology", label: "Methodology" }
] as const

/** Which navigation entry a page's path belongs to: `/models/openai/gpt-5` is under Models. */
const sectionOf = (path: string) => NAV.filter((item) => item.href !== "/").find((item) => path === item.href || path.startsWith(`${item.href}/`))?.href ?? (path === "/" ? "/" : undefined)

export const Layout = (props: { readonly path: string; readonly children: ComponentChildren }) => {
  const section = sectionOf(props.path.split("?")[0]!)
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="site">
        <a class="brand" href="./">Standard Compute Unit</a>
        <nav aria-label="Site">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <a href={`.${item.href}`} aria-current={section === item.href ? "page" : undefined}>{item.label}</a>
              </li>
            ))}
            <li><a href="./v1/docs">API</a></li>
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>{props.children}</main>
      <footer class="site">
        <p>
          Prices are the vendors' own, each marked verified, inferred or promotional. Every revision of the index is hashed and anchored on-chain:{" "}
          <a href="./#verify">verify it yourself</a>. All times are UTC.
        </p>
      </footer>
    </>
  )
}
