/**
 * The shell's `<base href>` is relative (`./`, `../`) so the pages work under any path prefix; but a relative base
 * is resolved against the document's CURRENT URL, which client-side routing changes. Resolved once at load, where
 * the server wrote it for, and pinned as an absolute URL, every relative link keeps pointing at the service's root.
 */
export const pinBase = (): void => {
  const base = document.querySelector("base")
  if (base !== null) base.setAttribute("href", new URL(".", document.baseURI).href)
}
