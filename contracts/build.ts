/**
 * `npm run build:contracts`: recompiles the registry and rewrites the committed artifact.
 */
import * as Fs from "node:fs"
import { ARTIFACT_PATH, compileRegistry } from "./compile.ts"

const started = Date.now()
console.log("compiling contracts/OracleRegistry.sol with solc-js...")
const artifact = compileRegistry()
Fs.writeFileSync(ARTIFACT_PATH, `${JSON.stringify(artifact, null, 2)}\n`)
console.log(
  `wrote ${ARTIFACT_PATH} (${Object.keys(artifact.contracts).join(", ")}; solc ${artifact.compiler}) in ${Date.now() - started} ms`
)
