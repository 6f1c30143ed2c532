/**
 * Disposable e-mail domains (SPEC "Referral rules": optional): the list an operator configures
 * (DISPOSABLE_EMAIL_DOMAINS_FILE, default data/accounts/disposable-domains.txt) and the test of an address against it.
 * An address is disposable when its domain, or any parent of it, is listed: `mailinator.com` covers
 * `x.mailinator.com`. Pure: services/accounts/disposableDomains.ts reads the file, SignIn applies the rule.
 */
import { Either } from "effect"

export type DisposableDomains = ReadonlySet<string>

/** The message of the 422 naming `email`. */
export const DISPOSABLE_EMAIL_MESSAGE = "disposable e-mail addresses are not accepted"

/** Lower-case, without surrounding spaces or a trailing root dot. */
const normalizeDomain = (domain: string): string => domain.trim().toLowerCase().replace(/\.+$/, "")

/** A host name as lists write it: dot-separated non-empty labels, no spaces, no `@`, `/`, `,` or `:`. */
const isDomain = (domain: string): boolean =>
  domain.length <= 253 && !/[\s@/,:]/.test(domain) && domain.split(".").every((label) => label.length > 0 && label.length <= 63)

/**
 * One domain per line, any case; `#` starts a comment (whole line or after the domain); blank lines are ignored.
 * A line that is not a domain (`a@b.com`, `a.com, b.com`) is refused with its line number, so a pasted list in
 * another format is not taken silently as refusing nothing.
 */
export const parseDisposableDomains = (text: string): Either.Either<DisposableDomains, string> => {
  const domains = new Set<string>()
  const lines = text.split(/\r?\n/)
  for (const [index, line] of lines.entries()) {
    const hash = line.indexOf("#")
    const domain = normalizeDomain(hash < 0 ? line : line.slice(0, hash))
    if (domain === "") continue
    if (!isDomain(domain)) return Either.left(`line ${index + 1}: "${line.trim()}" is not a domain (one domain per line)`)
    domains.add(domain)
  }
  return Either.right(domains)
}

/** The address's domain (after its last `@`) or one of its parents is listed; case-insensitive. */
export const isDisposable = (email: string, domains: DisposableDomains): boolean => {
  if (domains.size === 0) return false
  const at = email.lastIndexOf("@")
  if (at < 0) return false
  const labels = normalizeDomain(email.slice(at + 1)).split(".")
  for (let i = 0; i < labels.length; i++) {
    if (domains.has(labels.slice(i).join("."))) return true
  }
  return false
}
