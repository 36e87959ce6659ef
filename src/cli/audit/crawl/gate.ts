// Which addresses the audit may fetch, and what it sends them. The origins of the URLs named on the
// command line are the user's own request and may be anywhere (a site on loopback or an intranet can be
// audited); every other address (a redirect hop, a sitemap on another origin, a request a rendered page
// makes) must pass the service's own address rules (src/intake/address.ts) unless its host is named by
// --allow-private, as ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS names hosts for the service. A host is resolved
// once per run and its checked answers are what the fetcher connects to. --header and --cookie-file go
// to the audited origins only.
import type { CheckedAddress } from '../../../intake/hop'
import { DestinationRefused, resolveDestination, systemResolver } from '../../../intake/fetch'
import type { HostResolver } from '../../../intake/types'
import { type Cookie, cookieHeader } from './cookies'

/** What the render helper asks of each request Chromium makes. */
export type RequestGate = {
  /** null: the URL may be fetched; else why not. */
  check(url: URL): Promise<string | null>
  /** The private-page fields (--header, --cookie-file) for `url`: empty unless it is on an audited origin. */
  headersFor(url: URL): Record<string, string>
}

/** May be fetched: `pin` holds the checked addresses to connect to (null: the user's own origin, resolved as usual). */
export type Destination = { ok: true; pin: CheckedAddress[] | null } | { ok: false; reason: string }

export type SiteGate = RequestGate & {
  destination(url: URL): Promise<Destination>
  /** The URL is on one of the origins named on the command line. */
  isAudited(url: URL): boolean
}

/** Hosts whose checked answers are kept; past it the memo starts again (a crawl meets few hosts). */
const MAX_REMEMBERED_HOSTS = 1024
/** Schemes that reach no network: a rendered page may use them freely. */
const NO_NETWORK = new Set(['data:', 'blob:', 'about:'])

export type GateOptions = {
  /** The origins of the page URLs given (`https://host:port`). */
  auditedOrigins: Iterable<string>
  /** --allow-private: host names, IP addresses or CIDRs, matched as the service matches its allow-list. */
  allowPrivate: string[]
  headers: Record<string, string>
  cookies: readonly Cookie[]
  now: () => number
  resolve?: HostResolver
}

/** ws: and wss: reach the same origin as http: and https: (a rendered page's WebSocket). */
function originOf(url: URL): string {
  if (url.protocol === 'ws:' || url.protocol === 'wss:') return `${url.protocol === 'ws:' ? 'http:' : 'https:'}//${url.host}`
  return url.origin
}

export function createRequestGate(options: GateOptions): SiteGate {
  const audited = new Set(options.auditedOrigins)
  const resolve = options.resolve ?? systemResolver
  const policy = { allowPrivateHosts: options.allowPrivate, resolve }
  const remembered = new Map<string, Promise<Destination>>()
  const neverAborted = new AbortController().signal

  const isAudited = (url: URL) => audited.has(originOf(url))

  const lookUp = async (url: URL): Promise<Destination> => {
    try {
      return { ok: true, pin: await resolveDestination(url, policy, neverAborted, () => new Error('aborted')) }
    } catch (error) {
      if (!(error instanceof DestinationRefused)) return { ok: false, reason: `cannot check ${url.hostname}: ${(error as Error).message}` }
      if (error.kind === 'unresolvable') return { ok: false, reason: `cannot resolve ${url.hostname}` }
      // detail: "host → address (kind)"; the host is the user's own input, the address what DNS said.
      return {
        ok: false,
        reason: `refused before connecting: ${error.detail} is not a public address, and ${url.hostname} is not an audited origin (--allow-private ${url.hostname} allows it)`,
      }
    }
  }

  const destination = async (url: URL): Promise<Destination> => {
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return { ok: false, reason: `a ${url.protocol} address is not fetched` }
    if (isAudited(url)) return { ok: true, pin: null }
    if (url.username !== '' || url.password !== '') return { ok: false, reason: 'an address with a user name or password is not fetched' }
    const host = url.hostname.toLowerCase()
    let answer = remembered.get(host)
    if (answer === undefined) {
      if (remembered.size >= MAX_REMEMBERED_HOSTS) remembered.clear()
      answer = lookUp(url)
      remembered.set(host, answer)
    }
    return answer
  }

  return {
    destination,
    isAudited,
    async check(url) {
      if (NO_NETWORK.has(url.protocol)) return null
      const answer = await destination(url)
      return answer.ok ? null : answer.reason
    },
    headersFor(url) {
      if (!isAudited(url) || (url.protocol !== 'http:' && url.protocol !== 'https:')) return {}
      const fields = { ...options.headers }
      const cookie = cookieHeader(options.cookies, url, options.now())
      if (cookie !== null) fields.cookie = fields.cookie === undefined ? cookie : `${fields.cookie}; ${cookie}`
      return fields
    },
  }
}
