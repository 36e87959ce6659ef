// Address classification for the image fetcher: which destinations a caller-supplied URL may
// reach. Pure functions over IP strings; no DNS, no sockets. CIDR matching is done here with
// BigInt so v4, v6 and IPv4-mapped v6 are all handled the same explicit way.
import { isIP } from 'node:net'

export type IpFamily = 4 | 6

export type ParsedIp = { family: IpFamily; value: bigint }

const IPV4_BITS = 32
const IPV6_BITS = 128

/** Dotted-quad decimal only: the form the WHATWG URL parser and resolvers produce. */
function parseIpv4(text: string): bigint | null {
  const parts = text.split('.')
  if (parts.length !== 4) return null
  let value = 0n
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null
    const octet = Number(part)
    if (octet > 255) return null
    value = (value << 8n) | BigInt(octet)
  }
  return value
}

function parseIpv6(text: string): bigint | null {
  // A zone index (fe80::1%eth0) names an interface, not a different address.
  const withoutZone = text.split('%', 1)[0] ?? ''
  let head = withoutZone
  let tailGroups: number[] = []
  // An embedded IPv4 tail (::ffff:1.2.3.4) stands for the last two groups.
  const lastColon = head.lastIndexOf(':')
  if (lastColon !== -1 && head.includes('.', lastColon)) {
    const v4 = parseIpv4(head.slice(lastColon + 1))
    if (v4 === null) return null
    tailGroups = [Number(v4 >> 16n), Number(v4 & 0xffffn)]
    head = head.slice(0, lastColon + 1)
    // "::1.2.3.4" leaves "::", "1::1.2.3.4" leaves "1::" and "a:b:c:d:e:f:1.2.3.4" leaves "…:f:".
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1)
  }

  const parseGroups = (section: string): number[] | null => {
    if (section === '') return []
    const groups: number[] = []
    for (const group of section.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null
      groups.push(parseInt(group, 16))
    }
    return groups
  }

  const wantedGroups = 8 - tailGroups.length
  let groups: number[]
  const doubleColon = head.indexOf('::')
  if (doubleColon === -1) {
    const parsed = parseGroups(head)
    if (parsed === null || parsed.length !== wantedGroups) return null
    groups = parsed
  } else {
    if (head.indexOf('::', doubleColon + 1) !== -1) return null
    const left = parseGroups(head.slice(0, doubleColon))
    const right = parseGroups(head.slice(doubleColon + 2))
    if (left === null || right === null) return null
    const missing = wantedGroups - left.length - right.length
    if (missing < 1) return null
    groups = [...left, ...new Array<number>(missing).fill(0), ...right]
  }
  let value = 0n
  for (const group of [...groups, ...tailGroups]) value = (value << 16n) | BigInt(group)
  return value
}

/** Parses an IPv4 or IPv6 address (brackets allowed around v6); null when it is not one. */
export function parseIp(text: string): ParsedIp | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  if (bare.includes(':')) {
    const value = parseIpv6(bare)
    return value === null ? null : { family: 6, value }
  }
  const value = parseIpv4(bare)
  return value === null ? null : { family: 4, value }
}

export type Cidr = { family: IpFamily; base: bigint; prefixLength: number }

/** "10.0.0.0/8", "fd00::/8"; a bare address is a /32 or /128. Null when malformed. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/')
  const address = parseIp(slash === -1 ? text : text.slice(0, slash))
  if (address === null) return null
  const bits = address.family === 4 ? IPV4_BITS : IPV6_BITS
  let prefixLength = bits
  if (slash !== -1) {
    const prefixText = text.slice(slash + 1)
    if (!/^\d{1,3}$/.test(prefixText)) return null
    prefixLength = Number(prefixText)
    if (prefixLength > bits) return null
  }
  const hostBits = BigInt(bits - prefixLength)
  return { family: address.family, base: (address.value >> hostBits) << hostBits, prefixLength }
}

export function cidrContains(cidr: Cidr, ip: ParsedIp): boolean {
  if (cidr.family !== ip.family) return false
  const hostBits = BigInt((ip.family === 4 ? IPV4_BITS : IPV6_BITS) - cidr.prefixLength)
  return (ip.value >> hostBits) << hostBits === cidr.base
}

const IPV4_MAPPED = parseCidr('::ffff:0:0/96')!

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d), else null. */
function unmapIpv4(ip: ParsedIp): ParsedIp | null {
  return cidrContains(IPV4_MAPPED, ip) ? { family: 4, value: ip.value & 0xffffffffn } : null
}

