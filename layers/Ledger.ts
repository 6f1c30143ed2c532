/**
 * The credit ledger (issue 9): the Ledger service (balances, holds, caps) and the sweeper of expired holds.
 * SqlClient and AppConfig come from the composition around it.
 */
import { Layer } from "effect"
import { HoldSweeperLive } from "../services/accounts/HoldSweeper.ts"
import { Ledger } from "../services/accounts/Ledger.ts"
import { Jobs } from "../services/platform/Jobs.ts"

export const LedgerLive = HoldSweeperLive.pipe(Layer.provideMerge(Ledger.Default), Layer.provide(Jobs.Default))
