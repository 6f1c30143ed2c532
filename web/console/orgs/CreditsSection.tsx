/**
 * Credit between the caller's personal account and the organization: any member moves credit in; the role that may
 * empty it (the Owner) moves it out, as it must before deleting the organization. Amounts are typed in credits and
 * sent as exact wei. The organization's balance is its account's, read while acting in it.
 */
import { useSignal } from "@preact/signals"
import { can } from "../../../domain/accounts/roles.ts"
import { Status, useRead } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { credits } from "../format.ts"
import { ActionError, creditsToWei, Field, useActions } from "./actions.tsx"
import type { Organization } from "./memberships.ts"

type Direction = "contributeCredits" | "withdrawCredits"

export const CreditsSection = (props: { readonly org: Organization; readonly acting: boolean }) => {
  const { org } = props
  const version = useSignal(0)
  const account = useRead(() => (props.acting ? call((c) => c.account.getAccount()) : Promise.resolve(null)), [props.acting, version.value])
  const amountIn = useSignal("")
  const amountOut = useSignal("")
  const moved = useSignal<string | null>(null)
  const actions = useActions()

  const move = (direction: Direction, text: string, clear: () => void) => async (event: Event) => {
    event.preventDefault()
    moved.value = null
    await actions.run(direction, async () => {
      const amountWei = creditsToWei("Amount", text)
      const done = await call((c) => c.orgs[direction]({ path: { id: org.id }, payload: { amountWei } }))
      moved.value =
        `Moved ${credits(done.amountWei)} credits ${direction === "contributeCredits" ? "in" : "out"}: the organization holds ` +
        `${credits(done.organizationBalanceWei)}, your personal account ${credits(done.personalBalanceWei)}.`
      clear()
      version.value += 1
    })
  }

  return (
    <section aria-labelledby="credits">
      <h2 id="credits">Credit</h2>
      {props.acting ? (
        <>
          <Status of={account} what="the organization's balance" />
          {account.state === "ready" && account.value !== null && (
            <p>Balance of the organization: <strong data-testid="org-balance">{credits(account.value.balanceWei)}</strong> credits.</p>
          )}
        </>
      ) : (
        <p>Act in this organization to see its balance here and on the overview.</p>
      )}
      {moved.value !== null && <p role="status" data-testid="moved">{moved.value}</p>}
      {can(org.role, "contributeCredits") && (
        <form onSubmit={move("contributeCredits", amountIn.value, () => (amountIn.value = ""))} aria-labelledby="move-in">
          <h3 id="move-in">Move credit in</h3>
          <p>From your personal account; requests made in the organization are paid from it.</p>
          <Field id="move-in-amount" label="Credits to move in" decimal required value={amountIn.value} onInput={(v) => (amountIn.value = v)} />
          <button type="submit" disabled={actions.busy}>Move in</button>
          <ActionError of={actions} at="contributeCredits" />
        </form>
      )}
      {can(org.role, "withdrawOrganizationCredits") && (
        <form onSubmit={move("withdrawCredits", amountOut.value, () => (amountOut.value = ""))} aria-labelledby="move-out">
          <h3 id="move-out">Move credit out</h3>
          <p>To your personal account; only what no request in flight holds can move.</p>
          <Field id="move-out-amount" label="Credits to move out" decimal required value={amountOut.value} onInput={(v) => (amountOut.value = v)} />
          <button type="submit" disabled={actions.busy}>Move out</button>
          <ActionError of={actions} at="withdrawCredits" />
        </form>
      )}
    </section>
  )
}
