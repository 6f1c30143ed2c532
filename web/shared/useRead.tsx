/**
 * One API read per page section, with the three states a visitor must be able to tell apart: loading, failed (and
 * why), and loaded.
 */
import { useSignal } from "@preact/signals"
import { useEffect } from "preact/hooks"

export type Loaded<A> = { readonly state: "loading" } | { readonly state: "failed"; readonly message: string } | { readonly state: "ready"; readonly value: A }

export const useRead = <A,>(read: () => Promise<A>, deps: ReadonlyArray<unknown> = []): Loaded<A> => {
  const result = useSignal<Loaded<A>>({ state: "loading" })
  useEffect(() => {
    let current = true
    result.value = { state: "loading" }
    read().then(
      (value) => void (current && (result.value = { state: "ready", value })),
      (error: unknown) => void (current && (result.value = { state: "failed", message: error instanceof Error ? error.message : String(error) }))
    )
    return () => void (current = false)
  }, deps)
  return result.value
}

/** Renders a read: its failure says what failed; while it loads, a line says so (announced politely). */
export const Status = (props: { readonly of: Loaded<unknown>; readonly what: string }) =>
  props.of.state === "loading" ? (
    <p class="loading" role="status">Loading {props.what}…</p>
  ) : props.of.state === "failed" ? (
    <p class="error" role="alert">Could not load {props.what}: {props.of.message}</p>
  ) : null
