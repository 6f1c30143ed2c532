/**
 * The credit ledger (issue 9): the Ledger service (balances, holds, caps), the sweeper of expired holds, and on-chain
 * funding (deposit references, the deposit watcher, withdrawals). SqlClient, AppConfig and the chain come from the
 * composition around it.
 */
import { Layer } from "effect"
import { DepositWatcherLive } from "../services/accounts/DepositWatcher.ts"
import { Funding } from "../services/accounts/Funding.ts"
import { HoldSweeperLive } from "../services/accounts/HoldSweeper.ts"
import { Ledger } from "../services/accounts/Ledger.ts"
import { Withdrawals } from "../services/accounts/Withdrawals.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { whenRole } from "./Roles.ts"

// The sweeper and the watcher run on a replica that runs the jobs role (SERVICE_ROLES).
export const LedgerLive = Layer.merge(whenRole("jobs", HoldSweeperLive), whenRole("jobs", DepositWatcherLive)).pipe(
  Layer.provideMerge(Withdrawals.Default),
  Layer.provideMerge(Funding.Default),
  Layer.provideMerge(Ledger.Default),
  Layer.provide(Jobs.Default)
)
