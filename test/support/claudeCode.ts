/**
 * Claude Code's requests as `npm run simulator:capture` recorded them (test/fixtures/claude-code, texts redacted): the
 * path, the headers that matter and the body, for the suites that replay them.
 */
import * as Fs from "node:fs"

export interface CapturedRequest {
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: Record<string, any>
}

export const capturedRequest = (name: "turn1" | "turn2"): CapturedRequest =>
  JSON.parse(Fs.readFileSync(new URL(`../fixtures/claude-code/${name}.json`, import.meta.url), "utf8")) as CapturedRequest
