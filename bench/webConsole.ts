/**
 * The console's part of `npm run bench:web`: the JavaScript a first visit to `/console` fetches (gzip), and, for a
 * signed-in user, each console page's time to usable: navigation start to the page showing its heading with none of
 * its reads still loading (no `.loading` status left in the main landmark), read from the browser's own clock
 * (`performance.now()` counts from navigation start). The user signs in by wallet (EIP-4361) over HTTP, so the run
 * needs no mail server; the session cookie is then handed to the browser.
 */
import * as Path from "node:path"
import type { Browser } from "playwright-core"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { createSiweMessage } from "viem/siwe"
import { log } from "./common.ts"

export const CONSOLE_BUDGET_KB = 250

/** Every console page a signed-in user opens from the navigation. */
const PAGES = ["/console", "/console/keys", "/console/playground", "/console/limits", "/console/activity", "/console/logs", "/console/orgs", "/console/apps", "/console/points"]

/**
 * The page is usable: its heading drawn and nothing loading. A function, not a string: the console's
 * Content-Security-Policy forbids eval, which a string predicate needs.
 */
const usable = () => {
  const doc = (globalThis as unknown as { readonly document: { readonly querySelector: (selector: string) => unknown } }).document
  return doc.querySelector("main h1") !== null && doc.querySelector("main .loading") === null
}

const signInByWallet = async (base: string, address: string): Promise<string> => {
  const account = privateKeyToAccount(generatePrivateKey())
  const headers = { "content-type": "application/json", "x-forwarded-for": address }
  const issued = (await (await fetch(`${base}/v1/auth/siwe/nonce`, { headers })).json()) as { nonce: string; chainId: number; domain: string; uri: string }
  const message = createSiweMessage({ address: account.address, chainId: issued.chainId, domain: issued.domain, nonce: issued.nonce, uri: issued.uri, version: "1" })
  const verified = await fetch(`${base}/v1/auth/siwe/verify`, {
    method: "POST",
    headers,
    body: JSON.stringify({ message, signature: await account.signMessage({ message }) })
  })
  const cookie = /cf_session=([^;]+)/.exec(verified.headers.get("set-cookie") ?? "")?.[1]
  if (verified.status !== 200 || cookie === undefined) throw new Error(`wallet sign-in answered ${verified.status}`)
  return cookie
}

export interface ConsoleFigures {
  readonly firstVisitKb: number
  readonly files: ReadonlyArray<{ readonly file: string; readonly gzip: number }>
  /** Per page: time to usable over the loads, in ms. */
  readonly pages: ReadonlyArray<{ readonly path: string; readonly usable: ReadonlyArray<number> }>
}

export const measureConsole = async (browser: Browser, base: string, gzipOf: ReadonlyMap<string, number>, loads: number): Promise<ConsoleFigures> => {
  log(`[web] the console: a first visit to /console, then ${PAGES.length} pages x ${loads} loads signed in ...`)
  const clientAddress = "198.18.9.1"
  const context = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": clientAddress } })
  try {
    const page = await context.newPage()
    const scripts = new Set<string>()
    page.on("response", (response) => {
      if (response.url().endsWith(".js")) scripts.add(Path.basename(new URL(response.url()).pathname))
    })
    await page.goto(`${base}/console`)
    await page.getByLabel("E-mail address").waitFor({ timeout: 15_000 })
    await page.waitForLoadState("networkidle")
    const files = [...scripts].map((file) => ({ file, gzip: gzipOf.get(file) ?? Number.NaN }))
    const firstVisitKb = files.reduce((sum, f) => sum + f.gzip, 0) / 1024

    const cookie = await signInByWallet(base, clientAddress)
    await context.addCookies([{ name: "cf_session", value: cookie, url: base }])
    const pages: Array<{ path: string; usable: Array<number> }> = PAGES.map((path) => ({ path, usable: [] }))
    for (let i = 0; i < loads; i++) {
      for (const entry of pages) {
        await page.goto(`${base}${entry.path}`)
        await page.waitForFunction(usable, undefined, { timeout: 15_000, polling: 10 })
        entry.usable.push((await page.evaluate("performance.now()")) as number)
      }
      log(`[web]   console round ${i + 1}/${loads}`)
    }
    return { firstVisitKb, files, pages }
  } finally {
    await context.close()
  }
}
