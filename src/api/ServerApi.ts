/**
 * Everything one server process serves: the public API and the inference API side by side.
 */
import { HttpApi } from "@effect/platform"
import { InferenceApi } from "./InferenceApi.ts"
import { PublicApi } from "./PublicApi.ts"

export class ServerApi extends HttpApi.make("server").addHttpApi(PublicApi).addHttpApi(InferenceApi) {}
