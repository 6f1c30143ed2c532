/**
 * The web pages (DESIGN.md section 13): the public pages rendered on the server (the index at `/`, the model browser
 * at `/models`, a page per model at `/models/<vendor>/<model>`, `/revisions` and a page per revision, `/methodology`),
 * their `/sitemap.xml` and `/robots.txt`; the signed-in console under `/console` (one shell for every route of it);
 * and their hashed assets. Served by the service itself; not part of either API document.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFound } from "../../domain/errors.ts"
import { errorWire } from "../http/errorEnvelope.ts"

const Html = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" }))
const Xml = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/xml" }))
const Text = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain" }))
const Asset = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/octet-stream" }))

/** An asset's file name as the build writes it: `main-ABCD1234.js`, `chunk-….js`, `main-….css`. */
const assetParam = HttpApiSchema.param("file", Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]+\.(js|css|woff2|svg|png)$/)))

export class PagesGroup extends HttpApiGroup.make("pages")
  .add(HttpApiEndpoint.get("index", "/").addSuccess(Html))
  .add(HttpApiEndpoint.get("models", "/models").addSuccess(Html))
  .add(HttpApiEndpoint.get("model", "/models/*").addSuccess(Html))
  .add(HttpApiEndpoint.get("revisions", "/revisions").addSuccess(Html))
  .add(HttpApiEndpoint.get("revision", "/revisions/*").addSuccess(Html))
  .add(HttpApiEndpoint.get("methodology", "/methodology").addSuccess(Html))
  .add(HttpApiEndpoint.get("sitemap", "/sitemap.xml").addSuccess(Xml))
  .add(HttpApiEndpoint.get("robots", "/robots.txt").addSuccess(Text))
  .add(HttpApiEndpoint.get("console", "/console").addSuccess(Html))
  .add(HttpApiEndpoint.get("consoleRoute", "/console/*").addSuccess(Html))
  .add(HttpApiEndpoint.get("asset")`/assets/${assetParam}`.addSuccess(Asset).addError(errorWire(NotFound))) {}

export class PagesApi extends HttpApi.make("pages").add(PagesGroup).annotate(OpenApi.Title, "Compute Exchange web pages") {}
