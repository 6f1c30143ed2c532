/**
 * Model keys in paths (SPEC oracle behaviour 1): the canonical `<vendor>/<model>` or the bare model name, matched
 * case-insensitively. An unknown vendor, or a real model named under the wrong vendor, is a validation failure;
 * a well-formed key that names nothing is not found.
 */
import { Schema } from "effect"

/** The documented length of a model key in a path; longer keys are refused before any lookup. */
export const MODEL_KEY_MAX_LENGTH = 200

/**
 * A model key in a path, on every route that takes one: blank (or only spaces) and over-long keys are refused (422,
 * param `key`), whatever the route; anything else reaches the key lookup.
 */
const MODEL_KEY_DESCRIPTION = `\`<vendor>/<model>\` (the slash as %2F, or plain) or the bare model name; case-insensitive; 1-${MODEL_KEY_MAX_LENGTH} characters`

export const ModelKeyParam = Schema.String.pipe(
  Schema.filter((key) => key.trim() !== "" || "the model key is blank"),
  Schema.filter((key) => key.length <= MODEL_KEY_MAX_LENGTH || `the model key is longer than ${MODEL_KEY_MAX_LENGTH} characters`)
).annotations({
  description: MODEL_KEY_DESCRIPTION,
  jsonSchema: { type: "string", minLength: 1, maxLength: MODEL_KEY_MAX_LENGTH, description: MODEL_KEY_DESCRIPTION }
})
export type KeyResolution =
  | { readonly _tag: "Found"; readonly modelKey: string }
  | { readonly _tag: "NotFound"; readonly message: string }
  | { readonly _tag: "Invalid"; readonly message: string }

export interface KeyIndex {
  readonly resolve: (key: string) => KeyResolution
}

/** `vendors`: every vendor slug the catalog knows; `modelKeys`: the canonical ids the caller can answer for. */
export const makeKeyIndex = (vendors: Iterable<string>, modelKeys: Iterable<string>, knownModels: Iterable<string> = modelKeys): KeyIndex => {
  const vendorSet = new Set([...vendors].map((v) => v.toLowerCase()))
  const answerable = new Map([...modelKeys].map((k) => [k.toLowerCase(), k]))
  const byBareName = new Map<string, Array<string>>()
  for (const key of knownModels) {
    const bare = key.slice(key.indexOf("/") + 1).toLowerCase()
    byBareName.set(bare, [...(byBareName.get(bare) ?? []), key])
  }
  return {
    resolve: (raw) => {
      const key = raw.trim().toLowerCase()
      if (key === "" || key.length > MODEL_KEY_MAX_LENGTH) return { _tag: "Invalid", message: `the model key must be 1-${MODEL_KEY_MAX_LENGTH} characters` }
      const slash = key.indexOf("/")
      if (slash >= 0) {
        const vendor = key.slice(0, slash)
        const bare = key.slice(slash + 1)
        if (!vendorSet.has(vendor)) return { _tag: "Invalid", message: `unknown vendor "${vendor}"` }
        const found = answerable.get(key)
        if (found !== undefined) return { _tag: "Found", modelKey: found }
        const elsewhere = (byBareName.get(bare) ?? []).find((k) => !k.toLowerCase().startsWith(`${vendor}/`))
        if (elsewhere !== undefined) return { _tag: "Invalid", message: `"${bare}" is not a ${vendor} model; did you mean ${elsewhere}?` }
        return { _tag: "NotFound", message: `no model ${key}` }
      }
      const candidates = (byBareName.get(key) ?? []).filter((k) => answerable.has(k.toLowerCase()))
      if (candidates.length === 1) return { _tag: "Found", modelKey: candidates[0]! }
      if (candidates.length > 1) return { _tag: "Invalid", message: `"${key}" is ambiguous: name one of ${candidates.join(", ")}` }
      return { _tag: "NotFound", message: `no model ${key}` }
    }
  }
}
