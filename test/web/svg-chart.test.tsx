/**
 * The public pages' step chart as server-rendered SVG (web/shared/SvgChart.tsx): deterministic markup, steps drawn
 * horizontal then vertical, marks titled, the table beside it, `until` carrying the last value without a table row.
 */
import { describe, expect, it } from "vitest"
import { render } from "preact-render-to-string"
import { type ChartSeries, SvgStepChart } from "../../web/shared/SvgChart.tsx"

type Props = Parameters<typeof SvgStepChart>[0]

const html = (props: Props): string => render(<SvgStepChart {...props} />)

const three: ChartSeries = {
  label: "compute index",
  points: [
    { at: "2026-01-01T00:00:00.000Z", value: 100 },
    { at: "2026-01-11T00:00:00.000Z", value: 104.5 },
    { at: "2026-01-21T00:00:00.000Z", value: 98.25 }
  ]
}

const base: Props = { title: "Compute index, daily", valueLabel: "compute index", series: [three], csvName: "index.csv" }

/** The `d` of each series' path. */
const paths = (markup: string): ReadonlyArray<string> => [...markup.matchAll(/<path d="([^"]*)"/g)].map((m) => m[1]!)

/** A path as [command, numbers] pairs. */
const commands = (d: string): ReadonlyArray<readonly [string, ReadonlyArray<number>]> =>
  [...d.matchAll(/([MHVL])([^MHVL]*)/g)].map((m) => [m[1]!, m[2]!.trim().split(/[\s,]+/).map(Number)] as const)

const bodyRows = (markup: string): ReadonlyArray<string> => {
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(markup)?.[1] ?? ""
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!)
}
const cells = (row: string): ReadonlyArray<string> => [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!)

