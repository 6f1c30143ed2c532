/**
 * Account tools (COMPAT.md "App grants"): what a connected app may read and do on the account its grant acts in,
 * listed by `GET /v1/account-tools` and run by `POST /v1/account-tools/call`. The tools are one table of data: name,
 * description, the scope a grant must hold, the role-table action it takes in an organization (its least role is the
 * tool's `minimumOrgRole`, null in a personal context), the input schema (published as JSON Schema) and what it runs.
 * A call is checked in that order: the tool exists (404), the grant holds its scope (403 `forbidden` naming it), the
 * issuer's role in the organization now allows it (403 `org_role_required`), the input decodes (422 naming
 * `input.<field>`). The list shows exactly the tools whose scope and role checks pass (`refusalOf`, the one rule).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, JSONSchema, Schema } from "effect"
import {
  BudgetCapsResult,
  KeysResult,
  OverviewResult,
  PoolsResult,
  SpendBreakdown,
  SpendPeriod,
  SpendResult,
  type ToolOutput,
  type UpperRole
} from "../../domain/accounts/accountToolsWire.ts"
import { missingScope, type Scope } from "../../domain/accounts/appGrantRules.ts"
import { capWindows, earliestWindowStart } from "../../domain/accounts/ledger.ts"
import { type Action, ACTIONS, refusal, type Role } from "../../domain/accounts/roles.ts"
import { Forbidden, NotFound, type OrgRoleRequired, ValidationFailed } from "../../domain/errors.ts"
import { decodeBody } from "../../domain/exchange/translate/parseIssues.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { Generations } from "../exchange/Generations.ts"
import { ApiKeys } from "./ApiKeys.ts"
import type { AuthenticatedGrant, GrantContext } from "./AppGrants.ts"
import { type AccountLimits, Ledger } from "./Ledger.ts"
import { LedgerRepository } from "./LedgerRepository.ts"
import { Pools } from "./Pools.ts"

/** Roles as COMPAT.md's clients read them. */
const UPPER = { owner: "OWNER", admin: "ADMIN", member: "MEMBER" } as const satisfies Record<Role, typeof UpperRole.Type>

interface Tool<A, I, O extends ToolOutput> {
  readonly name: string
  readonly description: string
  readonly scope: Scope
  readonly action: Action
  readonly input: Schema.Schema<A, I>
  /** The answer's wire shape (domain/accounts/accountToolsWire.ts): `run` is checked against it. */
  readonly output: Schema.Schema<O, any>
  /** The checks every call makes come first; a run itself is never refused. */
  readonly run: (caller: AuthenticatedGrant, input: A) => Effect.Effect<O>
}

/** A tool with its input type forgotten: the table holds tools of different inputs (every output is a ToolOutput). */
type AnyTool = Tool<any, any, ToolOutput>

const tool = <A, I, O extends ToolOutput>(definition: Tool<A, I, O>): AnyTool => definition as unknown as AnyTool

/** Every field wrong is reported, and a field the tool does not take is refused (the schema says additionalProperties: false). */
const strict = <S extends Schema.Schema.Any>(schema: S): S =>
  schema.annotations({ parseOptions: { errors: "all", onExcessProperty: "error" } }) as S

/**
 * A tool without input: `{}` (or no input at all), as the published schema says; a field it does not take is refused
 * like any tool's. The generator would publish an empty struct as "object or array", hence the schema written out.
 */
const NoInput = Schema.Struct({}).pipe(
  // An empty struct takes any object (no excess-property check runs without properties): each field is refused here.
  Schema.filter((input) => Object.keys(input).map((key) => ({ path: [key], message: "is unexpected: this tool takes no input" })))
).annotations({ jsonSchema: { type: "object", properties: {}, additionalProperties: false } })

const CapWei = Schema.String.pipe(Schema.pattern(/^[1-9][0-9]{0,77}$/)).annotations({
  description: "A positive amount of wei as a digit string"
})
const CapChange = Schema.optional(
  Schema.NullOr(CapWei).annotations({ description: "A digit string sets the cap, null removes it; omitted leaves it as it is" })
)

const SpendInput = strict(
  Schema.Struct({
    breakdown: SpendBreakdown.annotations({
      description: "Group by the model that served each request, the key (or app grant) that sent it, or the UTC day"
    }),
    period: SpendPeriod.annotations({ description: "The current UTC day, week (from Monday) or month" })
  })
)

const BudgetCapsInput = strict(Schema.Struct({ dailyWei: CapChange, weeklyWei: CapChange, monthlyWei: CapChange }))

const digits = (wei: bigint | null) => (wei === null ? null : wei.toString())
const limitsView = (limits: AccountLimits) => ({
  dailyWei: digits(limits.dailyWei),
  weeklyWei: digits(limits.weeklyWei),
  monthlyWei: digits(limits.monthlyWei)
})

