/**
 * The fixture price cards under test/fixtures/catalog, checked and ready for governance tests.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { PriceCard } from "../../domain/catalog/card.ts"
import { parseCard } from "../../services/oracle/CardSources.ts"

export const fixturesDir = Path.resolve(import.meta.dirname, "../fixtures/catalog")

export const loadFixtureCard = (name: string): PriceCard => {
  const file = Path.join(fixturesDir, "cards", name)
  const outcome = parseCard(file, Fs.readFileSync(file, "utf8"))
  if (outcome._tag !== "Read") throw new Error(`fixture ${name} does not check: ${JSON.stringify(outcome)}`)
  return outcome.card
}

export const at = (iso: string) => new Date(iso.length === 10 ? `${iso}T00:00:00Z` : iso)
