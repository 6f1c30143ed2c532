/**
 * The public pages in the browser: the server rendered the page and embedded its data; this picks both up
 * (hydration: no read of what the page holds, no second render of different figures) and makes the interactive
 * parts live (the models table's search and sort, the charts' zoom).
 */
import { hydrate } from "preact"
import type { PageData } from "../../domain/oracle/publicPages.ts"
import { pinBase } from "../shared/base.ts"
import "../shared/styles.css"
import { PublicApp } from "./App.tsx"
import { PAGE_DATA_ID } from "./document.ts"

const start = () => {
  const holder = document.getElementById(PAGE_DATA_ID)
  const root = document.getElementById("app")
  if (holder === null || root === null) return
  const data = JSON.parse(holder.textContent ?? "null") as PageData
  pinBase()
  hydrate(<PublicApp data={data} />, root)
}

// The page is complete as the server sent it: let the browser paint it first, then hydrate (on a slow machine,
// hydrating a long page before the first frame held its first paint back by a tenth of a second or more).
requestAnimationFrame(() => setTimeout(start, 0))
