/**
 * Numbers as the pages show them. Money is exact: wei and usd18 arrive as digit strings and are formatted with
 * bigint arithmetic, never through a float. Times are UTC and say so.
 */

/** `digits` scaled by 10^decimals, as a decimal string with at most `maxFraction` places (truncated, not rounded). */
export const formatScaled = (digits: string, decimals = 18, maxFraction = decimals): string => {
  const negative = digits.startsWith("-")
  const value = BigInt(negative ? digits.slice(1) : digits)
  const scale = 10n ** BigInt(decimals)
  const whole = value / scale
  const fraction = (value % scale).toString().padStart(decimals, "0").slice(0, maxFraction).replace(/0+$/, "")
  const wholeText = whole.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return `${negative ? "-" : ""}${wholeText}${fraction === "" ? "" : `.${fraction}`}`
}

/** A decimal string ("1", "0.5", "1e-7" excluded) as an integer scaled by 10^decimals, exactly. */
export const parseScaled = (text: string, decimals = 18): bigint => {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim())
  if (match === null) throw new Error(`not a plain decimal: ${text}`)
  const fraction = (match[2] ?? "").padEnd(decimals, "0").slice(0, decimals)
  return BigInt(match[1]!) * 10n ** BigInt(decimals) + BigInt(fraction === "" ? "0" : fraction)
}

/**
 * A JSON number the API sends (a USD price per million tokens, an SCU) shown exactly as sent: its shortest decimal
 * form, expanded out of exponent notation, with no arithmetic on it.
 */
export const plainNumber = (value: number): string => {
  const text = String(value)
  if (!/e/i.test(text)) return text
  const [mantissa, exponentText] = text.toLowerCase().split("e") as [string, string]
  const exponent = Number(exponentText)
  const negative = mantissa.startsWith("-")
  const [intPart, fracPart = ""] = (negative ? mantissa.slice(1) : mantissa).split(".") as [string, string?]
  const digits = intPart + fracPart
  const point = intPart.length + exponent
  const body =
    point <= 0 ? `0.${"0".repeat(-point)}${digits}` : point >= digits.length ? digits + "0".repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`
  return `${negative ? "-" : ""}${body}`
}

/** Wei per million tokens at the peg (USD per credit, a decimal) as USD per million, exactly: wei x peg / 10^18. */
export const weiToUsd = (wei: string, pegUsd: number, maxFraction = 6): string => {
  const peg18 = parseScaled(plainNumber(pegUsd))
  return formatScaled(((BigInt(wei) * peg18) / 10n ** 18n).toString(), 18, maxFraction)
}

const pad = (n: number) => String(n).padStart(2, "0")

/** `2026-11-25 14:03 UTC` */
export const utc = (iso: string): string => {
  const d = new Date(iso)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`
}

/** `2026-11-25` (UTC) */
export const utcDate = (iso: string): string => utc(iso).slice(0, 10)

/** How long ago, in words: `3 h ago`, `2 d ago`. */
export const ago = (iso: string, now: number): string => {
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000))
  if (seconds < 90) return `${seconds} s ago`
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`
  return `${Math.round(seconds / 86400)} d ago`
}

/** A relative change in percent with its sign, 2 decimals: `+1.25 %`. Not money: a ratio of index levels. */
export const percentChange = (from: number, to: number): string => {
  const change = ((to - from) / from) * 100
  return `${change > 0 ? "+" : change < 0 ? "−" : "±"}${Math.abs(change).toFixed(2)} %`
}

export const shortHash = (hash: string) => `${hash.slice(0, 10)}…${hash.slice(-8)}`

/** Rows as RFC 4180 CSV, for the download beside each chart and table. */
export const toCsv = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number | null>>): string => {
  const cell = (value: string | number | null) => {
    const text = value === null ? "" : String(value)
    return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
  }
  return [header, ...rows].map((row) => row.map(cell).join(",")).join("\r\n") + "\r\n"
}

export const csvHref = (csv: string) => `data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`
