/**
 * A step chart drawn as inline SVG, so the server renders it (preact-render-to-string, no window, no canvas) and the
 * browser hydrates the same markup. 1 to 3 series share a time axis (UTC); each value holds until the next point (and,
 * with `until`, the last one holds until then). Marks are dashed vertical lines, each with an SVG <title>. Beside it,
 * always, the same data: a table a screen reader can read and a CSV to download. After hydration only, buttons narrow
 * the time axis to the last year, 90 or 30 days of the data (never the wall clock); the table and CSV keep every point.
 *
 * Deterministic: the same props give the same markup on the server and in the browser (coordinates rounded to 0.1).
 */
import { useEffect, useState } from "preact/hooks"
import type { JSX } from "preact"
import { csvHref, plainNumber, toCsv, utc, utcDate } from "./format.ts"

export interface StepPoint {
  /** ISO-8601 instant */
  readonly at: string
  readonly value: number
}

export interface ChartMark {
  readonly at: string
  readonly label: string
}

export interface ChartSeries {
  readonly label: string
  readonly points: ReadonlyArray<StepPoint>
  /** drawn dashed, so the lines differ by more than colour */
  readonly dashed?: boolean
}

const WIDTH = 640
const HEIGHT = 280
const TOP = 28
const RIGHT = 40
const BOTTOM = 40
const FONT = 13
const DAY = 86_400_000
const COLOURS = ["#1d4ed8", "#b45309", "#047857"] as const
const DASH = "7 4"

const ZOOMS = [
  { key: "all", label: "All", days: undefined },
  { key: "365", label: "1 year", days: 365 },
  { key: "90", label: "90 days", days: 90 },
  { key: "30", label: "30 days", days: 30 }
] as const
type ZoomKey = (typeof ZOOMS)[number]["key"]

/** A coordinate as SVG text: rounded to one decimal, no "-0". */
/** Min and max without spreading (a long history would overflow the argument list). */
const extent = (values: ReadonlyArray<number>): readonly [number, number] =>
  values.reduce<readonly [number, number]>(([lo, hi], v) => [Math.min(lo, v), Math.max(hi, v)], [Infinity, -Infinity])

const c = (n: number): string => {
  const r = Math.round(n * 10) / 10
  return String(r === 0 ? 0 : r)
}

/** 1, 2, 2.5 or 5 x 10^k ticks covering min..max: 4 to 6 of them. */
export const niceTicks = (min: number, max: number): ReadonlyArray<number> => {
  let lo = min
  let hi = max
  if (!(hi > lo)) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.05
    lo -= pad
    hi += pad
  }
  const raw = (hi - lo) / 4
  const magnitude = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 2.5, 5, 10].map((f) => f * magnitude).find((s) => s >= raw * (1 - 1e-9)) ?? 10 * magnitude
  const first = Math.floor(lo / step + 1e-9)
  const last = Math.ceil(hi / step - 1e-9)
  const ticks: Array<number> = []
  for (let i = first; i <= last; i++) ticks.push(Number((i * step).toPrecision(12)))
  return ticks
}

/** Whole UTC days, evenly spaced, inside start..end: at most 6 (one at `start` when no midnight falls inside). */
const dayTicks = (start: number, end: number): ReadonlyArray<number> => {
  const step = Math.max(1, Math.ceil((end - start) / DAY / 5)) * DAY
  const ticks: Array<number> = []
  for (let t = Math.ceil(start / DAY) * DAY; t <= end; t += step) ticks.push(t)
  return ticks.length > 0 ? ticks : [start]
}

interface Timed {
  readonly t: number
  readonly value: number
}

/** The series' points in time order (invalid instants dropped; equal instants keep the later one). */
const timed = (points: ReadonlyArray<StepPoint>): ReadonlyArray<Timed> => {
  const sorted = points
    .map((p, i) => ({ t: new Date(p.at).getTime(), value: p.value, i }))
    .filter((p) => Number.isFinite(p.t) && Number.isFinite(p.value))
    .sort((a, b) => a.t - b.t || a.i - b.i)
  return sorted.filter((p, i) => sorted[i + 1]?.t !== p.t).map((p) => ({ t: p.t, value: p.value }))
}

/** The steps of one series inside from..to: the value in force at `from`, the points inside, carried to `end`. */
const visibleSteps = (points: ReadonlyArray<Timed>, from: number, to: number, end: number): ReadonlyArray<Timed> => {
  const steps: Array<Timed> = []
  let before: Timed | undefined
  for (const p of points) {
    if (p.t <= from) before = p
    else if (p.t <= to) steps.push(p)
  }
  if (before !== undefined && end > from) steps.unshift({ t: from, value: before.value })
  const last = steps[steps.length - 1]
  const stop = Math.min(end, to)
  if (last !== undefined && stop > last.t) steps.push({ t: stop, value: last.value })
  return steps
}

