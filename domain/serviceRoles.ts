/**
 * Service roles (DESIGN.md section 14, "Roles"): which parts of the service one replica runs, so the inference tier
 * scales apart from the rest. `SERVICE_ROLES` is a comma-separated subset of the roles below; unset or empty, a
 * replica runs them all. docs/decisions.md "Service roles" says what each role loads and why.
 */
import { Either } from "effect"

export const SERVICE_ROLES = ["oracle", "exchange", "accounts", "web", "jobs"] as const
export type ServiceRole = (typeof SERVICE_ROLES)[number]

/** The roles a replica runs, in the canonical order above (never empty). */
export type ServiceRoles = ReadonlyArray<ServiceRole>

const isRole = (name: string): name is ServiceRole => (SERVICE_ROLES as ReadonlyArray<string>).includes(name)

/**
 * `SERVICE_ROLES` as written: names separated by commas (case and spaces ignored, a repeat counted once); an empty
 * value means every role. Left: the message naming what is wrong.
 */
export const parseServiceRoles = (raw: string): Either.Either<ServiceRoles, string> => {
  const names = raw.split(",").map((name) => name.trim().toLowerCase()).filter((name) => name !== "")
  if (names.length === 0) return Either.right(SERVICE_ROLES)
  const unknown = names.filter((name) => !isRole(name))
  if (unknown.length > 0) {
    return Either.left(
      `unknown role${unknown.length > 1 ? "s" : ""} ${unknown.map((name) => `"${name}"`).join(", ")}; ` +
        `expected a comma-separated subset of ${SERVICE_ROLES.join(", ")} (empty: all)`
    )
  }
  return Either.right(SERVICE_ROLES.filter((role) => names.includes(role)))
}

export const runsRole = (roles: ServiceRoles, role: ServiceRole): boolean => roles.includes(role)

export const runsEveryRole = (roles: ServiceRoles): boolean => SERVICE_ROLES.every((role) => roles.includes(role))

/**
 * The chain client (the registry, the funding contracts, or the embedded anvil) serves every role but the exchange:
 * the oracle anchors and shows the registry, accounts' funding reads deposits and sends withdrawals, the pages show
 * the contract, the jobs sync and publish. An exchange-only replica bills from the ledger and prices from the
 * oracle's snapshot in PostgreSQL, and never touches the chain.
 */
export const rolesNeedChain = (roles: ServiceRoles): boolean => roles.some((role) => role !== "exchange")

/**
 * What a replica running only some roles must be given. The embedded defaults belong to one process: a PGlite
 * database no other replica can reach, an anvil chain no other replica sees. A replica running a subset of the roles
 * exists to sit beside others, so it needs the shared PostgreSQL (DATABASE_URL) and, when its roles use the chain, the
 * shared network (RPC_URL). Undefined when the configuration is complete.
 */
export const rolesConfigurationProblem = (
  roles: ServiceRoles,
  configured: { readonly databaseUrl: boolean; readonly rpcUrl: boolean }
): string | undefined => {
  if (runsEveryRole(roles)) return undefined
  const missing = [
    ...(configured.databaseUrl ? [] : ["DATABASE_URL"]),
    ...(configured.rpcUrl || !rolesNeedChain(roles) ? [] : ["RPC_URL"])
  ]
  if (missing.length === 0) return undefined
  return (
    `SERVICE_ROLES=${roles.join(",")} runs only some roles, beside replicas that run the others: it needs ` +
    `${missing.join(" and ")} (the embedded ${missing.includes("DATABASE_URL") ? "database" : "chain"} ` +
    `${missing.length > 1 ? "and chain are" : "is"} this process's own, which no other replica can share)`
  )
}
