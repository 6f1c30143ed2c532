/**
 * The published methodology (docs/methodology.md), rendered from the document the server parsed once
 * (domain/oracle/methodologyDocument.ts). The same JSON renders the same HTML on the server and in the browser, so the
 * page hydrates without a mismatch: no DOM access, no clock, no randomness. The parser already merges adjacent text,
 * so no two text nodes sit side by side (the browser would read them back as one).
 *
 * Wide content scrolls within itself, never the page: tables sit in `.table-scroll`, code blocks in `<pre>`
 * (`pre { overflow-x: auto }` in web/shared/styles.css).
 */
import type { Block, HeadingLevel, Inline, MethodologyDocument, TableAlign } from "../../domain/oracle/methodologyDocument.ts"

const HEADINGS: Record<HeadingLevel, "h1" | "h2" | "h3" | "h4" | "h5" | "h6"> = { 1: "h1", 2: "h2", 3: "h3", 4: "h4", 5: "h5", 6: "h6" }

const Inlines = (props: { readonly children: ReadonlyArray<Inline> }) => (
  <>
    {props.children.map((inline, i) => {
      switch (inline.t) {
        case "text":
          return inline.text
        case "code":
          return <code key={i}>{inline.text}</code>
        case "strong":
          return <strong key={i}><Inlines>{inline.children}</Inlines></strong>
        case "em":
          return <em key={i}><Inlines>{inline.children}</Inlines></em>
        case "link":
          return (
            <a key={i} href={inline.href} {...(inline.title === undefined ? {} : { title: inline.title })}>
              <Inlines>{inline.children}</Inlines>
            </a>
          )
      }
    })}
  </>
)

const alignStyle = (align: ReadonlyArray<TableAlign> | undefined, column: number) => {
  const value = align?.[column]
  return value === undefined || value === null ? {} : { style: { textAlign: value } }
}

const BlockView = (props: { readonly block: Block }) => {
  const block = props.block
  switch (block.t) {
    case "heading": {
      const Tag = HEADINGS[block.level]
      return <Tag id={block.id}><Inlines>{block.children}</Inlines></Tag>
    }
    case "paragraph":
      return <p><Inlines>{block.children}</Inlines></p>
    case "code":
      return (
        <pre tabIndex={0}>
          <code {...(block.language === undefined ? {} : { class: `language-${block.language.split(/\s/)[0]}` })}>{block.text}</code>
        </pre>
      )
    case "list": {
      const items = block.items.map((item, i) => <li key={i}><Inlines>{item}</Inlines></li>)
      return block.ordered ? <ol {...(block.start === undefined ? {} : { start: block.start })}>{items}</ol> : <ul>{items}</ul>
    }
    case "table":
      return (
        <div class="table-scroll" tabIndex={0}>
          <table>
            <thead>
              <tr>
                {block.header.map((cell, i) => (
                  <th key={i} scope="col" {...alignStyle(block.align, i)}><Inlines>{cell}</Inlines></th>
                ))}
              </tr>
            </thead>
            <tbody>
              {block.rows.map((row, r) => (
                <tr key={r}>
                  {row.map((cell, i) => (
                    <td key={i} {...alignStyle(block.align, i)}><Inlines>{cell}</Inlines></td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )
    case "rule":
      return <hr />
  }
}

export const MethodologyDocumentView = (props: { readonly document: MethodologyDocument }) => (
  <div class="methodology-document">
    {props.document.blocks.map((block, i) => <BlockView key={i} block={block} />)}
  </div>
)
