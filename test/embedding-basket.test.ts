/**
 * Embedding models and the index (DESIGN.md section 10, "Agents' dialects"): they live on the price cards with an
 * input price only and never enter the SCU basket. Over the bundled price data, the whole history the service
 * publishes (HistoryReplay: the basket at every change instant since genesis, a revision whenever it changed) is
 * replayed here with and without the embedding models: the same revisions at the same instants, with the same
 * manifests, hashes and SCUs. Their arrival only adds instants at which the basket is looked at, and changes nothing.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parse as parseYaml } from "yaml"
import { describe, expect, it } from "vitest"
import type { PriceCard } from "../domain/catalog/card.ts"
import { checkDecisions, type FamilyDecision } from "../domain/catalog/decisions.ts"
import { basketChangeInstants, type BasketMember, DEFAULT_RULES, type ModelState, proposeBasket } from "../domain/catalog/governance.ts"
import { CURRENT_METHODOLOGY_VERSION, draftRevision, membersOfManifest, type RevisionDraft } from "../domain/index/revision.ts"
import { GENESIS } from "../services/chain/EmbeddedChain.ts"
import { parseCard } from "../services/oracle/CardSources.ts"
import { projectRoot } from "./support/process.ts"

const dataDir = Path.join(projectRoot, "data")
const bundledCards: ReadonlyArray<PriceCard> = Fs.readdirSync(Path.join(dataDir, "cards"))
  .filter((name) => name.endsWith(".yaml"))
  .sort()
  .map((name) => {
    const outcome = parseCard(`data/cards/${name}`, Fs.readFileSync(Path.join(dataDir, "cards", name), "utf8"))
    if (outcome._tag !== "Read") throw new Error(`data/cards/${name} does not check: ${JSON.stringify(outcome)}`)
    return outcome.card
  })
const decisionsOutcome = checkDecisions("data/decisions.yaml", parseYaml(Fs.readFileSync(Path.join(dataDir, "decisions.yaml"), "utf8"), { schema: "failsafe" }))
const decisions: ReadonlyArray<FamilyDecision> = decisionsOutcome._tag === "Right" ? decisionsOutcome.right : []

/** The cards as they were before the embedding models arrived: the same cards without them and their families. */
const withoutEmbeddings = (cards: ReadonlyArray<PriceCard>): ReadonlyArray<PriceCard> =>
  cards.map((card) => {
    const models = card.models.filter((m) => m.kind !== "embedding")
    const families = new Set(models.map((m) => m.family))
    return { ...card, models, families: card.families.filter((f) => families.has(f.key)) }
  })

const END = new Date("2026-11-28T00:00:00Z")

interface Replayed {
  readonly at: string
  readonly draft: RevisionDraft
}

/** What HistoryReplay publishes from these cards: a revision at every instant the basket changed, genesis to END. */
const replay = (cards: ReadonlyArray<PriceCard>) => {
  const families = cards.flatMap((card) => card.families)
  const states: Array<ModelState> = cards.flatMap((card) => card.models).map((card) => ({ card, deletedAt: null, live: true }))
  const instants = [...new Set([GENESIS, ...basketChangeInstants(states, decisions, DEFAULT_RULES)].map((t) => t.getTime()))]
    .filter((t) => t >= GENESIS.getTime() && t <= END.getTime())
    .sort((a, b) => a - b)
    .map((ms) => new Date(ms))
  const revisions: Array<Replayed> = []
  const members: Array<ReadonlyArray<string>> = []
  let previous: ReadonlyArray<BasketMember> = []
  for (const asOf of instants) {
    const proposal = proposeBasket({ asOf, families, models: states, decisions, rules: DEFAULT_RULES, previous })
    members.push(proposal.members.map((m) => m.modelKey))
    if (proposal.members.length === 0 || proposal.changes.length === 0) continue
    const draft = draftRevision({
      revisionVersion: revisions.length + 1,
      methodologyVersion: CURRENT_METHODOLOGY_VERSION,
      members: proposal.members,
      changes: proposal.changes
    })
    revisions.push({ at: asOf.toISOString(), draft })
    previous = membersOfManifest(draft.manifest, asOf)
  }
  return { instants, revisions, members }
}

