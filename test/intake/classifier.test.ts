// The address classifier and the allow-list, as pure functions. No address here is ever
// contacted or resolved: private and public ranges are only classified.
import { describe, expect, test } from 'bun:test'
import { blockedAddressKind, isAllowedByList, isBlockedAddress } from '../../src/intake/index.ts'
import { parseCidr, parseIp } from '../../src/intake/address.ts'

/** [address, kind] pairs: first, last and a middle address of every blocked range. */
const BLOCKED_V4: Array<[string, string]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['10.0.0.0', 'private'],
  ['10.0.0.5', 'private'],
  ['10.255.255.255', 'private'],
  ['100.64.0.0', 'shared (CGNAT)'],
  ['100.127.255.255', 'shared (CGNAT)'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'link-local'], // cloud metadata
  ['172.16.0.0', 'private'],
  ['172.20.1.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.0.0.0', 'IETF protocol assignment'],
  ['192.0.0.255', 'IETF protocol assignment'],
  ['192.0.2.1', 'documentation'],
  ['192.88.99.1', '6to4 relay'],
  ['192.168.0.0', 'private'],
  ['192.168.1.1', 'private'],
  ['192.168.255.255', 'private'],
  ['198.18.0.0', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.200', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.255', 'multicast'],
  ['240.0.0.0', 'reserved'],
  ['250.1.2.3', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['255.255.255.255', 'broadcast'],
]

const BLOCKED_V6: Array<[string, string]> = [
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped'],
  ['::ffff:7f00:1', 'IPv4-mapped'],
  ['::ffff:93.184.216.34', 'IPv4-mapped'], // even a public v4 inside: the stack decides where it goes
  ['::ffff:0:0', 'IPv4-mapped'],
  ['::127.0.0.1', 'IPv4-compatible'],
  ['::7f00:1', 'IPv4-compatible'],
  ['::ffff:ffff', 'IPv4-compatible'],
  ['64:ff9b::7f00:1', 'NAT64'],
  ['64:ff9b::a00:5', 'NAT64'],
  ['64:ff9b:1::1', 'NAT64'],
  ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'NAT64'],
  ['100::', 'discard-only'],
  ['100::ffff:ffff:ffff:ffff', 'discard-only'],
  ['2001::', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:1::1', 'IETF protocol assignment'],
  ['2001:2::1', 'IETF protocol assignment'], // benchmarking
  ['2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', 'IETF protocol assignment'],
  ['2001:db8::1', 'documentation'],
  ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
  ['2002::1', '6to4'],
  ['2002:7f00:1::1', '6to4'],
  ['3fff::1', 'documentation'],
  ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
  ['fc00::1', 'unique local (private)'],
  ['fd00::1', 'unique local (private)'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique local (private)'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local'],
  ['fec0::1', 'site-local'],
  ['feff::1', 'site-local'],
  ['ff00::', 'multicast'],
  ['ff02::1', 'multicast'],
  ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
  ['4000::1', 'unallocated'],
  ['[::1]', 'loopback'],
]

const PUBLIC: string[] = [
  '93.184.216.34',
  '1.1.1.1',
  '8.8.8.8',
  '9.255.255.255', // just below 10/8
  '11.0.0.0', // just above 10/8
  '100.63.255.255', // just below 100.64/10
  '100.128.0.0', // just above it
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255', // just below 172.16/12
  '172.32.0.0', // just above it
  '192.0.1.0',
  '192.0.3.0',
  '192.88.98.255',
  '192.88.100.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '198.51.99.255',
  '198.51.101.0',
  '203.0.112.255',
  '203.0.114.0',
  '223.255.255.255', // just below multicast
  '2606:4700::1111',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '2001:200::1', // just above 2001::/23
  '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
  '2001:db9::1',
  '2003::1', // just above 2002::/16
  '2001:4860:4860::8888',
  '3ffe:ffff::1', // just below 3fff::/20
  '3fff:1000::1', // just above it
  '2000::1',
]

