/**
 * Connected apps (SPEC "App grant" and its state table; COMPAT.md "App grants"): connect an app to the active context
 * with the access it needs (its token `cfa_live_...` shown once, with a copy button, never again), the list with each
 * grant's access, state and use, and freeze / lift the freeze / revoke (after a confirmation). The buttons offered
 * follow the state table; a refusal from the server is shown beside the grant it concerns.
 */
import { useSignal } from "@preact/signals"
import { type GrantAction, grantActionsFor, type Scope } from "../../domain/accounts/appGrantRules.ts"
import type { GrantId } from "../../domain/accounts/ids.ts"
import { utc } from "../shared/format.ts"
import { Status, useRead } from "../shared/useRead.tsx"
import { CopyButton } from "./CopyButton.tsx"
import { call } from "./api.ts"
import "./apps-points.css"
import { identity } from "./session.ts"

/** What each access level lets an app do, in the words the form shows. */
const SCOPE_TEXT: Record<Scope, { readonly title: string; readonly text: string }> = {
  "account:read": {
    title: "Read the account",
    text: "The app sees the balance, what was spent (by model, key or day), the spending caps and the API keys. It cannot change anything. Always included."
  },
  "account:act": {
    title: "Act on the account",
    text:
      "The app may also change the account: set its daily, weekly and monthly spending caps, and send inference requests paid from its balance. " +
      "In an organization only an Admin or the Owner may connect such an app."
  }
}

const ACTION_LABEL: Record<GrantAction, string> = { freeze: "Freeze", unfreeze: "Lift the freeze", revoke: "Revoke" }
const ENDPOINT: Record<GrantAction, "freezeAppGrant" | "unfreezeAppGrant" | "revokeAppGrant"> = {
  freeze: "freezeAppGrant",
  unfreeze: "unfreezeAppGrant",
  revoke: "revokeAppGrant"
}

const STATE_TEXT = { active: "active", frozen: "frozen", revoked: "revoked" } as const

