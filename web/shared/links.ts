/**
 * Links between the public pages and to the API, relative to the page's `<base>` (the service's root, written by
 * the server for the page's depth), so every link is a real link and a path prefix in front of the service works.
 */
import { modelPath, revisionPath } from "../../domain/oracle/publicPages.ts"

/** An API resource (a download, a manifest): `./v1/oracle/catalog`. */
export const apiHref = (path: string) => `.${path}`

export const modelHref = (modelKey: string) => `.${modelPath(modelKey)}`

export const revisionHref = (version: number) => `.${revisionPath(version)}`
