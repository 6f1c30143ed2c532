/**
 * The request log, one bill, its stored response, and the activity: whose account (AccountReadAuth), decode, call
 * GenerationLogs, Generations or Responses, encode (wei as digit strings).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { NotFound } from "../../domain/errors.ts"
import { LOG_PAGE_DEFAULT } from "../../domain/exchange/logs.ts"
import { type Figures, GenerationLogs, type LogRow } from "../../services/exchange/GenerationLogs.ts"
import { type GenerationRow, Generations } from "../../services/exchange/Generations.ts"
import { Responses } from "../../services/exchange/Responses.ts"
import { CurrentReader } from "../../services/accounts/CurrentIdentity.ts"
import type { GenerationSummary, GenerationView } from "../api/GenerationsApi.ts"
import { ServerApi } from "../api/ServerApi.ts"
import { AccountReadAuthLive } from "../http/accountReadAuth.ts"

export const generationView = (row: GenerationRow): typeof GenerationView.Type => ({
  id: row.id,
  object: "generation",
  createdAt: row.createdAt.toISOString(),
  settledAt: row.settledAt.toISOString(),
  status: row.status,
  stream: row.stream,
  format: row.inboundFormat,
  modelRequested: row.modelRequested,
  modelUsed: row.modelUsed,
  provider: row.provider,
  chooser: row.chooser,
  usage: row.usage,
  bill: { ...row.bill, chargeWei: row.chargeWei.toString(), holdWei: row.holdWei.toString() },
  attempts: row.attempts
})

const summaryView = (row: LogRow): typeof GenerationSummary.Type => ({
  id: row.id,
  createdAt: row.createdAt.toISOString(),
  status: row.status,
  stream: row.stream,
  format: row.inboundFormat,
  modelRequested: row.modelRequested,
  modelUsed: row.modelUsed,
  fallback: row.modelUsed !== row.modelRequested,
  provider: row.provider,
  keyId: row.apiKeyId,
  usage: row.usage,
  chargeWei: row.chargeWei.toString()
})

const figuresView = (figures: Figures) => ({ ...figures, chargeWei: figures.chargeWei.toString() })

const accountId = Effect.map(CurrentReader, (reader) => reader.accountId)

export const GenerationsHandlers = HttpApiBuilder.group(ServerApi, "generations", (handlers) =>
  Effect.gen(function* () {
    const generations = yield* Generations
    const logs = yield* GenerationLogs
    const responses = yield* Responses
    return handlers
      .handle("listGenerations", ({ urlParams }) =>
        Effect.flatMap(accountId, (id) =>
          Effect.map(logs.list(id, { ...urlParams, limit: urlParams.limit ?? LOG_PAGE_DEFAULT }), (page) => ({
            object: "list" as const,
            data: page.rows.map(summaryView),
            nextCursor: page.nextCursor
          }))
        )
      )
      .handle("generation", ({ path }) =>
        Effect.flatMap(accountId, (id) =>
          Effect.flatMap(
            generations.find(id, path.id),
            Option.match({
              onNone: () => Effect.fail(new NotFound({ message: `No generation ${path.id} on this account.` })),
              onSome: (row) => Effect.succeed(generationView(row))
            })
          )
        )
      )
      .handle("generationResponse", ({ path }) => Effect.flatMap(accountId, (id) => responses.ofRequest(id, path.id)))
  })
).pipe(Layer.provide(AccountReadAuthLive))

export const ActivityHandlers = HttpApiBuilder.group(ServerApi, "activity", (handlers) =>
  Effect.gen(function* () {
    const logs = yield* GenerationLogs
    return handlers.handle("activity", ({ urlParams }) =>
      Effect.flatMap(accountId, (id) =>
        Effect.map(logs.activity(id, { ...urlParams, by: urlParams.by ?? "model" }), (activity) => ({
          object: "activity" as const,
          by: activity.by,
          from: activity.window.from.toISOString(),
          to: activity.window.to.toISOString(),
          days: activity.days.map((day) => ({ ...figuresView(day), day: day.day })),
          groups: activity.groups.map((group) => ({ ...figuresView(group), group: group.group, label: group.label })),
          series: activity.series.map((cell) => ({ ...figuresView(cell), day: cell.day, group: cell.group }))
        }))
      )
    )
  })
).pipe(Layer.provide(AccountReadAuthLive))
