/**
 * A model's list price over time: input and output as two step series on one uPlot chart (output dashed, so the
 * lines differ by more than colour), with the same data beside it as a table and a CSV. Times are UTC.
 */
import { useEffect, useRef } from "preact/hooks"
import "uplot/dist/uPlot.min.css"
import { drawLater } from "../../shared/uplot.ts"
import type { PriceHistoryResponse } from "../../../domain/oracle/schemas.ts"
import { csvHref, plainNumber, toCsv, utc } from "../../shared/format.ts"

export type PricePoint = PriceHistoryResponse["data"][number]

const HEIGHT = 260

const sourceText = (p: PricePoint) => (p.source === "manifest" ? `manifest of revision #${p.revisionVersion ?? "?"}` : "catalog")

/**
 * `until`: the end of the range asked for (now): the last price holds until then, so the chart carries it to there
 * (the table lists only the published points).
 */
export const PriceHistoryChart = (props: { readonly modelKey: string; readonly points: ReadonlyArray<PricePoint>; readonly until?: string }) => {
  const host = useRef<HTMLDivElement>(null)
  const title = `${props.modelKey}: list price per million tokens, USD`
  useEffect(() => {
    const element = host.current
    if (element === null || props.points.length === 0) return
    const last = props.points[props.points.length - 1]!
    const end = props.until === undefined ? undefined : new Date(props.until).getTime()
    const carried = end !== undefined && end > new Date(last.date).getTime() ? [{ ...last, date: new Date(end).toISOString() }] : []
    const series = [...props.points, ...carried]
    const xs = series.map((p) => new Date(p.date).getTime() / 1000)
    return drawLater((UPlot) => {
      const width = () => Math.max(240, element.clientWidth)
      const stepped = UPlot.paths.stepped!({ align: 1 })
      const chart = new UPlot(
        {
          width: width(),
          height: HEIGHT,
          tzDate: (ts) => UPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
          scales: { x: { time: true }, y: { range: (_u, min, max) => [0, max > 0 ? max * 1.1 : Math.max(1, min)] } },
          axes: [{ label: "UTC" }, { label: "USD per million tokens", size: 60 }],
          series: [
            { label: "UTC" },
            { label: "input", stroke: "#1d4ed8", width: 2, paths: stepped, value: (_u, v) => (v === null ? "–" : plainNumber(v)) },
            { label: "output (dashed)", stroke: "#b45309", width: 2, dash: [6, 4], paths: stepped, value: (_u, v) => (v === null ? "–" : plainNumber(v)) }
          ],
          legend: { show: true }
        },
        [xs, series.map((p) => p.inputPriceUsdPerMillion), series.map((p) => p.outputPriceUsdPerMillion)],
        element
      )
      const resize = () => chart.setSize({ width: width(), height: HEIGHT })
      window.addEventListener("resize", resize)
      return () => {
        window.removeEventListener("resize", resize)
        chart.destroy()
      }
    })
  }, [props.points, props.until])

  const csv = toCsv(
    ["time_utc", "input_usd_per_million", "output_usd_per_million", "source", "revision"],
    props.points.map((p) => [p.date, plainNumber(p.inputPriceUsdPerMillion), plainNumber(p.outputPriceUsdPerMillion), p.source, p.revisionVersion])
  )
  return (
    <figure class="chart" aria-label={title}>
      {props.points.length === 0 ? (
        <p class="empty">No price points in this model's history.</p>
      ) : (
        <div ref={host} class="chart-canvas" role="img" aria-label={`${title}: a step chart of the input (solid) and output (dashed) price; the table below holds the same data`} />
      )}
      <figcaption>
        {title} ({props.points.length} points, times in UTC; input solid, output dashed; the last price is drawn on to the present).{" "}
        <a href={csvHref(csv)} download={`${props.modelKey.replace(/[^A-Za-z0-9.-]+/g, "_")}-price-history.csv`}>Download CSV</a>
      </figcaption>
      <details>
        <summary>The data as a table</summary>
        <div class="table-scroll models-scroll">
          <table data-testid="price-history-table">
            <caption class="visually-hidden">{title}, per revision</caption>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                <th scope="col" class="num">Input, USD/M</th>
                <th scope="col" class="num">Output, USD/M</th>
                <th scope="col">Source</th>
              </tr>
            </thead>
            <tbody>
              {props.points.map((p, i) => (
                <tr key={`${p.date}-${i}`}>
                  <td>{utc(p.date)}</td>
                  <td class="num">{plainNumber(p.inputPriceUsdPerMillion)}</td>
                  <td class="num">{plainNumber(p.outputPriceUsdPerMillion)}</td>
                  <td>{sourceText(p)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}