const embeddingModels = bundledCards.flatMap((card) => card.models).filter((m) => m.kind === "embedding")

describe("the embedding models of the bundled cards", () => {
  it("are there, from several vendors, each with an input price only and its vectors", () => {
    expect(new Set(embeddingModels.map((m) => m.providerKey)).size).toBeGreaterThanOrEqual(3)
    expect(embeddingModels.map((m) => m.id)).toEqual(expect.arrayContaining(["openai/text-embedding-3-small", "openai/text-embedding-3-large", "openai/text-embedding-ada-002"]))
    for (const model of embeddingModels) {
      expect(model.embedding?.dimensions, model.id).toBeGreaterThan(0)
      for (const point of model.prices) {
        expect([point.output, point.cachedInput, point.cacheWrite5m, point.cacheWrite1h, point.reasoningOutput], model.id).toEqual([null, null, null, null, null])
        expect(point.contextTiers, model.id).toEqual([])
      }
    }
  })
})

describe("the basket and every revision, with and without the embedding models", () => {
  const withThem = replay(bundledCards)
  const before = replay(withoutEmbeddings(bundledCards))

  it("never hold a slot: at every instant the basket is looked at, no member is an embedding model", () => {
    const embeddingIds = new Set(embeddingModels.map((m) => m.id))
    expect(withThem.members.flat().filter((key) => embeddingIds.has(key))).toEqual([])
    const now = proposeBasket({
      asOf: END,
      families: bundledCards.flatMap((card) => card.families),
      models: bundledCards.flatMap((card) => card.models).map((card) => ({ card, deletedAt: null, live: true })),
      decisions,
      rules: DEFAULT_RULES,
      previous: []
    })
    for (const model of embeddingModels) {
      expect(now.excluded.find((e) => e.modelKey === model.id)?.reasons.join("; "), model.id).toContain("out of scope: a embedding model, not a text model")
    }
    // Their families are not reported as families missing a member.
    expect(now.familiesWithoutMember.filter((key) => embeddingModels.some((m) => m.family === key))).toEqual([])
  })

  it("add instants at which the basket is looked at, and not one revision: the same revisions at the same instants", () => {
    // Not vacuous: the embedding models' releases and price dates are instants the replay evaluates.
    expect(withThem.instants.length).toBeGreaterThan(before.instants.length)
    expect(before.revisions.length).toBeGreaterThan(10)
    console.log(`[embeddings] ${withThem.instants.length} instants with them, ${before.instants.length} without; ${withThem.revisions.length} revisions either way, the last ${withThem.revisions.at(-1)?.draft.metadataHash}`)
    const summary = (r: Replayed) => [r.draft.revisionVersion, r.at, r.draft.summary]
    expect(withThem.revisions.map(summary)).toEqual(before.revisions.map(summary))
  })

  it("leave every manifest, metadataHash, contentHash and SCU exactly as they were", () => {
    const anchored = (r: Replayed) => ({
      revisionVersion: r.draft.revisionVersion,
      at: r.at,
      manifestJcs: r.draft.manifestJcs,
      metadataHash: r.draft.metadataHash,
      contentHash: r.draft.contentHash,
      scu18: r.draft.scu18.toString(),
      changes: r.draft.changes
    })
    expect(withThem.revisions.map(anchored)).toEqual(before.revisions.map(anchored))
    // And no manifest names one of them.
    const manifests = withThem.revisions.map((r) => r.draft.manifestJcs).join("\n")
    for (const model of embeddingModels) expect(manifests, model.id).not.toContain(`"${model.id}"`)
  })
})
