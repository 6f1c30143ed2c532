/**
 * The generated API documents, built once per process from the API definitions and configuration.
 */
import { Effect } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import { makeApiDocuments } from "./apiDocuments.ts"

export class ApiDocumentsService extends Effect.Service<ApiDocumentsService>()("ApiDocumentsService", {
  effect: Effect.map(AppConfig, (config) => makeApiDocuments({ publicBaseUrl: config.publicBaseUrl })),
  dependencies: [AppConfig.Default]
}) {}
