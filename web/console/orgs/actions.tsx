/**
 * What every action of the organization pages shares: one action at a time, its refusal (the API's own message)
 * shown beside the control that made it, a confirmation for the ones that cannot be undone, and amounts typed in
 * credits turned into exact wei.
 */
import { useSignal } from "@preact/signals"
import type { ComponentChildren } from "preact"
import { parseScaled } from "../../shared/format.ts"

export interface Actions {
  /** Runs `action` as `where`; on failure its message shows at `where`, and the promise resolves false. */
  readonly run: (where: string, action: () => Promise<unknown>) => Promise<boolean>
  readonly busy: boolean
  readonly errorAt: (where: string) => string | null
}

export const useActions = (): Actions => {
  const busy = useSignal(false)
  const error = useSignal<{ readonly where: string; readonly message: string } | null>(null)
  return {
    run: async (where, action) => {
      busy.value = true
      error.value = null
      try {
        await action()
        return true
      } catch (failure) {
        error.value = { where, message: failure instanceof Error ? failure.message : String(failure) }
        return false
      } finally {
        busy.value = false
      }
    },
    busy: busy.value,
    errorAt: (where) => (error.value?.where === where ? error.value.message : null)
  }
}

/** The refusal of the action made at `where`, announced as an alert. */
export const ActionError = (props: { readonly of: Actions; readonly at: string }) => {
  const message = props.of.errorAt(props.at)
  return message === null ? null : <p class="error" role="alert">{message}</p>
}

/**
 * A button that first asks: the question says what will happen (and what cannot be undone), then a second button
 * does it. Inline rather than `window.confirm`, so it reads and tabs like the rest of the page.
 */
export const Confirm = (props: {
  readonly label: string
  readonly question: ComponentChildren
  readonly confirm: string
  readonly disabled?: boolean
  readonly onConfirm: () => unknown
}) => {
  const open = useSignal(false)
  return open.value ? (
    <div class="confirm" role="group" aria-label={props.label}>
      <p>{props.question}</p>
      <button type="button" class="danger" disabled={props.disabled} onClick={() => { open.value = false; void props.onConfirm() }}>{props.confirm}</button>{" "}
      <button type="button" class="link" onClick={() => (open.value = false)}>Cancel</button>
    </div>
  ) : (
    <button type="button" disabled={props.disabled} onClick={() => (open.value = true)}>{props.label}</button>
  )
}

const DECIMAL = /^[0-9]+(\.[0-9]{1,18})?$/

/** Credits typed by a person ("25", "0.5") as exact wei; a malformed amount throws a sentence naming the field. */
export const creditsToWei = (field: string, text: string): bigint => {
  if (!DECIMAL.test(text.trim())) throw new Error(`${field}: a number of credits like 25 or 0.5 (at most 18 decimals).`)
  return parseScaled(text.trim())
}

/** An optional cap: empty is no cap (null). */
export const capToWei = (field: string, text: string): bigint | null => (text.trim() === "" ? null : creditsToWei(field, text))

/** An input bound to a signal-like value, with its label (every input has one). */
export const Field = (props: {
  readonly id: string
  readonly label: string
  readonly value: string
  readonly onInput: (value: string) => void
  readonly type?: "text" | "email"
  readonly required?: boolean
  readonly decimal?: boolean
  readonly placeholder?: string
}) => {
  const attributes = {
    id: props.id,
    required: props.required,
    inputMode: props.decimal === true ? ("decimal" as const) : undefined,
    placeholder: props.placeholder,
    value: props.value,
    onInput: (e: Event) => props.onInput((e.target as HTMLInputElement).value)
  }
  return (
    <>
      <label for={props.id}>{props.label}</label>
      {props.type === "email" ? <input type="email" autoComplete="off" {...attributes} /> : <input type="text" {...attributes} />}
    </>
  )
}
