/**
 * `compute-exchange/api`: the HttpApi definitions the service serves and documents (the OpenAPI documents are
 * generated from them), and a typed client over them. `makeClient(baseUrl)` needs an `HttpClient`
 * (`FetchHttpClient.layer` from @effect/platform, or NodeHttpClient's); every endpoint is a method that encodes the
 * request and decodes the answer with the same Schemas the server uses, failures included.
 */
import { HttpApiClient } from "@effect/platform"
import { InferenceApi } from "../api/InferenceApi.ts"
import { PublicApi } from "../api/PublicApi.ts"

export { InferenceApi, PublicApi }

/** A typed client of everything but inference (oracle, accounts, keys, organizations, points...). */
export const makeClient = (baseUrl: string) => HttpApiClient.make(PublicApi, { baseUrl })

/** A typed client of the two inference endpoints. */
export const makeInferenceClient = (baseUrl: string) => HttpApiClient.make(InferenceApi, { baseUrl })
