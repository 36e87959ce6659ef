// Which client a request comes from, for rate limiting.
//
// The socket's peer is the truth unless the operator says N trusted proxies sit in front (ALTTEXT_TRUST_PROXY)
// and the peer is one of them (ALTTEXT_TRUSTED_PROXIES). Each proxy appends the address it saw to
// X-Forwarded-For, so the client is the first entry from the right that is not one of our proxies, at most N
// entries in; everything further left was written by the client and can be forged. IPv6 clients are counted
// per /64: one host usually holds a whole /64 and could otherwise mint a new address per request.
import { isIP } from 'node:net'
import { cidrContains, parseCidr, parseIp, type Cidr } from '../intake/address'

export type ProxyTrust = {
  /** Trusted proxy hops in front of the service; 0 ignores X-Forwarded-For. */
  hops: number
  /** Addresses allowed to speak for a client through X-Forwarded-For. */
  proxies: Cidr[]
}

/** Loopback and the private ranges: where a reverse proxy of the operator's usually runs. */
export const DEFAULT_TRUSTED_PROXIES = ['127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']

/** `[v6]` or `[v6]:port`, as some proxies write IPv6 entries. */
const BRACKETED = /^\[([^\]]+)\](?::(\d{1,5}))?$/
/** `a.b.c.d:port`, as some proxies write IPv4 entries. */
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/
/** IPv4-mapped IPv6 in canonical (URL-serialised) form: `::ffff:7f00:1`. */
const IPV4_MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/

/**
 * Canonical form of one address, or undefined when it is not an IP address.
 * IPv6 is lower-cased and zero-compressed so one client is one rate-limit key
 * however it is spelled; IPv4-mapped IPv6 becomes plain IPv4.
 */
export function normaliseAddress(raw: string): string | undefined {
  let address = raw.trim()
  const withPort = BRACKETED.exec(address) ?? IPV4_WITH_PORT.exec(address)
  if (withPort) {
    if (withPort[2] !== undefined && Number(withPort[2]) > 65_535) return undefined
    address = withPort[1] as string
  }
  const zoneStart = address.indexOf('%')
  if (zoneStart !== -1) address = address.slice(0, zoneStart)

  const family = isIP(address)
  if (family === 4) return address
  if (family !== 6) return undefined

  // The WHATWG URL parser serialises IPv6 canonically (RFC 5952), dotted tails included.
  const canonical = URL.parse(`http://[${address}]/`)?.hostname.slice(1, -1) ?? address.toLowerCase()
  const mapped = IPV4_MAPPED.exec(canonical)
  if (!mapped) return canonical
  const high = Number.parseInt(mapped[1] as string, 16)
  const low = Number.parseInt(mapped[2] as string, 16)
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
}

/** The rate-limit identity of a canonical address: IPv4 as it is, IPv6 as its /64 (`2001:db8:1:2::/64`). */
export function clientKey(address: string): string {
  if (!address.includes(':')) return address
  const parsed = parseIp(address)
  if (parsed === null || parsed.family === 4) return address
  const network = parsed.value >> 64n
  const groups = [48n, 32n, 16n, 0n].map((shift) => ((network >> shift) & 0xffffn).toString(16))
  return `${groups.join(':')}::/64`
}

function isTrustedProxy(address: string, trust: ProxyTrust): boolean {
  const parsed = parseIp(address)
  return parsed !== null && trust.proxies.some((cidr) => cidrContains(cidr, parsed))
}

export function parseTrustedProxies(entries: string[]): Cidr[] | string {
  const parsed: Cidr[] = []
  for (const entry of entries) {
    const cidr = parseCidr(entry.includes('/') ? entry : `${entry}/${isIP(entry) === 6 ? 128 : 32}`)
    if (cidr === null) return entry
    parsed.push(cidr)
  }
  return parsed
}

/** The client of a request whose address cannot be known: one shared rate-limit key, and never loopback. */
export const UNKNOWN_CLIENT = 'unknown'

/**
 * The client's address in canonical form: the socket peer, or — when the peer is a trusted proxy and
 * `trust.hops` = N > 0 — the first X-Forwarded-For entry from the right that is not a trusted proxy, at most
 * N entries in (all of them trusted: the left-most of those N). Entries that are not IP addresses are
 * skipped; if one was and no other entry names the client, the client is unknown: never the proxy's own
 * address, which could be loopback and more privileged than the client. No socket address is unknown too.
 */
export function clientIp(socketAddress: string | undefined, forwardedFor: string | null, trust: ProxyTrust): string {
  const trimmedSocket = socketAddress?.trim()
  // A non-IP socket address (a Unix socket, say) is still the best key there is.
  const socket = trimmedSocket ? (normaliseAddress(trimmedSocket) ?? trimmedSocket) : UNKNOWN_CLIENT
  if (trust.hops <= 0 || forwardedFor === null || !isTrustedProxy(socket, trust)) return socket

  // Positions are kept as written (empty entries included): the right-hand side comes from our proxies, and
  // shifting it would let a client choose the entry.
  const entries = forwardedFor.split(',')
  let proxy: string | undefined
  let skipped = false
  for (let hop = 1; hop <= trust.hops && hop <= entries.length; hop++) {
    const entry = normaliseAddress(entries[entries.length - hop] ?? '')
    if (entry === undefined) skipped = true
    else if (!isTrustedProxy(entry, trust)) return entry
    else proxy = entry
  }
  return skipped || proxy === undefined ? UNKNOWN_CLIENT : proxy
}

/** The client's rate-limit key: its address (see clientIp), an IPv6 one as its /64. */
export function clientAddress(socketAddress: string | undefined, forwardedFor: string | null, trust: ProxyTrust): string {
  return clientKey(clientIp(socketAddress, forwardedFor, trust))
}
