/**
 * Manifests and their hashes (DESIGN.md section 5; SPEC "On-chain anchoring" verification rule). The hash
 * vectors were checked with an independent Keccak-256 implementation (a from-scratch Python Keccak-f[1600]),
 * not only with viem.
 */
import { describe, expect, it } from "vitest"
import {
  basketOf,
  buildManifest,
  contentHash,
  jcs,
  type ManifestMember,
  metadataHash
} from "../domain/index/manifest.ts"
import { parseUsd18 } from "../domain/money.ts"

const gpt: ManifestMember = {
  modelKey: "openai/gpt-5",
  family: "openai.gpt",
  inputPrice18: parseUsd18("1.25"),
  outputPrice18: parseUsd18("10"),
  displayName: "GPT-5",
  providerKey: "openai",
  sdkId: "gpt-5"
}
const sonnet: ManifestMember = {
  modelKey: "anthropic/claude-sonnet-4.5",
  family: "anthropic.claude-sonnet",
  inputPrice18: parseUsd18("3"),
  outputPrice18: parseUsd18("15"),
  displayName: "Claude Sonnet 4.5",
  providerKey: "anthropic",
  sdkId: "claude-sonnet-4-5"
}
const manifest = buildManifest({ revisionVersion: 1, methodologyVersion: 1, members: [gpt, sonnet] })

describe("the manifest", () => {
  it("sorts models by modelKey and writes prices as usd18 integer strings", () => {
    expect(manifest.models.map((m) => m.modelKey)).toEqual(["anthropic/claude-sonnet-4.5", "openai/gpt-5"])
    expect(manifest.models[1]).toEqual({
      modelKey: "openai/gpt-5",
      family: "openai.gpt",
      inputPrice: "1250000000000000000",
      outputPrice: "10000000000000000000",
      displayName: "GPT-5",
      providerKey: "openai",
      sdkId: "gpt-5"
    })
    expect(manifest.referenceWorkload).toEqual({ inputTokens: 1000, outputTokens: 500 })
  })

  it("canonicalizes by RFC 8785 (sorted keys, no whitespace)", () => {
    expect(jcs(manifest)).toBe(
      '{"methodologyVersion":1,"models":[{"displayName":"Claude Sonnet 4.5","family":"anthropic.claude-sonnet",' +
        '"inputPrice":"3000000000000000000","modelKey":"anthropic/claude-sonnet-4.5","outputPrice":"15000000000000000000",' +
        '"providerKey":"anthropic","sdkId":"claude-sonnet-4-5"},{"displayName":"GPT-5","family":"openai.gpt",' +
        '"inputPrice":"1250000000000000000","modelKey":"openai/gpt-5","outputPrice":"10000000000000000000",' +
        '"providerKey":"openai","sdkId":"gpt-5"}],"referenceWorkload":{"inputTokens":1000,"outputTokens":500},' +
        '"revisionVersion":1,"schemaVersion":1}'
    )
    expect(jcs({ b: [3, "é"], a: { d: 1.5, c: null } })).toBe('{"a":{"c":null,"d":1.5},"b":[3,"é"]}')
  })
})

describe("the hashes", () => {
  it("match the published vectors", () => {
    expect(metadataHash(manifest)).toBe("0x8a1aaa469d61508cd15d440623798ce8be9030927bfab639d1c8ed90c1a9ed85")
    expect(contentHash(manifest)).toBe("0x66e4523e5a3540095496118a02608fdb76adca2a3c9d901c6d59f58a154f5a70")
  })

  it("do not depend on the order members are given in", () => {
    const reordered = buildManifest({ revisionVersion: 1, methodologyVersion: 1, members: [sonnet, gpt] })
    expect(metadataHash(reordered)).toBe(metadataHash(manifest))
  })

  it("a display-only correction moves metadataHash and keeps contentHash", () => {
    const corrected = buildManifest({
      revisionVersion: 1,
      methodologyVersion: 1,
      members: [{ ...gpt, displayName: "GPT-5 (2025-08-07)", sdkId: "gpt-5-2025-08-07" }, sonnet]
    })
    expect(metadataHash(corrected)).not.toBe(metadataHash(manifest))
    expect(contentHash(corrected)).toBe(contentHash(manifest))
  })

  it("a price, a member or the methodology moves both", () => {
    const repriced = buildManifest({ revisionVersion: 1, methodologyVersion: 1, members: [{ ...gpt, inputPrice18: parseUsd18("1.2") }, sonnet] })
    const smaller = buildManifest({ revisionVersion: 1, methodologyVersion: 1, members: [gpt] })
    const method2 = buildManifest({ revisionVersion: 1, methodologyVersion: 2, members: [gpt, sonnet] })
    for (const other of [repriced, smaller, method2]) {
      expect(metadataHash(other)).not.toBe(metadataHash(manifest))
      expect(contentHash(other)).not.toBe(contentHash(manifest))
    }
  })

  it("the revision number is metadata, not content", () => {
    const second = buildManifest({ revisionVersion: 2, methodologyVersion: 1, members: [gpt, sonnet] })
    expect(metadataHash(second)).not.toBe(metadataHash(manifest))
    expect(contentHash(second)).toBe(contentHash(manifest))
  })

  it("the revision record's basket is {schemaVersion, models} of the manifest", () => {
    expect(basketOf(manifest)).toEqual({ schemaVersion: 1, models: manifest.models })
  })
})
