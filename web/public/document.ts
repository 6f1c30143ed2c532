/**
 * What the server's HTML and the browser's hydration agree on: where the page's data sits in the document.
 */
export const PAGE_DATA_ID = "cx-page-data"

/** The assets and addresses a rendered page refers to. */
export interface DocumentShell {
  /** The page's `<base href>`: the service's root relative to the page (`./`, `../`, `../../`). */
  readonly base: string
  /** Absolute root for canonical and Open Graph URLs: `https://index.example.com` (no trailing slash). */
  readonly origin: string
  /** The stylesheet's text, inlined: a first visit paints without waiting for a second request. */
  readonly css: string
  readonly scripts: ReadonlyArray<string>
}

export type RenderDocument = (data: import("../../domain/oracle/publicPages.ts").PageData, shell: DocumentShell) => string

/**
 * The text of the page's one inline `<style>` element, exactly as the renderer writes it: the stylesheet, unable to
 * close its element. The server allows it in the pages' Content-Security-Policy by the SHA-256 of this very text.
 */
export const inlineStyleText = (css: string): string => css.replace(/<\/style/gi, "<\\/style")
