/** A button that copies `text` to the clipboard and says so ("Copied") until the text changes. */
import { useSignal } from "@preact/signals"
import { useEffect } from "preact/hooks"

export const CopyButton = (props: { readonly text: string; readonly label?: string; readonly class?: string }) => {
  const copied = useSignal(false)
  useEffect(() => void (copied.value = false), [props.text])
  const copy = () =>
    navigator.clipboard.writeText(props.text).then(
      () => (copied.value = true),
      () => (copied.value = false)
    )
  return (
    <button type="button" class={props.class} onClick={copy}>
      {copied.value ? "Copied" : (props.label ?? "Copy")}
    </button>
  )
}