describe('isBlockedAddress', () => {
  test.each(BLOCKED_V4)('IPv4 %s is blocked as %s', (address, kind) => {
    expect(isBlockedAddress(address)).toBe(true)
    expect(blockedAddressKind(address)).toBe(kind)
  })

  test.each(BLOCKED_V6)('IPv6 %s is blocked as %s', (address, kind) => {
    expect(isBlockedAddress(address)).toBe(true)
    expect(blockedAddressKind(address)).toBe(kind)
  })

  test.each(PUBLIC)('public %s is allowed', (address) => {
    expect(blockedAddressKind(address)).toBeNull()
    expect(isBlockedAddress(address)).toBe(false)
  })

  test.each(['', 'localhost', 'example.com', '127.1', '1.2.3', '1.2.3.4.5', '256.0.0.1', '01.2.3.4x', '::g', '1:2:3:4:5:6:7:8:9', '1::2::3', 'fe80::1%'])(
    'anything that is not an IP (%p) is blocked, failing closed',
    (text) => {
      // "fe80::1%" parses as fe80::1 with an empty zone; it is link-local either way.
      expect(isBlockedAddress(text)).toBe(true)
    },
  )
})

describe('odd spellings of loopback, canonicalised by the WHATWG URL parser in Bun', () => {
  const spellings: Array<[string, string]> = [
    ['127.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['%31%32%37.0.0.1', '127.0.0.1'],
    ['１２７.0.0.1', '127.0.0.1'], // full-width digits
    ['127。0。0。1', '127.0.0.1'], // ideographic full stops
    ['0', '0.0.0.0'],
    ['0x0a000005', '10.0.0.5'],
    ['3232235777', '192.168.1.1'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['[::1]', '[::1]'],
    ['[0:0:0:0:0:0:0:1]', '[::1]'],
    ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]'],
    ['[::127.0.0.1]', '[::7f00:1]'],
    ['[FE80::1]', '[fe80::1]'],
  ]

  test.each(spellings)('https://%s/ has hostname %s, which the classifier blocks', (spelling, canonical) => {
    const { hostname } = new URL(`https://${spelling}/x.png`)
    expect(hostname).toBe(canonical)
    expect(isBlockedAddress(hostname)).toBe(true)
  })

  test('a public address spelled oddly stays public', () => {
    const { hostname } = new URL('https://1572395042/')
    expect(hostname).toBe('93.184.216.34')
    expect(isBlockedAddress(hostname)).toBe(false)
  })
})

describe('isAllowedByList', () => {
  test('host names match exactly and case-insensitively, with or without a root dot', () => {
    expect(isAllowedByList('images.intranet', '10.0.0.5', ['images.intranet'])).toBe(true)
    expect(isAllowedByList('IMAGES.Intranet', '10.0.0.5', ['images.intranet'])).toBe(true)
    expect(isAllowedByList('images.intranet.', '10.0.0.5', ['images.intranet'])).toBe(true)
    expect(isAllowedByList('images.intranet', '10.0.0.5', ['IMAGES.INTRANET'])).toBe(true)
    // Exact means exact: no suffix or prefix matching.
    expect(isAllowedByList('evil-images.intranet', '10.0.0.5', ['images.intranet'])).toBe(false)
    expect(isAllowedByList('a.images.intranet', '10.0.0.5', ['images.intranet'])).toBe(false)
    expect(isAllowedByList('images.intranet.evil.com', '10.0.0.5', ['images.intranet'])).toBe(false)
    expect(isAllowedByList('images', '10.0.0.5', ['images.intranet'])).toBe(false)
  })

  test('IPs match by value, in any spelling', () => {
    expect(isAllowedByList('x', '10.0.0.5', ['10.0.0.5'])).toBe(true)
    expect(isAllowedByList('x', '10.0.0.6', ['10.0.0.5'])).toBe(false)
    expect(isAllowedByList('x', '::1', ['0:0:0:0:0:0:0:1'])).toBe(true)
    expect(isAllowedByList('x', '0:0:0:0:0:0:0:1', ['::1'])).toBe(true)
    expect(isAllowedByList('x', '::1', ['[::1]'])).toBe(true)
    expect(isAllowedByList('x', 'fd00::1', ['FD00::1'])).toBe(true)
    expect(isAllowedByList('x', 'fd00::2', ['fd00::1'])).toBe(false)
    // An IP entry is not a host name entry: "10.0.0.5" does not allow a host called that.
    expect(isAllowedByList('10.0.0.5', '10.0.0.6', ['10.0.0.5'])).toBe(false)
  })

  test('IPv4 CIDRs match by containment', () => {
    const allow = ['10.0.0.0/8', '192.168.1.0/24']
    expect(isAllowedByList('x', '10.0.0.0', allow)).toBe(true)
    expect(isAllowedByList('x', '10.255.255.255', allow)).toBe(true)
    expect(isAllowedByList('x', '11.0.0.0', allow)).toBe(false)
    expect(isAllowedByList('x', '9.255.255.255', allow)).toBe(false)
    expect(isAllowedByList('x', '192.168.1.77', allow)).toBe(true)
    expect(isAllowedByList('x', '192.168.2.1', allow)).toBe(false)
    expect(isAllowedByList('x', '127.0.0.1', ['127.0.0.0/8'])).toBe(true)
    expect(isAllowedByList('x', '127.0.0.1', ['0.0.0.0/0'])).toBe(true)
    expect(isAllowedByList('x', '10.1.2.3', ['10.1.2.3/32'])).toBe(true)
    expect(isAllowedByList('x', '10.1.2.4', ['10.1.2.3/32'])).toBe(false)
    // Host bits set in the entry are ignored, as in every CIDR parser.
    expect(isAllowedByList('x', '10.9.9.9', ['10.1.2.3/8'])).toBe(true)
  })

  test('IPv6 CIDRs match by containment', () => {
    const allow = ['fd00::/8', '2001:db8:1::/48']
    expect(isAllowedByList('x', 'fd00::1', allow)).toBe(true)
    expect(isAllowedByList('x', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', allow)).toBe(true)
    expect(isAllowedByList('x', 'fc00::1', allow)).toBe(false)
    expect(isAllowedByList('x', 'fe00::1', allow)).toBe(false)
    expect(isAllowedByList('x', '2001:db8:1:ffff::1', allow)).toBe(true)
    expect(isAllowedByList('x', '2001:db8:2::1', allow)).toBe(false)
    expect(isAllowedByList('x', '::1', ['::1/128'])).toBe(true)
    expect(isAllowedByList('x', 'fe80::1%eth0', ['fe80::/10'])).toBe(true)
  })

  test('families do not cross, except an IPv4-mapped address against IPv4 entries', () => {
    expect(isAllowedByList('x', '10.0.0.5', ['::/0'])).toBe(false)
    expect(isAllowedByList('x', 'fd00::1', ['0.0.0.0/0'])).toBe(false)
    // ::ffff:10.0.0.5 reaches 10.0.0.5, so an entry allowing that host allows it too.
    expect(isAllowedByList('x', '::ffff:10.0.0.5', ['10.0.0.0/8'])).toBe(true)
    expect(isAllowedByList('x', '::ffff:a00:5', ['10.0.0.5'])).toBe(true)
    expect(isAllowedByList('x', '::ffff:10.0.0.5', ['192.168.0.0/16'])).toBe(false)
  })

  test('malformed entries and an empty list allow nothing', () => {
    expect(isAllowedByList('x', '10.0.0.5', [])).toBe(false)
    expect(isAllowedByList('x', '10.0.0.5', [''])).toBe(false)
    expect(isAllowedByList('x', '10.0.0.5', ['10.0.0.0/33'])).toBe(false)
    expect(isAllowedByList('x', '10.0.0.5', ['10.0.0.0/'])).toBe(false)
    expect(isAllowedByList('x', '10.0.0.5', ['banana/8'])).toBe(false)
    expect(isAllowedByList('', '10.0.0.5', ['banana/8'])).toBe(false)
    expect(isAllowedByList('x', 'not-an-ip', ['0.0.0.0/0'])).toBe(false)
  })
})

describe('IP and CIDR parsing', () => {
  test('IPv6 forms parse to the same value', () => {
    const forms = ['::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '0:0:0:0:0:ffff:127.0.0.1', '[::ffff:7f00:1]']
    const values = forms.map((form) => parseIp(form)?.value)
    expect(new Set(values).size).toBe(1)
    expect(values[0]).toBe(0xffff7f000001n)
  })

  test('CIDR prefixes are bounded by the family', () => {
    expect(parseCidr('10.0.0.0/32')).not.toBeNull()
    expect(parseCidr('10.0.0.0/33')).toBeNull()
    expect(parseCidr('::/128')).not.toBeNull()
    expect(parseCidr('::/129')).toBeNull()
    expect(parseCidr('::/-1')).toBeNull()
  })
})
