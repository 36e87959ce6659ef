// Which address a request comes from, for rate limiting.
//
// The socket's peer is the truth unless the operator says N trusted proxies sit in
// front. Each trusted proxy appends the address it saw to X-Forwarded-For, so the
// client is the entry N from the right; everything left of it was written by the
// client and can be forged. With N = 0 the header is ignored: anyone can send it.
import { isIP } from 'node:net'

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

/**
 * The client's address: the socket peer, or with `trustProxyHops` = N > 0 the
 * X-Forwarded-For entry N from the right (the leftmost if the list is shorter).
 * A chosen entry that is not an IP address falls back to the socket address.
 * Returns 'unknown' when there is no socket address.
 */
export function clientAddress(socketAddress: string | undefined, forwardedFor: string | null, trustProxyHops: number): string {
  const trimmedSocket = socketAddress?.trim()
  // A non-IP socket address (a Unix socket, say) is still the best key there is.
  const socket = trimmedSocket ? (normaliseAddress(trimmedSocket) ?? trimmedSocket) : 'unknown'

  const hops = Number.isFinite(trustProxyHops) ? Math.floor(trustProxyHops) : 0
  if (hops <= 0 || forwardedFor === null) return socket

  // Positions are kept as written (empty entries included): the right-hand side
  // comes from our proxies, and shifting it would let a client choose the entry.
  const entries = forwardedFor.split(',')
  const chosen = entries[Math.max(0, entries.length - hops)] ?? ''
  return normaliseAddress(chosen) ?? socket
}