describe("SvgStepChart", () => {
  it("renders the same markup every time, with no window or document", () => {
    const props: Props = { ...base, marks: [{ at: "2026-01-11T00:00:00.000Z", label: "reconstitution 2" }], until: "2026-02-01T00:00:00.000Z" }
    const first = html(props)
    expect(html(props)).toBe(first)
    expect(first).toContain('role="img"')
    expect(first).toContain('aria-label="Compute index, daily: a step chart; the table below holds the same data"')
    expect(first).toContain("<title>Compute index, daily</title>")
    expect(first).toContain('viewBox="0 0 640 280"')
    // The zoom buttons appear only after hydration.
    expect(first).not.toContain("chart-zoom")
    // Coordinates have at most one decimal.
    for (const d of paths(first)) for (const [, numbers] of commands(d)) for (const n of numbers) expect(Math.round(n * 10) / 10).toBe(n)
  })

  it("draws a series of 3 points as steps: horizontal, then vertical", () => {
    const [d] = paths(html(base))
    const parts = commands(d!)
    expect(parts.map(([command]) => command).join("")).toBe("MHVHV")
    const [, [x0, y0]] = parts[0]! as readonly [string, ReadonlyArray<number>]
    const [, [x1]] = parts[1]!
    const [, [y1]] = parts[2]!
    const [, [x2]] = parts[3]!
    const [, [y2]] = parts[4]!
    expect(x1!).toBeGreaterThan(x0!)
    expect(x2!).toBeGreaterThan(x1!)
    // 104.5 is above 100 (smaller y), 98.25 below both.
    expect(y1!).toBeLessThan(y0!)
    expect(y2!).toBeGreaterThan(y0!)
  })

  it("titles a lone mark with its label and UTC date", () => {
    const markup = html({ ...base, marks: [{ at: "2026-01-11T00:00:00.000Z", label: "reconstitution 2" }] })
    expect(markup).toMatch(/<title>reconstitution 2 \(2026-01-11 00:00 UTC\)<\/title>/)
    expect(markup).toContain('stroke-dasharray="4 4"')
    expect(markup).toContain("dashed vertical lines mark 1 event")
  })

  it("draws every mark in one dashed path, a vertical segment each, and lists each with its date under the table", () => {
    const marks = [
      { at: "2026-01-05T00:00:00.000Z", label: "reconstitution 2" },
      { at: "2026-01-11T00:00:00.000Z", label: "reconstitution 3" },
      // Outside the data's time span: listed, not drawn.
      { at: "2025-06-01T00:00:00.000Z", label: "before the data" }
    ]
    const markup = html({ ...base, marks })
    const paths = [...markup.matchAll(/<path class="svg-chart-marks" d="([^"]*)"/g)].map((m) => m[1]!)
    expect(paths).toHaveLength(1)
    expect(paths[0]!.match(/M[\d.]+ [\d.]+V[\d.]+/g)).toHaveLength(2)
    expect(markup).toContain("<title>2 events, listed under the table</title>")
    expect(markup).toContain("<li>2026-01-05 00:00 UTC: reconstitution 2</li>")
    expect(markup).toContain("<li>2026-01-11 00:00 UTC: reconstitution 3</li>")
    expect(markup).toContain("<li>2025-06-01 00:00 UTC: before the data</li>")
  })

  it("tables one row per distinct time with formatted cells, and a CSV of the raw values", () => {
    const output: ChartSeries = {
      label: "output",
      dashed: true,
      points: [
        { at: "2026-01-01T00:00:00.000Z", value: 2 },
        { at: "2026-01-15T00:00:00.000Z", value: 3 }
      ]
    }
    const format = (v: number) => `$${v.toFixed(2)}`
    const markup = html({ ...base, series: [three, output], format, zeroBased: true, testId: "chart" })
    const rows = bodyRows(markup)
    expect(rows).toHaveLength(4)
    expect(rows.map(cells)).toEqual([
      ["2026-01-01 00:00 UTC", "$100.00", "$2.00"],
      ["2026-01-11 00:00 UTC", "$104.50", ""],
      ["2026-01-15 00:00 UTC", "", "$3.00"],
      ["2026-01-21 00:00 UTC", "$98.25", ""]
    ])
    expect(markup).toContain('data-testid="chart"')
    expect(markup).toContain('stroke-dasharray="7 4"')
    expect(markup).toContain('class="chart-legend"')
    // The y axis starts at 0 for a zero-based chart, labelled through `format`.
    expect(markup).toContain(">$0.00</text>")
    const href = /href="data:text\/csv;charset=utf-8,([^"]*)"/.exec(markup)?.[1]
    expect(decodeURIComponent(href!)).toBe(
      "time_utc,compute index,output\r\n" +
        "2026-01-01T00:00:00.000Z,100,2\r\n" +
        "2026-01-11T00:00:00.000Z,104.5,\r\n" +
        "2026-01-15T00:00:00.000Z,,3\r\n" +
        "2026-01-21T00:00:00.000Z,98.25,\r\n"
    )
  })

  it("shows no svg when there are no points", () => {
    const markup = html({ ...base, series: [{ label: "compute index", points: [] }], testId: "empty" })
    expect(markup).toContain('<p class="empty">No points yet.</p>')
    expect(markup).not.toContain("<svg")
    expect(markup).toContain('data-testid="empty"')
  })

  it("carries the last value to `until`, the plot's right edge, without a table row", () => {
    const without = html(base)
    const markup = html({ ...base, until: "2026-02-10T00:00:00.000Z" })
    expect(bodyRows(markup)).toHaveLength(3)
    const [d] = paths(markup)
    const parts = commands(d!)
    expect(parts.map(([command]) => command).join("")).toBe("MHVHVH")
    const lastX = parts[parts.length - 1]![1][0]
    // The plot's right edge: the end of the x axis line.
    const axis = /<g class="svg-chart-x"[^>]*><line x1="[^"]*" x2="([^"]*)"/.exec(markup)
    expect(lastX).toBe(Number(axis![1]))
    // Without `until` the line stops at the last point, which is then also the right edge.
    const plain = commands(paths(without)[0]!)
    expect(plain.map(([command]) => command).join("")).toBe("MHVHV")
  })
})
