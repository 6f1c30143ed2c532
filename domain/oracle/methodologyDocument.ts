/**
 * The published methodology (docs/methodology.md) as a document the public pages render: the Markdown is parsed once,
 * on the server, into plain JSON (objects, arrays, strings, numbers, booleans, null), which the server renders with
 * Preact and hands to the browser to hydrate. The parse is pure and deterministic (same text, same document), never
 * throws and never drops text: whatever it does not recognise is kept as the text of a paragraph.
 *
 * What it reads: ATX headings (`#` to `######`) and setext headings (`===`/`---` under a line), paragraphs, indented
 * (4 spaces or a tab) and fenced code blocks, GitHub tables (header row, delimiter row, body rows), bullet (`-`, `*`,
 * `+`) and numbered (`1.`, `1)`) lists whose items may run over continuation lines, thematic breaks; inline: code
 * spans, `**strong**`/`__strong__`, `*em*`/`_em_`, links `[text](url "title")`, autolinks `<https://...>`, images
 * (kept as their alt text, or a link to the image) and backslash escapes.
 *
 * Links: an `http(s)://` URL and an in-page anchor (`#x`) stay links; anything else (a repository path such as
 * `provenance.md` or `../data/x.yaml`, which the site does not serve, a site-relative path, another scheme) becomes
 * its text, without the link.
 */

export type Inline =
  | { readonly t: "text"; readonly text: string }
  | { readonly t: "code"; readonly text: string }
  | { readonly t: "strong"; readonly children: ReadonlyArray<Inline> }
  | { readonly t: "em"; readonly children: ReadonlyArray<Inline> }
  | { readonly t: "link"; readonly href: string; readonly title?: string; readonly children: ReadonlyArray<Inline> }

export type HeadingLevel = 1 | 2 | 3 | 4 | 5 | 6
export type TableAlign = "left" | "center" | "right" | null

export type Block =
  | { readonly t: "heading"; readonly level: HeadingLevel; readonly id: string; readonly children: ReadonlyArray<Inline> }
  | { readonly t: "paragraph"; readonly children: ReadonlyArray<Inline> }
  /** `language`: the info string of a fenced block, when it has one. */
  | { readonly t: "code"; readonly text: string; readonly language?: string }
  /** `start`: the first number of an ordered list that does not start at 1. */
  | { readonly t: "list"; readonly ordered: boolean; readonly start?: number; readonly items: ReadonlyArray<ReadonlyArray<Inline>> }
  /**
   * `align`: per header column, when the delimiter row sets one (`:--`, `:-:`, `--:`). Body rows shorter than the
   * header are padded with empty cells; a longer row keeps its extra cells.
   */
  | {
      readonly t: "table"
      readonly header: ReadonlyArray<ReadonlyArray<Inline>>
      readonly align?: ReadonlyArray<TableAlign>
      readonly rows: ReadonlyArray<ReadonlyArray<ReadonlyArray<Inline>>>
    }
  | { readonly t: "rule" }

export interface MethodologyDocument {
  readonly title: string
  readonly blocks: ReadonlyArray<Block>
}

// ---- inline -------------------------------------------------------------------------------------------------------

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/
const isPunctuation = (c: string | undefined): boolean => c !== undefined && ASCII_PUNCTUATION.test(c)
const isSpace = (c: string | undefined): boolean => c === undefined || /\s/.test(c)
const isAlphanumeric = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}]/u.test(c)

/** The length of the run of `c` starting at `i`. */
const runLength = (s: string, i: number, c: string): number => {
  let j = i
  while (s[j] === c) j++
  return j - i
}

/** A code span opening at `i` (a backtick run): its end (after the closing run) and content, or undefined. */
const codeSpanAt = (s: string, i: number): { readonly end: number; readonly text: string } | undefined => {
  const n = runLength(s, i, "`")
  let j = i + n
  while (j < s.length) {
    if (s[j] === "`") {
      const m = runLength(s, j, "`")
      if (m === n) {
        let text = s.slice(i + n, j).replace(/\n/g, " ")
        if (text.length >= 2 && text.startsWith(" ") && text.endsWith(" ") && text.trim() !== "") text = text.slice(1, -1)
        return { end: j + m, text }
      }
      j += m
    } else j++
  }
  return undefined
}

