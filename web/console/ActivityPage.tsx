/**
 * Activity: spend per UTC day over a window, split by model, key or member, as the server sums it
 * (`GET /v1/account/activity`). A chart (one line per group) with its table beside it and a CSV of the same figures;
 * money is exact from the wei digit strings (the chart alone plots approximate numbers).
 */
import { useSignal } from "@preact/signals"
import { useEffect, useRef } from "preact/hooks"
import "uplot/dist/uPlot.min.css"
import type { ActivityView } from "../../src/api/GenerationsApi.ts"
import { csvHref, formatScaled, toCsv } from "../shared/format.ts"
import { drawLater } from "../shared/uplot.ts"
import { Status, useRead } from "../shared/useRead.tsx"
import { call } from "./api.ts"
import { credits } from "./format.ts"
import "./logs.css"

type Activity = typeof ActivityView.Type
type Split = Activity["by"]

const WINDOWS = [7, 14, 30, 92] as const
const SPLITS: ReadonlyArray<{ readonly value: Split; readonly label: string }> = [
  { value: "model", label: "Model" },
  { value: "key", label: "Key" },
  { value: "member", label: "Member" }
]
const COLORS = ["#1d4ed8", "#b45309", "#047857", "#be123c", "#6d28d9", "#0e7490", "#4d7c0f", "#9d174d"]
/** Groups drawn and given a column; the rest are summed as "other" (the CSV keeps every group). */
const SHOWN = 6

const nameOf = (group: { readonly group: string | null; readonly label: string | null }, by: Split) =>
  group.group === null ? "no key" : by === "model" || group.label === null ? group.group : `${group.label} (${group.group})`

/** Exact credits with every decimal, for the CSV. */
const creditTick = (value: number) => (value === 0 ? "0" : value.toLocaleString("en-US", { maximumSignificantDigits: 3 }))

const exact = (wei: string) => formatScaled(wei, 18).replace(/,/g, "")

const Chart = (props: { readonly activity: Activity }) => {
  const host = useRef<HTMLDivElement>(null)
  const { activity } = props
  useEffect(() => {
    const element = host.current
    if (element === null || activity.days.length === 0) return
    return drawLater((UPlot) => {
      const xs = activity.days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000)
      const groups = activity.groups.slice(0, SHOWN)
      // Plotted values only: the chart's scale needs numbers; every figure shown as text is exact.
      const ys = groups.map((g) =>
        activity.days.map((d) => {
          const cell = activity.series.find((s) => s.day === d.day && s.group === g.group)
          return cell === undefined ? 0 : Number(formatScaled(cell.chargeWei, 18, 9).replace(/,/g, ""))
        })
      )
      const width = () => Math.max(260, element.clientWidth)
      const chart = new UPlot(
        {
          width: width(),
          height: 300,
          tzDate: (ts) => UPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
          scales: { x: { time: true } },
          // uPlot's default ticks keep 3 decimals, which reads a day of small requests as 0: 3 significant digits do not.
          axes: [{ label: "UTC day" }, { label: "credits", size: 80, values: (_chart, ticks) => ticks.map(creditTick) }],
          series: [{ label: "UTC day" }, ...groups.map((g, i) => ({ label: nameOf(g, activity.by), stroke: COLORS[i % COLORS.length]!, width: 2, points: { show: true } }))],
          legend: { show: true }
        },
        [xs, ...ys],
        element
      )
      const resize = () => chart.setSize({ width: width(), height: 300 })
      window.addEventListener("resize", resize)
      return () => {
        window.removeEventListener("resize", resize)
        chart.destroy()
      }
    })
  }, [activity])
  return <div ref={host} class="activity-chart" role="img" aria-label="Spend per UTC day, one line per group; the table beside it holds the same figures" />
}

export const ActivityPage = () => {
  const days = useSignal<number>(30)
  const by = useSignal<Split>("model")
  const activity = useRead(() => call((c) => c.activity.activity({ urlParams: { days: days.value, by: by.value } })), [days.value, by.value])

  return (
    <section aria-labelledby="activity">
      <h1 id="activity">Activity</h1>
      <form class="filters" aria-label="Window and split" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for="a-window">Window</label>
          <select id="a-window" value={String(days.value)} onChange={(e) => (days.value = Number((e.target as HTMLSelectElement).value))}>
            {WINDOWS.map((n) => <option key={n} value={String(n)}>Last {n} UTC days</option>)}
          </select>
        </div>
        <div>
          <label for="a-split">Split by</label>
          <select id="a-split" value={by.value} onChange={(e) => (by.value = (e.target as HTMLSelectElement).value as Split)}>
            {SPLITS.map((s) => <option key={s.value} value={s.value}>{s.label}</option>)}
          </select>
        </div>
      </form>
      <Status of={activity} what="the activity" />
      {activity.state === "ready" && <ActivityFigures activity={activity.value} />}
    </section>
  )
}

