/**
 * A PROVIDERS_FILE for a suite that runs the exchange's services without the simulator: one vendor, `acme`, in the
 * OpenAI format at an address nothing listens on (the suite scripts the vendor or never calls it), with these keys.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** `keys`: one YAML flow mapping per key, e.g. `{ secret: acme-first, rpm: 2 }`. Answers the file's path. */
export const acmeProvidersFile = (keys: ReadonlyArray<string>): string => {
  const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-providers-")), "providers.yaml")
  Fs.writeFileSync(
    file,
    ["providers:", "  - name: acme", "    format: openai-chat", "    baseUrl: http://127.0.0.1:9/v1", "    keys:", ...keys.map((k) => `      - ${k}`), ""].join("\n")
  )
  return file
}