/** Where scanning resumes after the construct at `i` that hides delimiters (escape, code span), else i + 1. */
const skip = (s: string, i: number): number => {
  if (s[i] === "\\" && isPunctuation(s[i + 1])) return i + 2
  if (s[i] === "`") {
    const span = codeSpanAt(s, i)
    return span === undefined ? i + runLength(s, i, "`") : span.end
  }
  return i + 1
}

/** The `]` matching the `[` at `i` (nesting counted, escapes and code spans skipped), or -1. */
const closingBracket = (s: string, i: number): number => {
  let depth = 0
  let j = i
  while (j < s.length) {
    const c = s[j]
    if (c === "[") depth++
    else if (c === "]") {
      depth--
      if (depth === 0) return j
    }
    j = c === "[" || c === "]" ? j + 1 : skip(s, j)
  }
  return -1
}

/** `(destination "title")` at `i`: its end, destination and title, or undefined. */
const linkTail = (
  s: string,
  i: number
): { readonly end: number; readonly href: string; readonly title: string | undefined } | undefined => {
  if (s[i] !== "(") return undefined
  let j = i + 1
  while (j < s.length && /\s/.test(s[j]!)) j++
  let href = ""
  if (s[j] === "<") {
    const close = s.indexOf(">", j + 1)
    if (close < 0 || s.slice(j + 1, close).includes("\n")) return undefined
    href = s.slice(j + 1, close)
    j = close + 1
  } else {
    let depth = 0
    const start = j
    while (j < s.length) {
      const c = s[j]!
      if (c === "\\" && isPunctuation(s[j + 1])) {
        j += 2
        continue
      }
      if (/\s/.test(c)) break
      if (c === "(") depth++
      else if (c === ")") {
        if (depth === 0) break
        depth--
      }
      j++
    }
    href = s.slice(start, j).replace(/\\([!-/:-@[-`{-~])/g, "$1")
  }
  const beforeTitle = j
  while (j < s.length && /\s/.test(s[j]!)) j++
  let title: string | undefined
  const open = s[j]
  if (j > beforeTitle && (open === '"' || open === "'" || open === "(")) {
    const closer = open === "(" ? ")" : open
    let k = j + 1
    while (k < s.length && s[k] !== closer) k += s[k] === "\\" ? 2 : 1
    if (k >= s.length) return undefined
    title = s.slice(j + 1, k).replace(/\\([!-/:-@[-`{-~])/g, "$1")
    j = k + 1
    while (j < s.length && /\s/.test(s[j]!)) j++
  }
  if (s[j] !== ")") return undefined
  return { end: j + 1, href, title }
}

/** A link the site can serve: a web URL or an anchor in the page. */
const keptHref = (href: string): boolean => /^https?:\/\/\S+$/i.test(href) || /^#\S*$/.test(href)

/**
 * The closing delimiter for an opener of `count` (1 or 2) `ch` characters, searched from `from`: the index where the
 * closing characters start (the inner end of a closing run), or -1. A run of exactly 2 never closes emphasis and a
 * run of exactly 1 never closes strong (they belong to a nested construct).
 */
const closingDelimiter = (s: string, from: number, ch: string, count: number): number => {
  let j = from
  while (j < s.length) {
    if (s[j] === ch) {
      const n = runLength(s, j, ch)
      const before = s[j - 1]
      const after = s[j + n]
      const closes = j > from && !isSpace(before) && (ch !== "_" || !isAlphanumeric(after))
      const fits = count === 1 ? n !== 2 : n >= 2
      if (closes && fits) return j + n - count
      j += n
    } else j = s[j] === "[" || s[j] === "]" ? j + 1 : skip(s, j)
  }
  return -1
}

const pushText = (out: Array<Inline>, text: string): void => {
  if (text === "") return
  const last = out[out.length - 1]
  if (last !== undefined && last.t === "text") out[out.length - 1] = { t: "text", text: last.text + text }
  else out.push({ t: "text", text })
}

const pushAll = (out: Array<Inline>, children: ReadonlyArray<Inline>): void => {
  for (const child of children) {
    if (child.t === "text") pushText(out, child.text)
    else out.push(child)
  }
}

const linkOrText = (out: Array<Inline>, href: string, title: string | undefined, children: ReadonlyArray<Inline>) => {
  if (keptHref(href)) out.push(title === undefined ? { t: "link", href, children } : { t: "link", href, title, children })
  else pushAll(out, children)
}

/** The inline content of `s` (no trailing or leading newline expected). */
export const parseInlines = (s: string): ReadonlyArray<Inline> => {
  const out: Array<Inline> = []
  let i = 0
  while (i < s.length) {
    const c = s[i]!
    if (c === "\\" && isPunctuation(s[i + 1])) {
      pushText(out, s[i + 1]!)
      i += 2
      continue
    }
    if (c === "`") {
      const span = codeSpanAt(s, i)
      if (span === undefined) {
        const n = runLength(s, i, "`")
        pushText(out, s.slice(i, i + n))
        i += n
      } else {
        out.push({ t: "code", text: span.text })
        i = span.end
      }
      continue
    }
    if (c === "<") {
      const auto = /^<(https?:\/\/[^\s<>]+)>/i.exec(s.slice(i))
      if (auto !== null) {
        out.push({ t: "link", href: auto[1]!, children: [{ t: "text", text: auto[1]! }] })
        i += auto[0].length
        continue
      }
    }
    if (c === "[" || (c === "!" && s[i + 1] === "[")) {
      const open = c === "!" ? i + 1 : i
      const close = closingBracket(s, open)
      const tail = close < 0 ? undefined : linkTail(s, close + 1)
      if (tail !== undefined) {
        const label = s.slice(open + 1, close)
        // An image: the site shows no repository images; its alt text stands in (a link to it when it is on the web).
        linkOrText(out, tail.href, tail.title, parseInlines(label))
        i = tail.end
        continue
      }
    }
    if (c === "*" || c === "_") {
      const n = runLength(s, i, c)
      const after = s[i + n]
      const opens = !isSpace(after) && (c !== "_" || !isAlphanumeric(s[i - 1]))
      let matched = false
      if (opens) {
        // Try em(strong(...)) for a run of 3 or more, strong for 2 or more, then em; the opener is the inner end of
        // the run and any characters of the run before it stay text.
        const attempts: ReadonlyArray<"both" | "strong" | "em"> =
          n >= 3 ? ["both", "strong", "em"] : n === 2 ? ["strong", "em"] : ["em"]
        for (const kind of attempts) {
          const width = kind === "both" ? 3 : kind === "strong" ? 2 : 1
          const start = i + n
          if (kind === "both") {
            const end = closingDelimiter(s, start, c, 2)
            if (end < 0 || s[end - 1] !== c || end - 1 <= start) continue
            const inner = s.slice(start, end - 1)
            pushText(out, s.slice(i, i + n - width))
            out.push({ t: "em", children: [{ t: "strong", children: parseInlines(inner) }] })
            i = end + 2
            matched = true
            break
          }
          const end = closingDelimiter(s, start, c, width)
          if (end < 0 || end <= start) continue
          const inner = s.slice(start, end)
          pushText(out, s.slice(i, i + n - width))
          out.push({ t: kind, children: parseInlines(inner) })
          i = end + width
          matched = true
          break
        }
      }
      if (!matched) {
        pushText(out, s.slice(i, i + n))
        i += n
      }
      continue
    }
    pushText(out, c)
    i++
  }
  return out
}

/** The text a reader sees of some inline content (link targets not included). */
export const inlineText = (children: ReadonlyArray<Inline>): string =>
  children.map((child) => (child.t === "text" || child.t === "code" ? child.text : inlineText(child.children))).join("")

// ---- blocks -------------------------------------------------------------------------------------------------------

/** Leading tabs expanded to the next multiple of 4 columns (indentation is measured in columns). */
const expandIndent = (line: string): string => {
  const lead = /^[ \t]*/.exec(line)![0]
  if (!lead.includes("\t")) return line
  let column = 0
  for (const c of lead) column = c === "\t" ? column + 4 - (column % 4) : column + 1
  return " ".repeat(column) + line.slice(lead.length)
}

const indentOf = (line: string): number => /^ */.exec(line)![0].length
const isBlank = (line: string): boolean => line.trim() === ""

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/
const BULLET = /^( {0,3})([-+*])(?:[ \t]+(.*)|[ \t]*)$/
const ORDERED = /^( {0,3})(\d{1,9})([.)])(?:[ \t]+(.*)|[ \t]*)$/
const SETEXT_1 = /^ {0,3}=+[ \t]*$/
const SETEXT_2 = /^ {0,3}-+[ \t]*$/

const fenceOpen = (line: string): { readonly indent: number; readonly fence: string; readonly info: string } | undefined => {
  const m = FENCE.exec(line)
  if (m === null) return undefined
  const fence = m[2]!
  const info = m[3]!.trim()
  if (fence.startsWith("`") && info.includes("`")) return undefined
  return { indent: m[1]!.length, fence, info }
}

/** A table row's cells: outer pipes dropped, split on unescaped pipes, each trimmed with `\|` read as `|`. */
const splitRow = (line: string): ReadonlyArray<string> => {
  let row = line.trim()
  if (row.startsWith("|")) row = row.slice(1)
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1)
  const cells: Array<string> = []
  let current = ""
  for (let i = 0; i < row.length; i++) {
    const c = row[i]!
    if (c === "\\" && row[i + 1] === "|") {
      current += "|"
      i++
    } else if (c === "|") {
      cells.push(current.trim())
      current = ""
    } else current += c
  }
  cells.push(current.trim())
  return cells
}