const ActivityFigures = (props: { readonly activity: Activity }) => {
  const a = props.activity
  const total = a.days.reduce((acc, d) => acc + BigInt(d.chargeWei), 0n)
  const requests = a.days.reduce((acc, d) => acc + d.requests, 0)
  if (requests === 0) {
    return (
      <p class="empty">
        No requests in these {a.days.length} UTC days: <a href="console/keys">create a key</a> and send one, or use the{" "}
        <a href="console/playground">playground</a>.
      </p>
    )
  }
  const shown = a.groups.slice(0, SHOWN)
  const others = a.groups.length > SHOWN
  const cell = (day: string, group: string | null) => a.series.find((s) => s.day === day && s.group === group)?.chargeWei ?? "0"
  const otherOf = (day: string) =>
    a.series.filter((s) => s.day === day && !shown.some((g) => g.group === s.group)).reduce((acc, s) => acc + BigInt(s.chargeWei), 0n).toString()
  const csv = toCsv(
    ["day_utc", a.by, "label", "requests", "credits", "charge_wei", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"],
    a.series.map((s) => {
      const group = a.groups.find((g) => g.group === s.group)
      return [s.day, s.group, group?.label ?? null, s.requests, exact(s.chargeWei), s.chargeWei, s.inputTokens, s.outputTokens, s.cacheReadTokens, s.cacheWriteTokens, s.reasoningTokens]
    })
  )
  return (
    <>
      <p>
        <strong data-testid="activity-total">{credits(total.toString())}</strong> credits over {requests.toLocaleString("en-US")} requests, {a.days[0]!.day} to{" "}
        {a.days.at(-1)!.day} (UTC days).
      </p>
      <div class="activity-layout">
        <figure class="chart">
          <Chart activity={a} />
          <figcaption>
            Spend per UTC day by {a.by}{others ? ` (the ${SHOWN} biggest; the table sums the rest as “other”)` : ""}.{" "}
            <a href={csvHref(csv)} download={`activity-${a.by}-${a.days[0]!.day}-${a.days.at(-1)!.day}.csv`}>Download CSV</a>
          </figcaption>
        </figure>
        <div class="table-scroll">
          <table data-testid="activity-groups">
            <caption>Totals by {a.by}</caption>
            <thead>
              <tr><th scope="col">{a.by === "model" ? "Model" : a.by === "key" ? "Key" : "Member"}</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Tokens in / out</th><th scope="col" class="num">Credits</th></tr>
            </thead>
            <tbody>
              {a.groups.map((g, i) => (
                <tr key={g.group ?? ""} data-group={g.group ?? ""}>
                  <th scope="row">{i < SHOWN && <span class="legend-swatch" style={{ background: COLORS[i % COLORS.length] }} aria-hidden="true" />}{nameOf(g, a.by)}</th>
                  <td class="num">{g.requests.toLocaleString("en-US")}</td>
                  <td class="num">{g.inputTokens.toLocaleString("en-US")} / {g.outputTokens.toLocaleString("en-US")}</td>
                  <td class="num">{credits(g.chargeWei)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
      <div class="table-scroll">
        <table data-testid="activity-days">
          <caption>Per UTC day</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col" class="num">Requests</th>
              <th scope="col" class="num">Input tokens</th>
              <th scope="col" class="num">Output tokens</th>
              {shown.map((g) => <th key={g.group ?? ""} scope="col" class="num">{nameOf(g, a.by)}</th>)}
              {others && <th scope="col" class="num">other</th>}
              <th scope="col" class="num">Total, credits</th>
            </tr>
          </thead>
          <tbody>
            {[...a.days].reverse().map((d) => (
              <tr key={d.day} data-day={d.day}>
                <th scope="row">{d.day}</th>
                <td class="num">{d.requests}</td>
                <td class="num">{d.inputTokens.toLocaleString("en-US")}</td>
                <td class="num">{d.outputTokens.toLocaleString("en-US")}</td>
                {shown.map((g) => <td key={g.group ?? ""} class="num" data-group={g.group ?? ""}>{credits(cell(d.day, g.group))}</td>)}
                {others && <td class="num">{credits(otherOf(d.day))}</td>}
                <td class="num" data-testid="day-total">{credits(d.chargeWei)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  )
}
