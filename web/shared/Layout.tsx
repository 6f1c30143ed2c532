/**
 * Every page's frame: a skip link, the site's navigation, the main landmark, and a footer.
 */
import type { ComponentChildren } from "preact"
import { useLocation } from "preact-iso"
import { apiHref } from "./api.ts"

const NAV = [
  { href: "/", label: "Index" },
  { href: "/models", label: "Models" }
] as const

export const Layout = (props: { readonly children: ComponentChildren }) => {
  const { path } = useLocation()
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="site">
        <a class="brand" href=".">Standard Compute Unit</a>
        <nav aria-label="Site">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <a href={`.${item.href === "/" ? "/" : item.href}`} aria-current={path === item.href ? "page" : undefined}>{item.label}</a>
              </li>
            ))}
            <li><a href={apiHref("/v1/docs")}>API</a></li>
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
