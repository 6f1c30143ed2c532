/**
 * A step chart (uPlot) of one series over time, with vertical marks (the index's reconstitutions), and always its
 * data beside it: a table a screen reader can read and a CSV to download. Times are UTC.
 */
import { useEffect, useRef } from "preact/hooks"
import type uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import { drawLater } from "./uplot.ts"
import { csvHref, toCsv, utc } from "./format.ts"

export interface StepPoint {
  /** ISO-8601 instant */
  readonly at: string
  readonly value: number
}

export interface Mark {
  readonly at: string
  readonly label: string
}

const marksPlugin = (marks: ReadonlyArray<Mark>): uPlot.Plugin => ({
  hooks: {
    draw: (u) => {
      const ctx = u.ctx
      ctx.save()
      ctx.strokeStyle = "#b45309"
      ctx.setLineDash([4, 4])
      ctx.lineWidth = 1
      for (const mark of marks) {
        const x = Math.round(u.valToPos(new Date(mark.at).getTime() / 1000, "x", true))
        if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue
        ctx.beginPath()
        ctx.moveTo(x, u.bbox.top)
        ctx.lineTo(x, u.bbox.top + u.bbox.height)
        ctx.stroke()
      }
      ctx.restore()
    }
  }
})

export const StepChart = (props: {
  readonly title: string
  readonly valueLabel: string
  readonly points: ReadonlyArray<StepPoint>
  readonly marks?: ReadonlyArray<Mark>
  readonly csvName: string
  readonly format?: (value: number) => string
}) => {
  const host = useRef<HTMLDivElement>(null)
  const format = props.format ?? ((value: number) => String(value))
  useEffect(() => {
    const element = host.current
    if (element === null || props.points.length === 0) return
    return drawLater((UPlot) => {
      const xs = props.points.map((p) => new Date(p.at).getTime() / 1000)
      const ys = props.points.map((p) => p.value)
      const width = () => Math.max(280, element.clientWidth)
      const chart = new UPlot(
        {
          width: width(),
          height: 280,
          tzDate: (ts) => UPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
          scales: { x: { time: true } },
          axes: [{ label: "UTC" }, { label: props.valueLabel, size: 60 }],
          series: [{ label: "UTC" }, { label: props.valueLabel, stroke: "#1d4ed8", width: 2, paths: UPlot.paths.stepped!({ align: 1 }) }],
          legend: { show: true },
          plugins: [marksPlugin(props.marks ?? [])]
        },
        [xs, ys],
        element
      )
      const resize = () => chart.setSize({ width: width(), height: 280 })
      window.addEventListener("resize", resize)
      return () => {
        window.removeEventListener("resize", resize)
        chart.destroy()
      }
    })
  }, [props.points, props.marks])

  const csv = toCsv(["time_utc", props.valueLabel], props.points.map((p) => [p.at, p.value]))
  return (
    <figure class="chart" aria-label={props.title}>
      {props.points.length === 0 ? <p class="empty">No points yet.</p> : <div ref={host} class="chart-canvas" role="img" aria-label={`${props.title}: a step chart; the table below holds the same data`} />}
      <figcaption>
        {props.title} ({props.points.length} points, times in UTC{props.marks !== undefined && props.marks.length > 0 ? "; dashed lines mark reconstitutions" : ""}).{" "}
        <a href={csvHref(csv)} download={props.csvName}>Download CSV</a>
      </figcaption>
      <details>
        <summary>The data as a table</summary>
        <div class="table-scroll">
          <table class="data-table">
            <caption class="visually-hidden">{props.title}</caption>
            <thead>
              <tr><th scope="col">Time (UTC)</th><th scope="col">{props.valueLabel}</th></tr>
            </thead>
            <tbody>
              {props.points.map((p) => (
                <tr key={p.at}><td>{utc(p.at)}</td><td class="num">{format(p.value)}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}