export const SvgStepChart = (props: {
  readonly title: string
  readonly valueLabel: string
  readonly series: ReadonlyArray<ChartSeries>
  readonly marks?: ReadonlyArray<ChartMark>
  readonly until?: string
  readonly csvName: string
  readonly format?: (value: number) => string
  readonly zeroBased?: boolean
  readonly testId?: string
}): JSX.Element => {
  // Set only after hydration, so the server's markup and the browser's first render are the same.
  const [hydrated, setHydrated] = useState(false)
  const [zoom, setZoom] = useState<ZoomKey>("all")
  useEffect(() => setHydrated(true), [])

  const format = props.format ?? plainNumber
  const marks = props.marks ?? []
  const series = props.series.slice(0, COLOURS.length).map((s) => ({ ...s, timed: timed(s.points) }))

  // The table: one row per distinct instant, ascending; a cell per series, empty when it has no point then.
  const rowsByTime = new Map<number, { at: string; values: Array<number | undefined> }>()
  series.forEach((s, index) => {
    for (const p of s.points) {
      const t = new Date(p.at).getTime()
      if (!Number.isFinite(t)) continue
      const row = rowsByTime.get(t) ?? { at: p.at, values: series.map(() => undefined) }
      row.values[index] = p.value
      rowsByTime.set(t, row)
    }
  })
  const rows = [...rowsByTime.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row)
  const csv = toCsv(
    ["time_utc", ...series.map((s) => s.label)],
    rows.map((row) => [row.at, ...row.values.map((v) => (v === undefined ? null : plainNumber(v)))])
  )

  const captionParts = [`${rows.length} ${rows.length === 1 ? "point" : "points"}`, "times in UTC"]
  if (series.length >= 2) captionParts.push(series.map((s) => `${s.label} ${s.dashed === true ? "dashed" : "solid"}`).join(", "))
  if (marks.length > 0) captionParts.push(`dashed vertical lines mark ${marks.length === 1 ? "1 event" : `${marks.length} events`}, listed below the table`)
  const untilTime = props.until === undefined ? NaN : new Date(props.until).getTime()
  if (Number.isFinite(untilTime) && rows.length > 0) captionParts.push(`the last value is drawn on to ${utcDate(props.until!)}`)

  const figure = (chart: JSX.Element | null) => (
    <figure class="chart" data-testid={props.testId} aria-label={props.title}>
      {chart ?? <p class="empty">No points yet.</p>}
      <figcaption>
        {props.title} ({captionParts.join("; ")}).{" "}
        <a href={csvHref(csv)} download={props.csvName}>Download CSV</a>
      </figcaption>
      <details>
        <summary>The data as a table</summary>
        <div class="table-scroll" tabIndex={0}>
          <table class="data-table">
            <caption class="visually-hidden">{props.title}</caption>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                {series.map((s, i) => (
                  <th key={i} scope="col" class="num">{s.label}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.at}>
                  <td>{utc(row.at)}</td>
                  {row.values.map((v, i) => (
                    <td key={i} class="num">{v === undefined ? "" : format(v)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {marks.length > 0 && (
          <>
            <p class="chart-marks-head">Marked with dashed vertical lines:</p>
            <ul class="chart-marks">
              {marks.map((m, i) => (
                <li key={`${m.at}-${i}`}>{utc(m.at)}: {m.label}</li>
              ))}
            </ul>
          </>
        )}
      </details>
    </figure>
  )

  const all = series.flatMap((s) => s.timed)
  if (all.length === 0) return figure(null)

  // The x domain: from the first point to the end of the data (the last point, or `until` when later).
  const [dataStart, lastPoint] = extent(all.map((p) => p.t))
  const dataEnd = Number.isFinite(untilTime) ? Math.max(untilTime, lastPoint) : lastPoint
  const days = ZOOMS.find((z) => z.key === zoom)?.days
  const from = days === undefined ? dataStart : Math.max(dataStart, dataEnd - days * DAY)
  const to = dataEnd > from ? dataEnd : from + DAY

  const seriesEnd = (s: (typeof series)[number]) => {
    const last = s.timed[s.timed.length - 1]?.t ?? -Infinity
    return Number.isFinite(untilTime) ? Math.max(untilTime, last) : last
  }
  const steps = series.map((s) => visibleSteps(s.timed, from, to, seriesEnd(s)))

  // The y domain: 0 (or below) .. max for prices, min..max of what is in view otherwise.
  const values = steps.flat().map((p) => p.value)
  const inView = values.length > 0 ? values : all.map((p) => p.value)
  const [low, high] = extent(inView)
  const min = props.zeroBased === true ? Math.min(0, low) : low
  const max = props.zeroBased === true && high <= 0 && min === 0 ? 1 : high
  const yTicks = niceTicks(min, max)
  const yLo = yTicks[0]!
  const yHi = yTicks[yTicks.length - 1]!
  const yLabels = yTicks.map((v) => format(v))

  const left = Math.min(140, Math.max(44, 12 + Math.max(...yLabels.map((l) => l.length)) * FONT * 0.6))
  const right = WIDTH - RIGHT
  const bottom = HEIGHT - BOTTOM
  const x = (t: number) => left + ((t - from) / (to - from)) * (right - left)
  const y = (v: number) => bottom - ((v - yLo) / (yHi - yLo)) * (bottom - TOP)

  const path = (ps: ReadonlyArray<Timed>): string => {
    const first = ps[0]
    if (first === undefined) return ""
    let d = `M${c(x(first.t))} ${c(y(first.value))}`
    let level = c(y(first.value))
    for (const p of ps.slice(1)) {
      const next = c(y(p.value))
      d += `H${c(x(p.t))}${next === level ? "" : `V${next}`}`
      level = next
    }
    return d
  }
  const shownMarks = marks.filter((m) => {
    const t = new Date(m.at).getTime()
    return t >= from && t <= to
  })
  const markPath = shownMarks.map((m) => `M${c(x(new Date(m.at).getTime()))} ${c(TOP)}V${c(bottom)}`).join("")
  const dots = series.map((s) => s.timed.filter((p) => p.t >= from && p.t <= to))
  const showDots = dots.reduce((n, d) => n + d.length, 0) <= 120

  const svg = (
    <svg
      class="svg-chart"
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      width="100%"
      role="img"
      aria-label={`${props.title}: a step chart; the table below holds the same data`}
      font-size={FONT}
    >
      <title>{props.title}</title>
      <text x="4" y={FONT + 2} class="svg-chart-note">{props.valueLabel}</text>
      <g class="svg-chart-y" aria-hidden="true">
        {yTicks.map((v, i) => (
          <g key={i}>
            <line x1={c(left)} x2={c(right)} y1={c(y(v))} y2={c(y(v))} stroke={v === 0 ? "#6b7280" : "#e5e7eb"} />
            <text x={c(left - 6)} y={c(y(v) + FONT * 0.35)} text-anchor="end">{yLabels[i]}</text>
          </g>
        ))}
      </g>
      <g class="svg-chart-x" aria-hidden="true">
        <line x1={c(left)} x2={c(right)} y1={c(bottom)} y2={c(bottom)} stroke="#6b7280" />
        {dayTicks(from, to).map((t) => (
          <g key={t}>
            <line x1={c(x(t))} x2={c(x(t))} y1={c(bottom)} y2={c(bottom + 5)} stroke="#6b7280" />
            <text x={c(x(t))} y={c(bottom + 18)} text-anchor="middle">{utcDate(new Date(t).toISOString())}</text>
          </g>
        ))}
        <text x={c((left + right) / 2)} y={HEIGHT - 4} text-anchor="middle" class="svg-chart-note">time (UTC)</text>
      </g>
      {markPath !== "" && (
        // One path for every mark: a line (and a title) per mark was four elements each, a hundred marks on `/` the
        // bulk of its first paint. Each mark's label and date are in the list under the table. Light and thin, so that a
        // hundred marks do not hide the series.
        <path class="svg-chart-marks" d={markPath} stroke="#cbd5e1" stroke-width="1" stroke-dasharray="4 4" fill="none">
          <title>{shownMarks.length === 1 ? `${shownMarks[0]!.label} (${utc(shownMarks[0]!.at)})` : `${shownMarks.length} events, listed under the table`}</title>
        </path>
      )}
      {series.map((s, i) => (
        <g key={i} class="svg-chart-series">
          <path
            d={path(steps[i]!)}
            fill="none"
            stroke={COLOURS[i]}
            stroke-width="2"
            stroke-linejoin="miter"
            stroke-dasharray={s.dashed === true ? DASH : undefined}
            data-series={s.label}
          />
          {showDots &&
            dots[i]!.map((p) => <circle key={p.t} cx={c(x(p.t))} cy={c(y(p.value))} r="2.5" fill={COLOURS[i]} />)}
        </g>
      ))}
    </svg>
  )

  return figure(
    <>
      {svg}
      {hydrated && (
        <div class="chart-zoom" role="group" aria-label="Zoom">
          {ZOOMS.map((z) => (
            <button key={z.key} type="button" aria-pressed={zoom === z.key ? "true" : "false"} onClick={() => setZoom(z.key)}>
              {z.label}
            </button>
          ))}
        </div>
      )}
      {series.length >= 2 && (
        <ul class="chart-legend">
          {series.map((s, i) => (
            <li key={i}>
              <svg width="28" height="10" viewBox="0 0 28 10" aria-hidden="true">
                <line x1="0" x2="28" y1="5" y2="5" stroke={COLOURS[i]} stroke-width="2" stroke-dasharray={s.dashed === true ? DASH : undefined} />
              </svg>{" "}
              {s.label}
              {s.dashed === true ? " (dashed)" : ""}
            </li>
          ))}
        </ul>
      )}
    </>
  )
}
