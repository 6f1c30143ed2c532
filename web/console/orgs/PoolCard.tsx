/**
 * One spending pool: its caps beside what its members used in each window, its members, and, for the roles that
 * manage pools, editing (name and caps; an emptied cap is removed), deleting, and putting members in and out.
 */
import { useSignal } from "@preact/signals"
import type { PoolView } from "../../../src/api/PoolsApi.ts"
import { CfId } from "../../../domain/accounts/ids.ts"
import { formatScaled } from "../../shared/format.ts"
import type { Loaded } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { credits } from "../format.ts"
import { ActionError, capToWei, Confirm, Field, useActions } from "./actions.tsx"
import type { Member } from "./MembersSection.tsx"
import type { Organization } from "./memberships.ts"

export type Pool = typeof PoolView.Type

export const CAP_FIELDS = [
  { field: "dailyWei", label: "Daily cap (UTC day), credits", window: "Day (UTC)" },
  { field: "weeklyWei", label: "Weekly cap (from Monday, UTC), credits", window: "Week (from Monday, UTC)" },
  { field: "monthlyWei", label: "Monthly cap (UTC month), credits", window: "Month (UTC)" }
] as const
export type CapField = (typeof CAP_FIELDS)[number]["field"]
export type CapTexts = Record<CapField, string>

/** The three caps typed in credits as exact wei; empty is no cap (null). */
export const capsFrom = (texts: CapTexts) => ({
  dailyWei: capToWei("Daily cap", texts.dailyWei),
  weeklyWei: capToWei("Weekly cap", texts.weeklyWei),
  monthlyWei: capToWei("Monthly cap", texts.monthlyWei)
})

/** A cap as the edit form shows it: plain credits without grouping, empty for none. */
const capText = (wei: string | null) => (wei === null ? "" : formatScaled(wei).replace(/,/g, ""))

export const PoolCard = (props: {
  readonly org: Organization
  readonly pool: Pool
  readonly members: Loaded<{ readonly data: ReadonlyArray<Member> }>
  readonly manage: boolean
  readonly reload: () => void
}) => {
  const { org, pool } = props
  const actions = useActions()
  const editing = useSignal(false)
  const name = useSignal("")
  const caps = useSignal<CapTexts>({ dailyWei: "", weeklyWei: "", monthlyWei: "" })
  // The form starts from the pool as last read, each time it opens.
  const edit = () => {
    name.value = pool.name
    caps.value = { dailyWei: capText(pool.caps.dailyWei), weeklyWei: capText(pool.caps.weeklyWei), monthlyWei: capText(pool.caps.monthlyWei) }
    editing.value = true
  }
  const adding = useSignal("")
  const path = { id: org.id, poolId: pool.id }
  const outside = props.members.state === "ready" ? props.members.value.data.filter((m) => !pool.members.some((p) => p.cfId === m.cfId)) : []

  const save = async (event: Event) => {
    event.preventDefault()
    const ok = await actions.run("edit", () => call((c) => c.pools.updatePool({ path, payload: { name: name.value, ...capsFrom(caps.value) } })))
    if (ok) {
      editing.value = false
      props.reload()
    }
  }
  const change = (where: string, run: () => Promise<unknown>) =>
    actions.run(where, async () => {
      await run()
      props.reload()
    })
  const add = (event: Event) => {
    event.preventDefault()
    const cfId = adding.value
    if (cfId === "") return
    void change("add", () => call((c) => c.pools.addPoolMember({ path: { ...path, cfId: CfId.make(cfId) } })))
  }

  return (
    <article class="pool" aria-labelledby={`pool-${pool.id}`} data-pool={pool.id}>
      <h3 id={`pool-${pool.id}`}>{pool.name}</h3>
      <div class="table-scroll">
        <table>
          <caption class="visually-hidden">Caps and use of {pool.name}</caption>
          <thead><tr><th scope="col">Window</th><th scope="col" class="num">Cap, credits</th><th scope="col" class="num">Used, credits</th></tr></thead>
          <tbody>
            {CAP_FIELDS.map(({ field, window }) => (
              <tr key={field}>
                <td>{window}</td>
                <td class="num" data-testid={`pool-cap-${field}`}>{credits(pool.caps[field])}</td>
                <td class="num">{credits(pool.used[field])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h4>Members of the pool</h4>
      {pool.members.length === 0 ? (
        <p class="empty">Nobody is in this pool yet{props.manage ? ": put a member in below." : "."}</p>
      ) : (
        <ul data-testid="pool-members">
          {pool.members.map((m) => (
            <li key={m.cfId}>
              {m.displayName} <span class="hash">({m.cfId})</span>{" "}
              {props.manage && (
                <button type="button" disabled={actions.busy} onClick={() => change(`out-${m.cfId}`, () => call((c) => c.pools.removePoolMember({ path: { ...path, cfId: m.cfId } })))}>
                  Take out of the pool
                </button>
              )}
              <ActionError of={actions} at={`out-${m.cfId}`} />
            </li>
          ))}
        </ul>
      )}
      {props.manage && outside.length > 0 && (
        <form onSubmit={add} class="inline">
          <label for={`add-${pool.id}`}>Member to put in {pool.name}</label>
          <select id={`add-${pool.id}`} value={adding.value} onChange={(e) => (adding.value = (e.target as HTMLSelectElement).value)}>
            <option value="">Choose a member</option>
            {outside.map((m) => <option key={m.cfId} value={m.cfId}>{m.displayName} ({m.cfId})</option>)}
          </select>
          <button type="submit" disabled={actions.busy || adding.value === ""}>Put in the pool</button>
          <ActionError of={actions} at="add" />
        </form>
      )}
      {props.manage && !editing.value && (
        <p>
          <button type="button" onClick={edit}>Edit pool</button>{" "}
          <Confirm
            label="Delete pool"
            confirm="Yes, delete the pool"
            disabled={actions.busy}
            question={<>Delete the pool <strong>{pool.name}</strong>? Its members then count against no pool.</>}
            onConfirm={() => change("delete", () => call((c) => c.pools.deletePool({ path })))}
          />
        </p>
      )}
      <ActionError of={actions} at="delete" />
      {props.manage && editing.value && (
        <form onSubmit={save} aria-label={`Edit ${pool.name}`}>
          <Field id={`edit-name-${pool.id}`} label="Pool name" value={name.value} onInput={(v) => (name.value = v)} required />
          {CAP_FIELDS.map(({ field, label }) => (
            <Field
              key={field}
              id={`edit-${field}-${pool.id}`}
              label={`${label} (empty: no cap)`}
              decimal
              placeholder="no cap"
              value={caps.value[field]}
              onInput={(v) => (caps.value = { ...caps.value, [field]: v })}
            />
          ))}
          <button type="submit" disabled={actions.busy}>Save the pool</button>{" "}
          <button type="button" class="link" onClick={() => (editing.value = false)}>Cancel</button>
          <ActionError of={actions} at="edit" />
        </form>
      )}
    </article>
  )
}