export const AppsPage = () => {
  const version = useSignal(0)
  const grants = useRead(() => call((c) => c.apps.listAppGrants()), [version.value])
  const appName = useSignal("")
  const mayAct = useSignal(false)
  const issued = useSignal<{ readonly token: string; readonly appName: string } | null>(null)
  const formError = useSignal<string | null>(null)
  const confirming = useSignal<string | null>(null)
  const rowError = useSignal<{ readonly id: string; readonly message: string } | null>(null)

  const create = async (event: Event) => {
    event.preventDefault()
    formError.value = null
    try {
      const scopes: Array<Scope> = mayAct.value ? ["account:read", "account:act"] : ["account:read"]
      const result = await call((c) => c.apps.createAppGrant({ payload: { appName: appName.value.trim(), scopes } }))
      issued.value = { token: result.token, appName: result.grant.appName }
      appName.value = ""
      mayAct.value = false
      version.value += 1
    } catch (failure) {
      formError.value = (failure as Error).message
    }
  }
  const act = async (id: GrantId, action: GrantAction) => {
    rowError.value = null
    confirming.value = null
    try {
      await call((c) => c.apps[ENDPOINT[action]]({ path: { id } }))
      version.value += 1
    } catch (failure) {
      rowError.value = { id, message: (failure as Error).message }
    }
  }
  // The list is the active context's; a switch of context remounts the page (session.ts contextKey).
  const context = identity.value?.active_context

  return (
    <section aria-labelledby="apps">
      <h1 id="apps">Connected apps</h1>
      <p>
        An app (an agent's MCP server, a dashboard) reaches this account with a grant token sent as{" "}
        <code>Authorization: Bearer cfa_live_…</code> to <code>GET /v1/account-tools</code> and <code>POST /v1/account-tools/call</code>.
        Freeze a grant to stop its app for a while; revoke it to stop it for good.
      </p>
      <p data-testid="grant-context">
        {context === undefined
          ? "Grants act in the context they were issued for."
          : context.type === "personal"
            ? "These grants act on your personal account (your active context)."
            : `These grants act on the organization ${context.name}, your active context (your role there: ${context.role.charAt(0).toUpperCase()}${context.role.slice(1)}).`}
      </p>
      <form onSubmit={create} aria-labelledby="new-grant">
        <h2 id="new-grant">Connect an app</h2>
        <label for="grant-name">App name</label>
        <input id="grant-name" required maxLength={100} value={appName.value} onInput={(e) => (appName.value = (e.target as HTMLInputElement).value)} />
        <fieldset class="scopes">
          <legend>Access</legend>
          <div class="scope">
            <input id="scope-read" type="checkbox" checked disabled aria-describedby="scope-read-text" />
            <label for="scope-read">{SCOPE_TEXT["account:read"].title} (<code>account:read</code>)</label>
            <p id="scope-read-text">{SCOPE_TEXT["account:read"].text}</p>
          </div>
          <div class="scope">
            <input
              id="scope-act"
              type="checkbox"
              checked={mayAct.value}
              onChange={(e) => (mayAct.value = (e.target as HTMLInputElement).checked)}
              aria-describedby="scope-act-text"
            />
            <label for="scope-act">{SCOPE_TEXT["account:act"].title} (<code>account:act</code>)</label>
            <p id="scope-act-text">{SCOPE_TEXT["account:act"].text}</p>
          </div>
        </fieldset>
        <button type="submit">Connect the app</button>
        {formError.value !== null && <p class="error" role="alert">{formError.value}</p>}
      </form>
      {issued.value !== null && (
        <div class="secret" role="status" data-testid="new-token-panel">
          <p>
            <strong>The token for “{issued.value.appName}”.</strong> Give it to the app now: it is shown this once and never again. Lost, it
            cannot be recovered: revoke the grant and connect the app again.
          </p>
          <code data-testid="new-token">{issued.value.token}</code>{" "}
          <CopyButton text={issued.value.token} />{" "}
          <button type="button" class="link" onClick={() => (issued.value = null)}>I have saved it</button>
        </div>
      )}
      <h2>Apps with access</h2>
      <Status of={grants} what="your connected apps" />
      {grants.state === "ready" &&
        (grants.value.data.length === 0 ? (
          <p class="empty">No app is connected: connect one above and give it the token it receives.</p>
        ) : (
          <div class="table-scroll">
            <table data-testid="grants-table">
              <caption class="visually-hidden">Your connected apps</caption>
              <thead>
                <tr>
                  <th scope="col">App</th>
                  <th scope="col">Access</th>
                  <th scope="col">State</th>
                  <th scope="col">Token</th>
                  <th scope="col">Connected by</th>
                  <th scope="col">Created (UTC)</th>
                  <th scope="col">Last used (UTC)</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {grants.value.data.map((g) => (
                  <tr key={g.id} data-grant={g.id}>
                    <td>{g.appName}</td>
                    <td data-testid="grant-scopes">{g.scopes.join(", ")}</td>
                    <td>
                      <span data-testid="grant-state">{STATE_TEXT[g.status]}</span>
                      {g.status === "frozen" && g.frozenAt !== null && <span class="muted"> since {utc(g.frozenAt)}</span>}
                      {g.status === "revoked" && g.revokedAt !== null && <span class="muted"> on {utc(g.revokedAt)}</span>}
                    </td>
                    <td class="hash">{g.prefix}…</td>
                    <td class="hash">{g.issuedByCfId}</td>
                    <td>{utc(g.createdAt)}</td>
                    <td>{g.lastUsedAt === null ? "never" : utc(g.lastUsedAt)}</td>
                    <td>
                      {confirming.value === g.id ? (
                        <div role="group" aria-label={`Revoke ${g.appName}?`}>
                          <p>Revoke “{g.appName}” for good? Its token stops working at once; the app would need a new grant.</p>
                          <button type="button" onClick={() => act(g.id, "revoke")}>Yes, revoke</button>{" "}
                          <button type="button" class="link" onClick={() => (confirming.value = null)}>Cancel</button>
                        </div>
                      ) : (
                        grantActionsFor(g.status).map((action) => (
                          <button
                            key={action}
                            type="button"
                            onClick={() => (action === "revoke" ? (confirming.value = g.id) : act(g.id, action))}
                          >
                            {ACTION_LABEL[action]}
                          </button>
                        ))
                      )}
                      {g.status === "revoked" && <span class="muted">kept as a record</span>}
                      {rowError.value?.id === g.id && <p class="error" role="alert">{rowError.value.message}</p>}
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
