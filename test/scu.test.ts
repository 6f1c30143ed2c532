/**
 * SCU arithmetic (SPEC "Price index" 4-7, DESIGN.md section 4). Expected values were computed independently with
 * Python's exact integers (binary-search integer root), not with this code.
 */
import { describe, expect, it } from "vitest"
import { computeIndex18, floorNthRoot, scu18 } from "../domain/index/scu.ts"
import { formatUsd18, parseUsd18 } from "../domain/money.ts"

const member = (input: string, output: string) => ({ inputPrice18: parseUsd18(input), outputPrice18: parseUsd18(output) })

describe("floorNthRoot", () => {
  it("is the largest integer whose n-th power does not exceed x", () => {
    expect(floorNthRoot(0n, 3)).toBe(0n)
    expect(floorNthRoot(1n, 22)).toBe(1n)
    expect(floorNthRoot(26n, 3)).toBe(2n)
    expect(floorNthRoot(27n, 3)).toBe(3n)
    expect(floorNthRoot(28n, 3)).toBe(3n)
    expect(floorNthRoot(10n ** 36n, 2)).toBe(10n ** 18n)
    expect(floorNthRoot(10n ** 36n - 1n, 2)).toBe(10n ** 18n - 1n)
    expect(floorNthRoot(12345n, 1)).toBe(12345n)
  })

  it("holds its defining inequality on large powers", () => {
    for (const n of [2, 3, 7, 18, 22]) {
      for (const x of [2n ** 400n + 12345n, 3n ** 300n - 1n, 10n ** 354n + 987654321n]) {
        const r = floorNthRoot(x, n)
        expect(r ** BigInt(n) <= x).toBe(true)
        expect((r + 1n) ** BigInt(n) > x).toBe(true)
      }
    }
  })

  it("refuses a non-positive degree or a negative radicand", () => {
    expect(() => floorNthRoot(8n, 0)).toThrow(RangeError)
    expect(() => floorNthRoot(-8n, 3)).toThrow(RangeError)
  })
})

describe("scu18", () => {
  it("with N = 1 is the member's reference-workload cost", () => {
    // 3 x 0.001 + 15 x 0.0005 = 0.0105 USD
    expect(formatUsd18(scu18([member("3", "15")]))).toBe("0.0105")
  })

  it("reproduces the worked example of docs/methodology.md", () => {
    // costs 0.0105, 0.00625, 0.00045; (2.953125e-8)^(1/3) = 0.003090963974856417... floored at 18 decimals
    const scu = scu18([member("3", "15"), member("1.25", "10"), member("0.15", "0.6")])
    expect(scu).toBe(3090963974856417n)
    expect(formatUsd18(scu)).toBe("0.003090963974856417")
  })

  it("with N = 22 and prices of 15 or more decimals takes the exact root of the 354-digit product", () => {
    const members: Array<[string, string]> = [
      ["0.000000000000000", "1.0000000000000000"], ["7.987654321012345", "12.0123456789098765"],
      ["1.975308642024690", "23.0246913578197530"], ["8.962962963037035", "5.0370370367296295"],
      ["2.950617284049380", "16.0493827156395060"], ["9.938271605061725", "27.0617283945493825"],
      ["3.925925926074070", "9.0740740734592590"], ["10.913580247086415", "20.0864197523691355"],
      ["4.901234568098760", "2.0987654312790120"], ["11.888888889111105", "13.1111111101888885"],
      ["5.0876543210123450", "24.1234567890987650"], ["12.1864197531135795", "6.1358024680086415"],
      ["6.2851851852148140", "17.1481481469185180"], ["0.3839506173160485", "28.1604938258283945"],
      ["7.4827160494172830", "10.1728395047382710"], ["1.5814814815185175", "21.1851851836481475"],
      ["8.6802469136197520", "3.1975308625580240"], ["2.7790123457209865", "14.2098765414679005"],
      ["9.8777777778222210", "25.2222222203777770"], ["3.9765432099234555", "7.2345678992876535"],
      ["10.0753086420246900", "18.2469135781975300"], ["4.1740740741259245", "29.2592592571074065"]
    ]
    expect(scu18(members.map(([i, o]) => member(i, o)))).toBe(11658978592817345n)
  })

  it("does not depend on the members' order", () => {
    const a = [member("3", "15"), member("1.25", "10"), member("0.15", "0.6")]
    expect(scu18([...a].reverse())).toBe(scu18(a))
  })

  it("is undefined for an empty basket", () => {
    expect(() => scu18([])).toThrow(RangeError)
  })
})

describe("computeIndex18", () => {
  it("is exactly 100 at genesis and rises as the SCU falls", () => {
    const baseline = 3090963974856417n as ReturnType<typeof scu18>
    expect(computeIndex18(baseline, baseline)).toBe(100n * 10n ** 18n)
    // baseline 0.0105 against 0.003090963974856417: 339.699850448362188895
    expect(computeIndex18(10500000000000000n as typeof baseline, baseline)).toBe(339699850448362188895n)
  })
})
