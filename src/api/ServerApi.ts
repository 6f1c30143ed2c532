/**
 * Everything one server process serves: the public API and the inference API side by side (each with its own
 * document), the maintainer API and the public web pages, which have none.
 */
import { HttpApi } from "@effect/platform"
import { AdminApi } from "./AdminApi.ts"
import { InferenceApi } from "./InferenceApi.ts"
import { PagesApi } from "./PagesApi.ts"
import { PublicApi } from "./PublicApi.ts"

export class ServerApi extends HttpApi.make("server").addHttpApi(PublicApi).addHttpApi(InferenceApi).addHttpApi(AdminApi).addHttpApi(PagesApi) {}
