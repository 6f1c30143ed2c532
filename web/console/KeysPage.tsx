/**
 * API keys: create one (its secret shown once, with a copy button, never again), the list with each key's state and
 * caps, and freeze / reactivate / revoke, each refusal shown beside the key it concerns.
 */
import { useSignal } from "@preact/signals"
import { parseScaled, utc } from "../shared/format.ts"
import { Status, useRead } from "../shared/useRead.tsx"
import { type KeyId, OrgId } from "../../domain/accounts/ids.ts"
import { can } from "../../domain/accounts/roles.ts"
import { CopyButton } from "./CopyButton.tsx"
import { call } from "./api.ts"
import { credits } from "./format.ts"
import { identity } from "./session.ts"

type KeyAction = "freezeKey" | "reactivateKey" | "revokeKey"

/** A cap typed in credits ("2.5"), as exact wei; empty: no cap. */
const capWei = (text: string): bigint | undefined => (text.trim() === "" ? undefined : parseScaled(text.trim()))

export const KeysPage = () => {
  const version = useSignal(0)
  const keys = useRead(() => call((c) => c.keys.listKeys()), [version.value])
  const models = useRead(() => call((c) => c.models.models()))
  // Each key's spend over the last 30 UTC days, summed by the server (the activity split by key).
  const spend = useRead(() => call((c) => c.activity.activity({ urlParams: { by: "key", days: 30 } })), [version.value])
  const spentBy = (id: string): string =>
    spend.state !== "ready" ? "…" : credits(spend.value.groups.find((g) => g.group === id)?.chargeWei ?? "0")
  const allowed = useSignal<ReadonlyArray<string>>([])
  // In an organization, an Owner or Admin may issue a key for another member: its spending counts for that member.
  const context = identity.value?.active_context
  const orgId = context?.type === "organization" && can(context.role, "manageKeys") ? context.org_id : null
  const members = useRead(() => (orgId === null ? Promise.resolve(null) : call((c) => c.orgs.listMembers({ path: { id: OrgId.make(orgId) } }))), [orgId])
  const holder = useSignal("")
  const label = useSignal("")
  const daily = useSignal("")
  const monthly = useSignal("")
  const created = useSignal<{ readonly secret: string; readonly label: string | null } | null>(null)
  const formError = useSignal<string | null>(null)
  const rowError = useSignal<{ readonly id: string; readonly message: string } | null>(null)

  const create = async (event: Event) => {
    event.preventDefault()
    formError.value = null
    try {
      const dailyLimitWei = capWei(daily.value)
      const monthlyLimitWei = capWei(monthly.value)
      const issued = await call((c) =>
        c.keys.issueKey({
          payload: {
            ...(label.value.trim() === "" ? {} : { label: label.value.trim() }),
            ...(dailyLimitWei === undefined ? {} : { dailyLimitWei }),
            ...(monthlyLimitWei === undefined ? {} : { monthlyLimitWei }),
            ...(allowed.value.length === 0 ? {} : { allowedModels: allowed.value }),
            ...(holder.value === "" ? {} : { holderCfId: holder.value })
          }
        })
      )
      created.value = { secret: issued.secret, label: issued.key.label }
      label.value = ""
      daily.value = ""
      monthly.value = ""
      allowed.value = []
      holder.value = ""
      version.value += 1
    } catch (failure) {
      formError.value = (failure as Error).message
    }
  }
  const act = async (id: KeyId, action: KeyAction) => {
    rowError.value = null
    try {
      await call((c) => c.keys[action]({ path: { id } }))
      version.value += 1
    } catch (failure) {
      rowError.value = { id, message: (failure as Error).message }
    }
  }

  return (
    <section aria-labelledby="keys">
      <h1 id="keys">API keys</h1>
      <form class="stack" onSubmit={create} aria-labelledby="new-key">
        <h2 id="new-key">Create a key</h2>
        <label for="key-label">Label (optional)</label>
        <input id="key-label" maxLength={100} value={label.value} onInput={(e) => (label.value = (e.target as HTMLInputElement).value)} />
        <label for="key-daily">Daily cap, credits (optional)</label>
        <input id="key-daily" inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,18})?" value={daily.value} onInput={(e) => (daily.value = (e.target as HTMLInputElement).value)} />
        <label for="key-monthly">Monthly cap, credits (optional)</label>
        <input id="key-monthly" inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,18})?" value={monthly.value} onInput={(e) => (monthly.value = (e.target as HTMLInputElement).value)} />
        {members.state === "ready" && members.value !== null && (
          <>
            <label for="key-holder">The key is for</label>
            <select id="key-holder" value={holder.value} onChange={(e) => (holder.value = (e.target as HTMLSelectElement).value)}>
              <option value="">You</option>
              {members.value.data
                .filter((m) => m.cfId !== identity.value?.cf_id)
                .map((m) => <option key={m.cfId} value={m.cfId}>{m.displayName} ({m.role})</option>)}
            </select>
          </>
        )}
        <label for="key-models">Allowed models (optional: none selected allows every model)</label>
        <select
          id="key-models"
          multiple
          size={6}
          onChange={(e) => (allowed.value = [...(e.target as HTMLSelectElement).selectedOptions].map((option) => option.value))}
        >
          {models.state === "ready" &&
            models.value.data.map((m) => <option key={m.id} value={m.id} selected={allowed.value.includes(m.id)}>{m.displayName} ({m.id})</option>)}
        </select>
        <Status of={models} what="the routable models" />
        <button type="submit">Create key</button>
        {formError.value !== null && <p class="error" role="alert">{formError.value}</p>}
      </form>
      {created.value !== null && (
        <div class="secret" role="status" data-testid="new-secret-panel">
          <p>
            <strong>Your new key{created.value.label === null ? "" : ` “${created.value.label}”`}.</strong> Copy it now: it is shown this once and
            never again.
          </p>
          <code data-testid="new-secret">{created.value.secret}</code>{" "}
          <CopyButton text={created.value.secret} />{" "}
          <button type="button" class="link" onClick={() => (created.value = null)}>I have saved it</button>
        </div>
      )}
      <h2>Your keys</h2>
      <Status of={keys} what="your keys" />
      <Status of={spend} what="each key's spend" />
      {keys.state === "ready" &&
        (keys.value.data.length === 0 ? (
          <p class="empty">No key yet: create one above to call the exchange.</p>
        ) : (
          <div class="table-scroll">
            <table data-testid="keys-table">
              <caption class="visually-hidden">Your API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Label</th>
                  <th scope="col">For</th>
                  <th scope="col">State</th>
                  <th scope="col" class="num">Daily cap</th>
                  <th scope="col" class="num">Monthly cap</th>
                  <th scope="col">Models</th>
                  <th scope="col" class="num">Spent, last 30 days (UTC)</th>
                  <th scope="col">Created (UTC)</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {keys.value.data.map((k) => (
                  <tr key={k.id} data-key={k.id}>
                    <td class="hash">{k.prefix}…</td>
                    <td>{k.label ?? ""}</td>
                    <td data-testid="key-holder">{k.holderCfId ?? ""}</td>
                    <td data-testid="key-state">{k.status}{k.frozenBy === "admin" ? " (by an admin)" : ""}</td>
                    <td class="num">{credits(k.dailyLimitWei)}</td>
                    <td class="num">{credits(k.monthlyLimitWei)}</td>
                    <td data-testid="key-models">{k.allowedModels.length === 0 ? "any" : k.allowedModels.join(", ")}</td>
                    <td class="num" data-testid="key-spent">{spentBy(k.id)}</td>
                    <td>{utc(k.createdAt)}</td>
                    <td>
                      {k.status === "active" && <button type="button" onClick={() => act(k.id, "freezeKey")}>Freeze</button>}
                      {k.status === "frozen" && <button type="button" onClick={() => act(k.id, "reactivateKey")}>Reactivate</button>}{" "}
                      {k.status !== "revoked" && <button type="button" onClick={() => act(k.id, "revokeKey")}>Revoke</button>}
                      {rowError.value?.id === k.id && <p class="error" role="alert">{rowError.value.message}</p>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
    </section>
  )
}
