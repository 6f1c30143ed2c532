/**
 * Spending pools: every member sees them with their caps and use; the roles that may manage them create, edit and
 * delete them and put members in and out (a member is in at most one pool: the server says so when one already is).
 */
import { useSignal } from "@preact/signals"
import { can } from "../../../domain/accounts/roles.ts"
import { type Loaded, Status, useRead } from "../../shared/useRead.tsx"
import { call } from "../api.ts"
import { ActionError, Field, useActions } from "./actions.tsx"
import type { Member } from "./MembersSection.tsx"
import type { Organization } from "./memberships.ts"
import { CAP_FIELDS, type CapTexts, capsFrom, PoolCard } from "./PoolCard.tsx"

const NO_CAPS: CapTexts = { dailyWei: "", weeklyWei: "", monthlyWei: "" }

export const PoolsSection = (props: {
  readonly org: Organization
  readonly members: Loaded<{ readonly data: ReadonlyArray<Member> }>
  readonly version: number
}) => {
  const { org } = props
  const version = useSignal(0)
  const pools = useRead(() => call((c) => c.pools.listPools({ path: { id: org.id } })), [org.id, props.version, version.value])
  const manage = can(org.role, "managePools")
  const name = useSignal("")
  const caps = useSignal<CapTexts>(NO_CAPS)
  const actions = useActions()
  const reload = () => void (version.value += 1)

  const create = async (event: Event) => {
    event.preventDefault()
    await actions.run("create-pool", async () => {
      const payload = { name: name.value, ...capsFrom(caps.value) }
      await call((c) => c.pools.createPool({ path: { id: org.id }, payload }))
      name.value = ""
      caps.value = NO_CAPS
      reload()
    })
  }

  return (
    <section aria-labelledby="pools">
      <h2 id="pools">Spending pools</h2>
      <p>A pool caps what its members spend together per UTC day, week and month; a request past a cap is refused before anything is spent.</p>
      <Status of={pools} what="the spending pools" />
      {pools.state === "ready" &&
        (pools.value.data.length === 0 ? (
          <p class="empty">
            No spending pool yet. {manage ? "Create one below, then put members in it." : "Owners and Admins create them."}
          </p>
        ) : (
          <ul class="pools">
            {pools.value.data.map((pool) => (
              <li key={pool.id}>
                <PoolCard org={org} pool={pool} members={props.members} manage={manage} reload={reload} />
              </li>
            ))}
          </ul>
        ))}
      {manage && (
        <form onSubmit={create} aria-labelledby="new-pool">
          <h3 id="new-pool">Create a pool</h3>
          <Field id="pool-name" label="Pool name" value={name.value} onInput={(v) => (name.value = v)} required />
          {CAP_FIELDS.map(({ field, label }) => (
            <Field
              key={field}
              id={`pool-${field}`}
              label={`${label} (optional)`}
              decimal
              placeholder="no cap"
              value={caps.value[field]}
              onInput={(v) => (caps.value = { ...caps.value, [field]: v })}
            />
          ))}
          <button type="submit" disabled={actions.busy}>Create pool</button>
          <ActionError of={actions} at="create-pool" />
        </form>
      )}
    </section>
  )
}
