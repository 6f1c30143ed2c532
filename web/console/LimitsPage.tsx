/**
 * The account's spending caps per UTC day, week (from Monday) and month. The form replaces all three (an empty field
 * removes that cap), as PUT /v1/account/limits does; amounts in credits become exact wei.
 */
import { useSignal } from "@preact/signals"
import { Fragment } from "preact"
import { formatScaled, parseScaled } from "../shared/format.ts"
import { Status, useRead } from "../shared/useRead.tsx"
import { call } from "./api.ts"
import { credits } from "./format.ts"

type Cap = "dailyWei" | "weeklyWei" | "monthlyWei"
const CAPS: ReadonlyArray<{ readonly field: Cap; readonly label: string }> = [
  { field: "dailyWei", label: "Daily cap (UTC day), credits" },
  { field: "weeklyWei", label: "Weekly cap (from Monday, UTC), credits" },
  { field: "monthlyWei", label: "Monthly cap (UTC month), credits" }
]

const DECIMAL = /^[0-9]+(\.[0-9]{1,18})?$/

export const LimitsPage = () => {
  const version = useSignal(0)
  const account = useRead(() => call((c) => c.account.getAccount()), [version.value])
  const drafts = useSignal<Record<Cap, string> | null>(null)
  const error = useSignal<string | null>(null)
  const saved = useSignal(false)
  const current = account.state === "ready" ? account.value.limits : undefined
  const values: Record<Cap, string> =
    drafts.value ??
    (current === undefined
      ? { dailyWei: "", weeklyWei: "", monthlyWei: "" }
      : {
        dailyWei: current.dailyWei === null ? "" : formatScaled(current.dailyWei).replace(/,/g, ""),
        weeklyWei: current.weeklyWei === null ? "" : formatScaled(current.weeklyWei).replace(/,/g, ""),
        monthlyWei: current.monthlyWei === null ? "" : formatScaled(current.monthlyWei).replace(/,/g, "")
      })

  const save = async (event: Event) => {
    event.preventDefault()
    error.value = null
    saved.value = false
    const bad = CAPS.find(({ field }) => values[field].trim() !== "" && !DECIMAL.test(values[field].trim()))
    if (bad !== undefined) {
      error.value = `${bad.label}: a number of credits like 25 or 0.5 (at most 18 decimals), or empty for no cap.`
      return
    }
    const cap = (field: Cap) => (values[field].trim() === "" ? null : parseScaled(values[field].trim()))
    try {
      await call((c) => c.account.putLimits({ payload: { dailyWei: cap("dailyWei"), weeklyWei: cap("weeklyWei"), monthlyWei: cap("monthlyWei") } }))
      drafts.value = null
      saved.value = true
      version.value += 1
    } catch (failure) {
      error.value = (failure as Error).message
    }
  }
  return (
    <section aria-labelledby="limits">
      <h1 id="limits">Spending limits</h1>
      <p>Requests that would take the account past a cap are refused (429 <code>spending_limit_reached</code>) before anything is spent.</p>
      <Status of={account} what="your caps" />
      {current !== undefined && (
        <dl class="figures">
          <div><dt>Daily</dt><dd data-testid="cap-daily">{credits(current.dailyWei)}</dd></div>
          <div><dt>Weekly</dt><dd data-testid="cap-weekly">{credits(current.weeklyWei)}</dd></div>
          <div><dt>Monthly</dt><dd data-testid="cap-monthly">{credits(current.monthlyWei)}</dd></div>
        </dl>
      )}
      <form onSubmit={save} aria-labelledby="limits-form">
        <h2 id="limits-form">Change them</h2>
        {CAPS.map(({ field, label }) => (
          <Fragment key={field}>
            <label for={field}>{label}</label>
            <input
              id={field}
              inputMode="decimal"
              placeholder="no cap"
              value={values[field]}
              onInput={(e) => (drafts.value = { ...values, [field]: (e.target as HTMLInputElement).value })}
            />
          </Fragment>
        ))}
        <button type="submit">Save the caps</button>
        {error.value !== null && <p class="error" role="alert">{error.value}</p>}
        {saved.value && <p role="status">Saved.</p>}
      </form>
    </section>
  )
}