type BlockedRange = { cidr: Cidr; kind: string }

function ranges(list: ReadonlyArray<readonly [string, string]>): BlockedRange[] {
  return list.map(([text, kind]) => {
    const cidr = parseCidr(text)
    if (cidr === null) throw new Error(`bad built-in CIDR ${text}`)
    return { cidr, kind }
  })
}

// Most specific first, so the reported kind is the precise one (::1 is "loopback", not
// "IPv4-compatible"; 255.255.255.255 is "broadcast", not "reserved").
const BLOCKED_RANGES: BlockedRange[] = ranges([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignment'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],

  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['::/96', 'IPv4-compatible'],
  ['64:ff9b::/96', 'NAT64'],
  ['64:ff9b:1::/48', 'NAT64'],
  ['100::/64', 'discard-only'],
  ['2001::/32', 'Teredo'],
  ['2001:db8::/32', 'documentation'],
  ['2001::/23', 'IETF protocol assignment'],
  ['2002::/16', '6to4'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'unique local (private)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
])

// Everything above that is v6 lies outside global unicast except the listed 2000::/3 holes;
// any other v6 address (unallocated space) has no business hosting a public image either.
const IPV6_GLOBAL_UNICAST = parseCidr('2000::/3')!

/**
 * Why an address must not be fetched from ("loopback", "private", ...), or null when it is
 * a public address. Anything that is not a well-formed IP is blocked ("not an IP address").
 */
export function blockedAddressKind(ip: string): string | null {
  const parsed = parseIp(ip)
  if (parsed === null) return 'not an IP address'
  for (const range of BLOCKED_RANGES) {
    if (cidrContains(range.cidr, parsed)) return range.kind
  }
  if (parsed.family === 6 && !cidrContains(IPV6_GLOBAL_UNICAST, parsed)) return 'unallocated'
  return null
}

export function isBlockedAddress(ip: string): boolean {
  return blockedAddressKind(ip) !== null
}

/** Lower-case, without IPv6 brackets or a trailing root dot, for comparing host names. */
export function normaliseHostName(hostname: string): string {
  let host = hostname.toLowerCase()
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  if (host.endsWith('.')) host = host.slice(0, -1)
  return host
}

/**
 * True when `hostname` or `ip` is in the operator's allow-list of private image hosts:
 * host names match exactly (case-insensitive), IPs by value (so "::1" equals
 * "0:0:0:0:0:0:0:1"), CIDRs by containment. An IPv4-mapped IPv6 address also matches
 * the IPv4 entries, since a connection to it reaches that IPv4 host.
 */
export function isAllowedByList(hostname: string, ip: string, allow: string[]): boolean {
  const host = normaliseHostName(hostname)
  const parsedIp = parseIp(ip)
  const candidates: ParsedIp[] = []
  if (parsedIp !== null) {
    candidates.push(parsedIp)
    const unmapped = unmapIpv4(parsedIp)
    if (unmapped !== null) candidates.push(unmapped)
  }
  for (const rawEntry of allow) {
    const entry = rawEntry.trim()
    if (entry === '') continue
    const cidr = entry.includes('/') || isIP(stripBrackets(entry)) !== 0 ? parseCidr(stripBrackets(entry)) : null
    if (cidr !== null) {
      if (candidates.some((candidate) => cidrContains(cidr, candidate))) return true
      continue
    }
    if (entry.includes('/')) continue // a malformed CIDR never matches a host name
    if (normaliseHostName(entry) === host && host !== '') return true
  }
  return false
}

function stripBrackets(text: string): string {
  return text.startsWith('[') && text.includes(']') ? text.replace('[', '').replace(']', '') : text
}