const delimiterAligns = (line: string, columns: number): ReadonlyArray<TableAlign> | undefined => {
  if (indentOf(line) >= 4 || !line.includes("-")) return undefined
  const cells = splitRow(line)
  if (cells.length !== columns || !cells.every((cell) => /^:?-+:?$/.test(cell))) return undefined
  if (!line.includes("|") && columns === 1) return undefined // a lone `---` is a rule or a setext underline
  return cells.map((cell) =>
    cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : cell.startsWith(":") ? "left" : null
  )
}

/** Whether a table starts at line `i`: a header row with pipes and a matching delimiter row below it. */
const tableAt = (lines: ReadonlyArray<string>, i: number): ReadonlyArray<TableAlign> | undefined => {
  const header = lines[i]!
  const next = lines[i + 1]
  if (next === undefined || indentOf(header) >= 4 || !header.includes("|")) return undefined
  return delimiterAligns(next, splitRow(header).length)
}

type ListMarker = { readonly ordered: boolean; readonly marker: string; readonly number: number; readonly text: string }

const listMarker = (line: string): ListMarker | undefined => {
  if (RULE.test(line)) return undefined
  const bullet = BULLET.exec(line)
  if (bullet !== null) return { ordered: false, marker: bullet[2]!, number: 0, text: bullet[3] ?? "" }
  const ordered = ORDERED.exec(line)
  if (ordered !== null) return { ordered: true, marker: ordered[3]!, number: Number(ordered[2]), text: ordered[4] ?? "" }
  return undefined
}

