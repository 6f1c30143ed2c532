/**
 * The server's side of the public pages: one page's data rendered to a whole HTML document by the SAME components
 * the browser hydrates (preact-render-to-string), with its title, description, canonical URL and Open Graph tags,
 * and the data embedded for hydration. Built by web/build.ts into a module the service loads (src/http/WebPages.ts).
 */
import { renderToString } from "preact-render-to-string"
import type { PageData } from "../../domain/oracle/publicPages.ts"
import { PublicApp } from "./App.tsx"
import { type DocumentShell, inlineStyleText, PAGE_DATA_ID, type RenderDocument } from "./document.ts"

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** JSON inside a script element: nothing in it may close the element or open a comment. */
const embeddedJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")

export const renderDocument: RenderDocument = (data: PageData, shell: DocumentShell) => {
  const body = renderToString(<PublicApp data={data} />)
  const url = `${shell.origin}${data.meta.path}`
  const title = escapeHtml(data.meta.title)
  const description = escapeHtml(data.meta.description)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="${shell.base}">
<link rel="icon" href="data:,">
<title>${title}</title>
<meta name="description" content="${description}">
<link rel="canonical" href="${escapeHtml(url)}">
<meta property="og:type" content="website">
<meta property="og:site_name" content="Standard Compute Unit">
<meta property="og:title" content="${title}">
<meta property="og:description" content="${description}">
<meta property="og:url" content="${escapeHtml(url)}">
<meta name="twitter:card" content="summary">
${data.page === "notFound" ? '<meta name="robots" content="noindex">\n' : ""}<style>${inlineStyleText(shell.css)}</style>
${shell.scripts.map((src) => `<script type="module" src="./${src}"></script>`).join("\n")}
</head>
<body>
<div id="app">${body}</div>
<script type="application/json" id="${PAGE_DATA_ID}">${embeddedJson(data)}</script>
</body>
</html>
`
}
