/**
 * `npm run build:contracts`: recompiles every contract and rewrites the committed artifacts.
 */
import * as Fs from "node:fs"
import { type ArtifactName, ARTIFACTS, artifactPath, compileArtifact } from "./compile.ts"

for (const name of Object.keys(ARTIFACTS) as Array<ArtifactName>) {
  const started = Date.now()
  console.log(`compiling ${ARTIFACTS[name].sources.map((source) => `contracts/${source}`).join(", ")} with solc-js...`)
  const artifact = compileArtifact(name)
  Fs.writeFileSync(artifactPath(name), `${JSON.stringify(artifact, null, 2)}\n`)
  console.log(
    `wrote ${artifactPath(name)} (${Object.keys(artifact.contracts).join(", ")}; solc ${artifact.compiler}) in ${Date.now() - started} ms`
  )
}
