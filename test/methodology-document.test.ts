/**
 * The published methodology parsed into the JSON document the public page renders (domain/oracle/methodologyDocument.ts):
 * the real docs/methodology.md read whole and without losing a word, and small cases of each construct.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import {
  type Block,
  type Inline,
  inlineText,
  type MethodologyDocument,
  parseMethodologyDocument
} from "../domain/oracle/methodologyDocument.ts"

const source = readFileSync(new URL("../docs/methodology.md", import.meta.url), "utf8")

/** Every piece of text a reader can see, and every kept link target. */
const inlineWords = (children: ReadonlyArray<Inline>): Array<string> =>
  children.flatMap((child) =>
    child.t === "text" || child.t === "code"
      ? [child.text]
      : child.t === "link"
        ? [inlineText(child.children), child.href]
        : inlineWords(child.children)
  )

const blockText = (block: Block): string => {
  switch (block.t) {
    case "heading":
    case "paragraph":
      return inlineWords(block.children).join(" ")
    case "code":
      return block.text
    case "list":
      return block.items.map((item) => inlineWords(item).join(" ")).join("\n")
    case "table":
      return [block.header, ...block.rows].map((row) => row.map((cell) => inlineWords(cell).join(" ")).join(" ")).join("\n")
    case "rule":
      return ""
  }
}

const documentText = (document: MethodologyDocument): string => document.blocks.map(blockText).join("\n")

/** Words of 4+ letters or digits, markdown punctuation (`*`, `` ` ``, `|`, `#`, brackets) acting as a separator. */
const words = (text: string): Array<string> => text.split(/[^\p{L}\p{N}]+/u).filter((word) => word.length >= 4)

const counts = (list: ReadonlyArray<string>): Map<string, number> => {
  const map = new Map<string, number>()
  for (const word of list) map.set(word, (map.get(word) ?? 0) + 1)
  return map
}

const text = (t: string): Inline => ({ t: "text", text: t })

describe("docs/methodology.md as a document", () => {
  const document = parseMethodologyDocument(source)

  it("is titled by its level-1 heading", () => {
    expect(document.title).toBe("Methodology")
    expect(document.blocks[0]).toMatchObject({ t: "heading", level: 1, id: "methodology" })
  })

  it("has every ## heading of the file, in order, as a level-2 heading with a unique slug", () => {
    const expected = source
      .split("\n")
      .filter((line) => line.startsWith("## "))
      .map((line) => line.slice(3).trim())
    expect(expected.length).toBeGreaterThan(5)
    const level2 = document.blocks.flatMap((block) => (block.t === "heading" && block.level === 2 ? [block] : []))
    expect(level2.map((block) => inlineText(block.children))).toEqual(expected)
    expect(level2[0]!.id).toBe("the-reference-workload-and-the-scu")
    expect(level2.find((block) => inlineText(block.children).startsWith("Listing criteria"))!.id).toBe(
      "listing-criteria-applied-identically-to-every-model"
    )
    const ids = document.blocks.flatMap((block) => (block.t === "heading" ? [block.id] : []))
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.every((id) => /^[a-z0-9]+(-[a-z0-9]+)*$/.test(id))).toBe(true)
  })

  it("reads the worked example's table: 6 columns, 3 rows", () => {
    const heading = document.blocks.findIndex((block) => block.t === "heading" && inlineText(block.children) === "Worked example")
    expect(heading).toBeGreaterThan(0)
    const table = document.blocks.slice(heading).find((block) => block.t === "table")
    if (table === undefined || table.t !== "table") throw new Error("no table after the worked example's heading")
    expect(table.header.map(inlineText)).toEqual(["member", "input USD/M", "output USD/M", "input18", "output18", "cost18"])
    expect(table.rows).toHaveLength(3)
    for (const row of table.rows) expect(row).toHaveLength(6)
    expect(table.rows[0]!.map(inlineText)).toEqual([
      "A",
      "3",
      "15",
      "3000000000000000000",
      "15000000000000000000",
      "10500000000000000"
    ])
    expect(table.rows[0]![0]).toEqual([text("A")])
  })

  it("keeps the indented formula blocks as code, verbatim", () => {
    const code = document.blocks.flatMap((block) => (block.t === "code" ? [block.text] : []))
    const binding = code.find((t) => t.includes("SCU18    = floorNthRoot("))
    expect(binding).toBeDefined()
    expect(binding!.split("\n")).toHaveLength(3)
    expect(binding!.startsWith("cost18_m = (input18_m x 1000 + output18_m x 500) / 1000000")).toBe(true)
    expect(code.some((t) => t.startsWith("metadataHash = keccak256(utf8(JCS(manifest)))"))).toBe(true)
  })

  it("reads the provenance-mark table's code cells and the decision list", () => {
    const marks = document.blocks.find((block) => block.t === "table" && inlineText(block.header[0]!) === "mark")
    if (marks === undefined || marks.t !== "table") throw new Error("no mark table")
    expect(marks.rows.map((row) => row[0])).toEqual([
      [{ t: "code", text: "verified" }],
      [{ t: "code", text: "promotional" }],
      [{ t: "code", text: "inferred" }]
    ])
    const list = document.blocks.find((block) => block.t === "list")
    if (list === undefined || list.t !== "list") throw new Error("no list")
    expect(list.ordered).toBe(false)
    expect(list.items.map((item) => item[0])).toEqual([
      { t: "code", text: "note" },
      { t: "code", text: "exclude" },
      { t: "code", text: "prefer" }
    ])
  })

  it("turns the link to another repository document into its text", () => {
    const paragraph = document.blocks.find((block) => block.t === "paragraph" && inlineText(block.children).includes("The output of the last pass is in"))
    if (paragraph === undefined || paragraph.t !== "paragraph") throw new Error("no provenance paragraph")
    expect(inlineText(paragraph.children)).toContain("The output of the last pass is in provenance.md, and")
    const links = JSON.stringify(document).match(/"t":"link"/g) ?? []
    expect(links).toHaveLength(0)
    expect(paragraph.children[0]).toEqual({ t: "strong", children: [text("The report.")] })
  })

  it("loses no word of the source", () => {
    const out = documentText(document)
    const outWords = new Set(words(out))
    const missing = [...new Set(words(source))].filter((word) => !outWords.has(word))
    expect(missing).toEqual([])
    // And as many of each: the source without link targets (which do not reach the page) against the output.
    const outCounts = counts(words(out))
    const short = [...counts(words(source.replace(/\]\([^)]*\)/g, "]"))).entries()].filter(
      ([word, n]) => (outCounts.get(word) ?? 0) < n
    )
    expect(short).toEqual([])
  })

  it("is plain JSON and deterministic", () => {
    expect(JSON.parse(JSON.stringify(document))).toEqual(document)
    expect(parseMethodologyDocument(source)).toEqual(document)
    expect(parseMethodologyDocument(source.replace(/\n/g, "\r\n"))).toEqual(document)
  })
})

