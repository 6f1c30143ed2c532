/**
 * The live Organizations and Invitations services over a scratch PostgreSQL database, with the mail captured in
 * memory: what the suites that drive organizations without HTTP compose.
 */
import { Layer, Logger, LogLevel } from "effect"
import { MailerCapture, TestAppConfig } from "../../layers/Test.ts"
import { Invitations } from "../../services/accounts/Invitations.ts"
import { KeyCacheInvalidation } from "../../services/accounts/KeyCacheInvalidation.ts"
import { Organizations } from "../../services/accounts/Organizations.ts"
import { ScratchDatabase } from "./database.ts"

export const Teams = Invitations.Default.pipe(
  Layer.provideMerge(Organizations.Default),
  Layer.provideMerge(KeyCacheInvalidation.Default),
  Layer.provideMerge(MailerCapture),
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)
