/**
 * Compiles the contracts with solc-js (no native solc on this machine), resolving OpenZeppelin imports from
 * node_modules. The same functions build the committed artifacts and, in tests, check them.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"

const require = createRequire(import.meta.url)

interface Solc {
  version: () => string
  compile: (input: string, callbacks: { import: (path: string) => { contents: string } | { error: string } }) => string
}

/**
 * solc-js, loaded on first compile: the service imports this module only to read the committed artifacts, and loading
 * the compiler (an emscripten build) would cost it a few hundred MB of memory it never uses.
 */
let loadedSolc: Solc | undefined
const solc = (): Solc => (loadedSolc ??= require("solc") as Solc)

export const contractsDir = Path.dirname(new URL(import.meta.url).pathname)

/**
 * The committed artifacts, one per deployment: each holds its contracts and the ERC-1967 proxy they are deployed
 * behind, so one file says everything about the code a deployment's addresses must hold. Each is compiled on its
 * own, so adding a contract to one never changes the bytes of another.
 */
export const ARTIFACTS = {
  registry: { file: "OracleRegistry.json", sources: ["OracleRegistry.sol", "Proxy.sol"], contracts: ["OracleRegistry", "ERC1967Proxy"] },
  funding: {
    file: "Funding.json",
    sources: ["Treasury.sol", "CreditToken.sol", "Proxy.sol"],
    contracts: ["Treasury", "CreditToken", "ERC1967Proxy"]
  }
} as const

export type ArtifactName = keyof typeof ARTIFACTS

export const artifactPath = (name: ArtifactName) => Path.join(contractsDir, ARTIFACTS[name].file)

export const ARTIFACT_PATH = artifactPath("registry")

export const COMPILER_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } }
} as const

export interface CompiledContract {
  readonly abi: ReadonlyArray<Record<string, unknown>>
  readonly bytecode: `0x${string}`
  readonly deployedBytecode: `0x${string}`
}

export interface Artifact {
  readonly compiler: string
  readonly settings: typeof COMPILER_SETTINGS
  readonly contracts: Record<string, CompiledContract>
}

const resolveImport = (path: string) => {
  try {
    return { contents: Fs.readFileSync(require.resolve(path), "utf8") }
  } catch {
    const local = Path.join(contractsDir, path)
    return Fs.existsSync(local) ? { contents: Fs.readFileSync(local, "utf8") } : { error: `not found: ${path}` }
  }
}

/** Compiles the given source files (paths relative to contracts/) and returns the named contracts. */
export const compile = (files: ReadonlyArray<string>, names: ReadonlyArray<string>): Artifact => {
  const sources = Object.fromEntries(
    files.map((file) => [file, { content: Fs.readFileSync(Path.join(contractsDir, file), "utf8") }])
  )
  const output = JSON.parse(
    solc().compile(JSON.stringify({ language: "Solidity", sources, settings: COMPILER_SETTINGS }), { import: resolveImport })
  ) as {
    errors?: Array<{ severity: string; formattedMessage: string }>
    contracts: Record<string, Record<string, { abi: Array<Record<string, unknown>>; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  // Sorted by name, so the artifact's bytes do not depend on solc's output order.
  const contracts: Record<string, CompiledContract> = {}
  for (const byName of Object.values(output.contracts)) {
    for (const [name, contract] of Object.entries(byName)) {
      if (!names.includes(name)) continue
      contracts[name] = {
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}`
      }
    }
  }
  const sorted = Object.fromEntries(Object.entries(contracts).sort(([a], [b]) => a.localeCompare(b)))
  return { compiler: solc().version(), settings: COMPILER_SETTINGS, contracts: sorted }
}

/** Compiles what the committed artifact `name` holds. */
export const compileArtifact = (name: ArtifactName): Artifact => compile(ARTIFACTS[name].sources, ARTIFACTS[name].contracts)

/** The registry and the proxy it is deployed behind: what the committed OracleRegistry.json holds. */
export const compileRegistry = () => compileArtifact("registry")

export const loadArtifact = (name: ArtifactName = "registry"): Artifact =>
  JSON.parse(Fs.readFileSync(artifactPath(name), "utf8")) as Artifact
