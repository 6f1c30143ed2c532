/**
 * The Responses format's tools into canonical tool definitions: functions as they are, a `namespace`'s tools flattened
 * to `<namespace>__<name>`, a freeform `custom` tool as a function taking one string `input` (its grammar written into
 * the parameter's description), built-in tools dropped by name (`tools[web_search]`). Pure.
 */
import { Either } from "effect"
import { ValidationFailed } from "../../errors.ts"
import type { ToolChoice, ToolDefinition } from "../canonical.ts"
import type { RequestTool, ResponsesRequest } from "../wire/openaiResponses.ts"

/** A flattened tool's origin, to name its calls as the client declared them. */
export interface ToolOrigin {
  readonly name: string
  readonly namespace?: string | undefined
  /** A `custom` (freeform) tool: its call carries `input` text, not JSON arguments. */
  readonly custom: boolean
}

const refuse = (param: string, message: string) => new ValidationFailed({ message, param })

const NO_PARAMETERS = { type: "object", properties: {} }
const NAMESPACE_SEPARATOR = "__"

/** A freeform tool as a function: the model writes the tool's input as one string. */
const customParameters = (format: { readonly [key: string]: unknown } | undefined) => ({
  type: "object",
  properties: {
    input: {
      type: "string",
      description: format !== undefined && format.type === "grammar"
        ? `The tool's input, following this ${String(format.syntax ?? "")} grammar:\n${String(format.definition ?? "")}`
        : "The tool's input as free text."
    }
  },
  required: ["input"],
  additionalProperties: false
})

export interface ToolsOutcome {
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly origins: Map<string, ToolOrigin>
  readonly dropped: ReadonlyArray<string>
}

export const toolsOf = (declared: ReadonlyArray<RequestTool>): Either.Either<ToolsOutcome, ValidationFailed> => {
  const tools: Array<ToolDefinition> = []
  const origins = new Map<string, ToolOrigin>()
  const dropped = new Set<string>()
  const add = (
    tool: { readonly type: string; readonly name: string; readonly description?: string | null | undefined; readonly parameters?: unknown; readonly format?: { readonly [key: string]: unknown } | undefined; readonly defer_loading?: boolean | undefined },
    namespace: string | undefined,
    param: string
  ): ValidationFailed | undefined => {
    const name = namespace === undefined ? tool.name : `${namespace}${NAMESPACE_SEPARATOR}${tool.name}`
    if (name.length > 64) return refuse(param, `The flattened tool name ${JSON.stringify(name)} exceeds 64 characters.`)
    if (tools.some((t) => t.name === name)) return refuse(param, `duplicates the name of an earlier tool (${name})`)
    const custom = tool.type === "custom"
    if (tool.defer_loading !== undefined) dropped.add("tools[].defer_loading")
    tools.push({
      name,
      ...(tool.description != null && tool.description !== "" ? { description: tool.description } : {}),
      parameters: custom ? customParameters(tool.format) : ((tool.parameters ?? NO_PARAMETERS) as { readonly [key: string]: unknown })
    })
    if (custom || namespace !== undefined) origins.set(name, { name: tool.name, namespace, custom })
    return undefined
  }
  for (const [i, tool] of declared.entries()) {
    switch (tool.type) {
      case "function":
      case "custom": {
        const refusal = add(tool, undefined, `tools.${i}.name`)
        if (refusal !== undefined) return Either.left(refusal)
        break
      }
      case "namespace":
        for (const [j, inner] of tool.tools.entries()) {
          const refusal = add(inner, tool.name, `tools.${i}.tools.${j}.name`)
          if (refusal !== undefined) return Either.left(refusal)
        }
        break
      default:
        dropped.add(`tools[${tool.type}]`)
    }
  }
  return Either.right({ tools, origins, dropped: [...dropped] })
}

/** The canonical name of a tool the client names (a namespace's tool by its flattened name). */
export const flattened = (name: string, namespace: string | undefined) =>
  namespace === undefined || namespace === "" ? name : `${namespace}${NAMESPACE_SEPARATOR}${name}`

export const toolChoiceOf = (
  choice: ResponsesRequest["tool_choice"],
  tools: ReadonlyArray<ToolDefinition>
): Either.Either<ToolChoice | undefined, ValidationFailed> => {
  if (choice == null) return Either.right(undefined)
  if (typeof choice === "string") return Either.right({ type: choice })
  if (!tools.some((tool) => tool.name === choice.name)) {
    return Either.left(refuse("tool_choice.name", `tool_choice names ${JSON.stringify(choice.name)}, which is not in tools.`))
  }
  return Either.right({ type: "tool", name: choice.name })
}
