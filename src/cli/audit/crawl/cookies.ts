// --cookie-file: the Netscape cookies.txt format that curl, wget and browser extensions write. Each line:
// domain, include-subdomains (TRUE/FALSE), path, secure (TRUE/FALSE), expiry (Unix seconds, 0 for a
// session cookie), name, value, separated by tabs; "#HttpOnly_" before the domain marks an HttpOnly
// cookie; other lines starting with # are comments. Values are secrets: no message repeats one.
import { UsageError } from '../../shared/args'

export type Cookie = {
  /** Lower-case, without a leading dot. */
  domain: string
  includeSubdomains: boolean
  path: string
  secure: boolean
  /** Milliseconds since the epoch; null for a session cookie (kept for the run). */
  expiresAt: number | null
  name: string
  value: string
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/u
/** RFC 6265 cookie-octets, plus space and comma that servers send and browsers keep. */
const VALUE = /^[\x20\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e,]*$/u
const FLAG: Record<string, boolean> = { TRUE: true, FALSE: false }
const HTTP_ONLY = '#HttpOnly_'

/** The cookies of a cookies.txt text; `file` names it in the errors, with the line number. */
export function parseCookieFile(text: string, file: string): Cookie[] {
  const cookies: Cookie[] = []
  const lines = text.replace(/^\uFEFF/u, '').split(/\r?\n/u)
  for (const [index, raw] of lines.entries()) {
    const wrong = (why: string) => new UsageError(`--cookie-file ${file} line ${index + 1}: ${why}`)
    let line = raw
    if (line.startsWith(HTTP_ONLY)) line = line.slice(HTTP_ONLY.length)
    else if (line.startsWith('#') || line.trim() === '') continue
    const fields = line.split('\t')
    // curl writes a cookie with an empty value as six fields and a trailing tab; both are read.
    if (fields.length === 6) fields.push('')
    if (fields.length !== 7) throw wrong(`${fields.length} tab-separated fields, not 7 (domain, subdomains, path, secure, expiry, name, value)`)
    const [domainField, subdomains, path, secure, expiry, name, value] = fields as [string, string, string, string, string, string, string]
    const domain = domainField.trim().toLowerCase().replace(/^\./u, '')
    if (domain === '' || !/^[a-z0-9.:[\]-]+$/u.test(domain)) throw wrong('the domain is not a host name')
    if (!(subdomains in FLAG)) throw wrong('the second field (include subdomains) is neither TRUE nor FALSE')
    if (!path.startsWith('/')) throw wrong('the path does not start with /')
    if (!(secure in FLAG)) throw wrong('the fourth field (secure) is neither TRUE nor FALSE')
    if (!/^\d{1,16}$/u.test(expiry.trim())) throw wrong('the expiry is not a whole number of seconds')
    if (!TOKEN.test(name)) throw wrong('the cookie name is not a token')
    if (!VALUE.test(value)) throw wrong(`the value of ${name} holds a character a cookie cannot carry (a semicolon, quote, backslash or control character)`)
    const seconds = Number(expiry.trim())
    cookies.push({
      domain,
      includeSubdomains: FLAG[subdomains]!,
      path,
      secure: FLAG[secure]!,
      expiresAt: seconds === 0 ? null : seconds * 1000,
      name,
      value,
    })
  }
  return cookies
}

/** RFC 6265 path-match: the same path, or a prefix ending at a "/". */
function pathMatches(cookiePath: string, requestPath: string): boolean {
  if (requestPath === cookiePath) return true
  if (!requestPath.startsWith(cookiePath)) return false
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/'
}

/** The Cookie header for `url` at `now` (ms): the cookies whose domain, path, secure flag and expiry match; null when none. */
export function cookieHeader(cookies: readonly Cookie[], url: URL, now: number): string | null {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/gu, '')
  const matched = cookies.filter(
    (cookie) =>
      (host === cookie.domain || (cookie.includeSubdomains && host.endsWith(`.${cookie.domain}`))) &&
      pathMatches(cookie.path, url.pathname || '/') &&
      (!cookie.secure || url.protocol === 'https:') &&
      (cookie.expiresAt === null || cookie.expiresAt > now),
  )
  // Longer paths first, as RFC 6265 asks of user agents.
  matched.sort((a, b) => b.path.length - a.path.length)
  return matched.length === 0 ? null : matched.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ')
}