/**
 * Why a grant holding `scopes`, whose issuer has `role` in the grant's organization (null: a personal grant, where no
 * role applies), may not use `t`: the scope first (403 `forbidden` naming it), then the role table through `refusal`
 * (403 `org_role_required`); undefined when it may. The one rule: the list shows the tools it allows, a call of any
 * other answers its refusal.
 */
const refusalOf = (t: AnyTool, scopes: ReadonlyArray<Scope>, role: Role | null): Forbidden | OrgRoleRequired | undefined => {
  const missing = missingScope(scopes, t.scope)
  if (missing !== undefined) return new Forbidden({ message: missing })
  return role === null ? undefined : refusal(role, t.action, `The tool ${t.name}`)
}

/** The organization a grant acts in, as COMPAT.md shows it; null for a personal account. */
export const contextView = (organization: GrantContext | null) =>
  organization === null ? null : { orgId: organization.orgId, orgName: organization.orgName, role: UPPER[organization.role] }

export class AccountTools extends Effect.Service<AccountTools>()("AccountTools", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const repository = yield* LedgerRepository
    const keys = yield* ApiKeys
    const generations = yield* Generations
    const pools = yield* Pools
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    // The context account always exists (a foreign key says so): its absence would be a defect, not a 404.
    const accountOf = (accountId: string) => ledger.account(accountId).pipe(Effect.catchTag("NotFound", Effect.die))

    const TOOLS: ReadonlyArray<AnyTool> = [
      tool({
        name: "account.overview",
        description:
          "The account's balance (reserved for requests in flight and available), everything it has spent, what it spent " +
          "today, this week and this month (UTC), and its daily, weekly and monthly spending caps.",
        scope: "account:read",
        action: "view",
        input: NoInput,
        output: OverviewResult,
        run: ({ grant, organization }) =>
          Effect.gen(function* () {
            const windows = capWindows(yield* now)
            const account = yield* accountOf(grant.accountId)
            const charged = yield* repository.accountCharges(grant.accountId, {
              day: windows.dayStart,
              week: windows.weekStart,
              month: windows.monthStart,
              since: earliestWindowStart(windows)
            })
            return {
              context: contextView(organization),
              balanceWei: account.balanceWei.toString(),
              reservedWei: account.reservedWei.toString(),
              availableWei: (account.balanceWei - account.reservedWei).toString(),
              spentWei: account.spentWei.toString(),
              limits: limitsView(account.limits),
              spend: { todayWei: charged.day.toString(), thisWeekWei: charged.week.toString(), thisMonthWei: charged.month.toString() }
            }
          })
      }),
      tool({
        name: "account.keys",
        description: "The account's API keys (revoked ones included): id, prefix, label, status, caps, allowed models, creation time.",
        scope: "account:read",
        action: "view",
        input: NoInput,
        output: KeysResult,
        run: ({ grant }) =>
          Effect.map(keys.list(grant.accountId), (list) => ({
            keys: list.map((key) => ({
              id: key.id,
              prefix: key.keyPrefix,
              label: key.label,
              status: key.status,
              dailyLimitWei: digits(key.dailyLimitWei),
              monthlyLimitWei: digits(key.monthlyLimitWei),
              allowedModels: key.allowedModels,
              createdAt: key.createdAt.toISOString()
            }))
          }))
      }),
      tool({
        name: "account.spend",
        description:
          "What the account's requests were charged in the current UTC day, week or month, grouped by model, by key (or app " +
          "grant) or by day, with the number of requests of each group.",
        scope: "account:read",
        action: "view",
        input: SpendInput,
        output: SpendResult,
        run: ({ grant }, input) =>
          Effect.gen(function* () {
            const windows = capWindows(yield* now)
            const from = input.period === "day" ? windows.dayStart : input.period === "week" ? windows.weekStart : windows.monthStart
            const groups = yield* generations.spendBreakdown(grant.accountId, from, input.breakdown)
            return {
              breakdown: input.breakdown,
              period: input.period,
              from: from.toISOString(),
              totalWei: groups.reduce((sum, g) => sum + g.chargeWei, 0n).toString(),
              rows: groups.map((g) => ({
                ...(input.breakdown === "model" ? { model: g.bucket } : input.breakdown === "key" ? { key: g.bucket } : { day: g.bucket }),
                chargeWei: g.chargeWei.toString(),
                requests: g.requests
              }))
            }
          })
      }),
      tool({
        name: "account.pools",
        description:
          "The organization's spending pools: each pool's daily, weekly and monthly caps, what its members used of them in " +
          "the current UTC windows (live holds included), and who is in it. A personal account has none.",
        scope: "account:read",
        action: "view",
        input: NoInput,
        output: PoolsResult,
        run: ({ grant, organization }) =>
          organization === null
            ? Effect.succeed({ pools: [] })
            // The grant was authenticated just now with its issuer a member of the organization it acts in.
            : pools.ofAccount(grant.accountId).pipe(
              Effect.map((list) => ({
                pools: list.map((pool) => ({
                  id: pool.id,
                  name: pool.name,
                  caps: { dailyWei: digits(pool.caps.dailyWei), weeklyWei: digits(pool.caps.weeklyWei), monthlyWei: digits(pool.caps.monthlyWei) },
                  used: { dailyWei: pool.used.dailyWei.toString(), weeklyWei: pool.used.weeklyWei.toString(), monthlyWei: pool.used.monthlyWei.toString() },
                  members: pool.members.map((m) => ({ cfId: m.cfId, displayName: m.displayName }))
                }))
              }))
            )
      }),
      tool({
        name: "account.set_budget_caps",
        description:
          "Sets the account's daily, weekly and monthly spending caps (wei as digit strings). A cap given as null is removed; " +
          "one left out stays as it is. Answers the caps now in force.",
        scope: "account:act",
        action: "manageKeys",
        input: BudgetCapsInput,
        output: BudgetCapsResult,
        run: ({ grant }, input) =>
          orDieUnlessUnavailable(
            sql.withTransaction(
              Effect.gen(function* () {
                // The account row is locked first, so two partial changes at once cannot undo each other.
                yield* repository.findAccount(grant.accountId, true)
                const current = (yield* accountOf(grant.accountId)).limits
                const merged = (change: string | null | undefined, kept: bigint | null) =>
                  change === undefined ? kept : change === null ? null : BigInt(change)
                const updated = yield* ledger
                  .setLimits(grant.accountId, {
                    dailyWei: merged(input.dailyWei, current.dailyWei),
                    weeklyWei: merged(input.weeklyWei, current.weeklyWei),
                    monthlyWei: merged(input.monthlyWei, current.monthlyWei)
                  })
                  .pipe(Effect.catchTag("NotFound", Effect.die))
                return { limits: limitsView(updated.limits) }
              })
            )
          )
      })
    ]

    const byName = new Map(TOOLS.map((t) => [t.name, t]))
    const published = TOOLS.map((t) => ({ tool: t, inputSchema: JSONSchema.make(t.input) as unknown as Record<string, unknown> }))
    const roleOf = (caller: AuthenticatedGrant): Role | null => caller.organization?.role ?? null

    /**
     * What the app holding `caller` sees: its name, the context it acts in, and the tools its scopes and its issuer's
     * role there allow (the ones `call` would run); a personal grant's tools have no minimum role.
     */
    const catalog = (caller: AuthenticatedGrant) => {
      const role = roleOf(caller)
      return {
        appName: caller.grant.appName,
        context: contextView(caller.organization),
        tools: published
          .filter(({ tool: t }) => refusalOf(t, caller.grant.scopes, role) === undefined)
          .map(({ tool: t, inputSchema }) => ({
            name: t.name,
            description: t.description,
            scope: t.scope,
            minimumOrgRole: role === null ? null : UPPER[ACTIONS[t.action]],
            inputSchema
          }))
      }
    }

    const call = Effect.fn("AccountTools.call")(function* (
      caller: AuthenticatedGrant,
      name: string,
      input: unknown
    ): Effect.fn.Return<{ tool: string; result: ToolOutput }, NotFound | Forbidden | OrgRoleRequired | ValidationFailed> {
      const found = byName.get(name)
      if (found === undefined) {
        return yield* new NotFound({ message: `No account tool named ${JSON.stringify(name)}; GET /v1/account-tools lists them.` })
      }
      const refused = refusalOf(found, caller.grant.scopes, roleOf(caller))
      if (refused !== undefined) return yield* Effect.fail(refused)
      const decoded = decodeBody(found.input)(input ?? {})
      if (decoded._tag === "Left") return yield* Effect.fail(underInput(decoded.left))
      return { tool: found.name, result: yield* found.run(caller, decoded.right) }
    })

    return { catalog, call } as const
  })
}) {}

/** The input's issues as fields of the call's body (`input.breakdown`), which is what the client sent. */
const underInput = (failure: ValidationFailed): ValidationFailed =>
  failure.issues === undefined
    ? failure
    : ValidationFailed.fromIssues(
      failure.issues.map((issue) => ({
        param: issue.param === "" ? "input" : `input.${issue.param}`,
        path: ["input", ...issue.path],
        message: issue.message
      }))
    )
