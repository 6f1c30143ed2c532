/**
 * uPlot, loaded on first use: it is a sixth of the pages' JavaScript and no figure at the top of a page waits for it.
 */
import type uPlot from "uplot"

export type UPlot = typeof uPlot

export const loadUplot = (): Promise<UPlot> => import("uplot").then((module) => module.default)

/**
 * Draws a chart once uPlot is loaded, unless the caller was disposed meanwhile; returns the disposer a
 * `useEffect` hands back.
 */
export const drawLater = (draw: (UPlot: UPlot) => () => void): (() => void) => {
  let disposed = false
  let dispose = () => undefined as void
  void loadUplot().then((UPlot) => {
    if (!disposed) dispose = draw(UPlot)
  })
  return () => {
    disposed = true
    dispose()
  }
}