/** Whether line `i` starts a block that ends a paragraph or a list item's continuation lines. */
const interrupts = (lines: ReadonlyArray<string>, i: number, inParagraph: boolean): boolean => {
  const line = lines[i]!
  if (ATX.test(line) || fenceOpen(line) !== undefined || RULE.test(line) || tableAt(lines, i) !== undefined) return true
  const item = listMarker(line)
  // As in CommonMark, a list interrupts a paragraph only with a non-empty item, and a numbered one only from 1.
  if (item === undefined) return false
  if (!inParagraph) return true
  return item.text.trim() !== "" && (!item.ordered || item.number === 1)
}

const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "") || "section"

export const parseMethodologyDocument = (markdown: string): MethodologyDocument => {
  const lines = markdown.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").split("\n").map(expandIndent)
  const blocks: Array<Block> = []
  const ids = new Set<string>()
  const heading = (level: HeadingLevel, text: string): Block => {
    const children = parseInlines(text)
    const base = slug(inlineText(children))
    let id = base
    for (let n = 2; ids.has(id); n++) id = `${base}-${n}`
    ids.add(id)
    return { t: "heading", level, id, children }
  }

  let i = 0
  while (i < lines.length) {
    const line = lines[i]!
    if (isBlank(line)) {
      i++
      continue
    }

    // Indented code: lines of 4+ columns, with the blank lines between them.
    if (indentOf(line) >= 4) {
      const body: Array<string> = []
      while (i < lines.length && (isBlank(lines[i]!) || indentOf(lines[i]!) >= 4)) body.push(lines[i++]!.slice(4))
      while (body.length > 0 && isBlank(body[body.length - 1]!)) body.pop()
      blocks.push({ t: "code", text: body.map((l) => l.trimEnd()).join("\n") })
      continue
    }

    const fence = fenceOpen(line)
    if (fence !== undefined) {
      const closing = new RegExp(`^ {0,3}${fence.fence[0] === "`" ? "`" : "~"}{${fence.fence.length},}[ \\t]*$`)
      const body: Array<string> = []
      i++
      while (i < lines.length && !closing.test(lines[i]!)) {
        const l = lines[i++]!
        body.push(l.slice(Math.min(fence.indent, indentOf(l))))
      }
      i++ // the closing fence (or the end of the text)
      blocks.push(fence.info === "" ? { t: "code", text: body.join("\n") } : { t: "code", text: body.join("\n"), language: fence.info })
      continue
    }

    const atx = ATX.exec(line)
    if (atx !== null) {
      blocks.push(heading(atx[1]!.length as HeadingLevel, (atx[2] ?? "").trim()))
      i++
      continue
    }

    if (RULE.test(line)) {
      blocks.push({ t: "rule" })
      i++
      continue
    }

    const align = tableAt(lines, i)
    if (align !== undefined) {
      const header = splitRow(line).map(parseInlines)
      const rows: Array<ReadonlyArray<ReadonlyArray<Inline>>> = []
      i += 2
      while (i < lines.length && !isBlank(lines[i]!) && lines[i]!.includes("|") && !interrupts(lines, i, false)) {
        const cells = splitRow(lines[i++]!).map(parseInlines)
        while (cells.length < header.length) cells.push([])
        rows.push(cells)
      }
      blocks.push(align.some((a) => a !== null) ? { t: "table", header, align, rows } : { t: "table", header, rows })
      continue
    }

    const first = listMarker(line)
    if (first !== undefined) {
      const items: Array<Array<string>> = []
      while (i < lines.length) {
        const current = lines[i]!
        if (isBlank(current)) {
          // A blank line ends the list unless the next item of the same list follows it.
          let k = i
          while (k < lines.length && isBlank(lines[k]!)) k++
          const next = k < lines.length ? listMarker(lines[k]!) : undefined
          if (next === undefined || next.ordered !== first.ordered || next.marker !== first.marker) break
          i = k
          continue
        }
        const item = listMarker(current)
        if (item !== undefined) {
          if (item.ordered !== first.ordered || item.marker !== first.marker) break
          items.push([item.text.trim()])
          i++
          continue
        }
        if (interrupts(lines, i, false)) break
        items[items.length - 1]!.push(current.trim()) // a continuation line of the item
        i++
      }
      const parsed = items.map((item) => parseInlines(item.filter((l) => l !== "").join(" ")))
      blocks.push(
        first.ordered && first.number !== 1
          ? { t: "list", ordered: true, start: first.number, items: parsed }
          : { t: "list", ordered: first.ordered, items: parsed }
      )
      continue
    }

    // A paragraph: everything else, up to a blank line or a block that interrupts it; a setext underline makes it a
    // heading.
    const text: Array<string> = [line.trim()]
    i++
    let setext: HeadingLevel | undefined
    while (i < lines.length && !isBlank(lines[i]!)) {
      const next = lines[i]!
      if (indentOf(next) < 4 && SETEXT_1.test(next)) {
        setext = 1
        i++
        break
      }
      if (indentOf(next) < 4 && SETEXT_2.test(next)) {
        setext = 2
        i++
        break
      }
      if (interrupts(lines, i, true)) break
      text.push(next.trim())
      i++
    }
    const joined = text.join(" ")
    blocks.push(setext === undefined ? { t: "paragraph", children: parseInlines(joined) } : heading(setext, joined))
  }

  const titleBlock = blocks.find((block) => block.t === "heading" && block.level === 1)
  return { title: titleBlock !== undefined && titleBlock.t === "heading" ? inlineText(titleBlock.children) : "", blocks }
}