describe("methodology document: constructs", () => {
  const blocks = (markdown: string) => parseMethodologyDocument(markdown).blocks

  it("reads bold and code inside list items, and items running over continuation lines", () => {
    expect(blocks("- a **bold** word\n- `code` and *em*\n  continued\n")).toEqual([
      {
        t: "list",
        ordered: false,
        items: [
          [text("a "), { t: "strong", children: [text("bold")] }, text(" word")],
          [{ t: "code", text: "code" }, text(" and "), { t: "em", children: [text("em")] }, text(" continued")]
        ]
      }
    ])
  })

  it("reads numbered lists, with their start", () => {
    expect(blocks("1. one\n2. two")).toEqual([{ t: "list", ordered: true, items: [[text("one")], [text("two")]] }])
    expect(blocks("3) three\n\n4) four")).toEqual([{ t: "list", ordered: true, start: 3, items: [[text("three")], [text("four")]] }])
  })

  it("keeps web links and in-page anchors; other targets become their text", () => {
    expect(blocks("See [the spec](https://example.com/a_(b)?x=1 \"Spec\") and [above](#the-scu).")).toEqual([
      {
        t: "paragraph",
        children: [
          text("See "),
          { t: "link", href: "https://example.com/a_(b)?x=1", title: "Spec", children: [text("the spec")] },
          text(" and "),
          { t: "link", href: "#the-scu", children: [text("above")] },
          text(".")
        ]
      }
    ])
    expect(blocks("[**cards**](../data/x.yaml), [p](provenance.md#marks), [j](javascript:alert(1)), <https://a.example/>")).toEqual([
      {
        t: "paragraph",
        children: [
          { t: "strong", children: [text("cards")] },
          text(", p, j, "),
          { t: "link", href: "https://a.example/", children: [text("https://a.example/")] }
        ]
      }
    ])
  })

  it("keeps unknown or unfinished syntax as text", () => {
    const cases = [
      "> a quote with <b>html</b> and [ref][x]",
      "an *unclosed emphasis and a ** pair, 2 * 3, snake_case_name",
      "a `dangling backtick and [a link](without end",
      "| not | a table |\n| but | text |"
    ]
    for (const markdown of cases) {
      const parsed = blocks(markdown)
      expect(parsed).toHaveLength(1)
      expect(parsed[0]!.t).toBe("paragraph")
      const children = parsed[0]!.t === "paragraph" ? parsed[0]!.children : []
      expect(inlineText(children)).toBe(markdown.replace(/\n/g, " "))
    }
    expect(blocks("\\*not em\\* and \\`not code\\`")).toEqual([{ t: "paragraph", children: [text("*not em* and `not code`")] }])
  })

  it("reads headings with deduplicated slugs, fenced code, tables with alignment and rules", () => {
    const parsed = blocks(
      "# Top\n\n## Same\n\n## Same\n\n## Same!\n\n```ts\nconst a = 1\n\n    indented\n```\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n| 3 |\n\n---\n\nSetext\n======"
    )
    expect(parsed).toEqual([
      { t: "heading", level: 1, id: "top", children: [text("Top")] },
      { t: "heading", level: 2, id: "same", children: [text("Same")] },
      { t: "heading", level: 2, id: "same-2", children: [text("Same")] },
      { t: "heading", level: 2, id: "same-3", children: [text("Same!")] },
      { t: "code", language: "ts", text: "const a = 1\n\n    indented" },
      {
        t: "table",
        header: [[text("a")], [text("b")]],
        align: ["left", "right"],
        rows: [
          [[text("1")], [text("2")]],
          [[text("3")], []]
        ]
      },
      { t: "rule" },
      { t: "heading", level: 1, id: "setext", children: [text("Setext")] }
    ])
    expect(parseMethodologyDocument("no heading").title).toBe("")
    expect(parseMethodologyDocument("")).toEqual({ title: "", blocks: [] })
  })
})
