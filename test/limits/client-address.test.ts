import { describe, expect, test } from 'bun:test'
import { clientAddress, clientKey, DEFAULT_TRUSTED_PROXIES, normaliseAddress, parseTrustedProxies } from '../../src/http/client-address'

const SOCKET = '198.51.100.7'
// The socket peer is the operator's proxy in these cases, as are the 10/8 hops.
const PROXIES = parseTrustedProxies(['198.51.100.0/24', '10.0.0.0/8', '::1']) as Exclude<ReturnType<typeof parseTrustedProxies>, string>
const trust = (hops: number) => ({ hops, proxies: PROXIES })

describe('clientAddress', () => {
  test('uses the socket address when no proxy is trusted, ignoring X-Forwarded-For', () => {
    expect(clientAddress(SOCKET, '203.0.113.1', trust(0))).toBe(SOCKET)
    expect(clientAddress(SOCKET, '203.0.113.1, 203.0.113.2', trust(0))).toBe(SOCKET)
    expect(clientAddress(SOCKET, null, trust(0))).toBe(SOCKET)
  })

  test('uses the socket address when a proxy is trusted but sent no X-Forwarded-For', () => {
    expect(clientAddress(SOCKET, null, trust(1))).toBe(SOCKET)
  })

  test('one trusted hop: the rightmost entry', () => {
    expect(clientAddress(SOCKET, '203.0.113.1', trust(1))).toBe('203.0.113.1')
    // The left entries were written by the client and may be forged.
    expect(clientAddress(SOCKET, '6.6.6.6, 203.0.113.1', trust(1))).toBe('203.0.113.1')
  })

  test('two trusted hops: the second entry from the right', () => {
    expect(clientAddress(SOCKET, '6.6.6.6, 203.0.113.1, 10.0.0.2', trust(2))).toBe('203.0.113.1')
  })

  test('a list shorter than the hops: the leftmost entry', () => {
    expect(clientAddress(SOCKET, '203.0.113.1, 10.0.0.2', trust(3))).toBe('203.0.113.1')
    expect(clientAddress(SOCKET, '203.0.113.1', trust(5))).toBe('203.0.113.1')
  })

  test('an entry that is not an IP address is skipped; with nothing else naming the client, it is unknown, never the proxy', () => {
    expect(clientAddress(SOCKET, 'not-an-ip', trust(1))).toBe('unknown')
    // The entry left of our proxy's was written by the client: it does not count.
    expect(clientAddress(SOCKET, '203.0.113.1, garbage', trust(1))).toBe('unknown')
    expect(clientAddress(SOCKET, '', trust(1))).toBe('unknown')
    expect(clientAddress(SOCKET, '203.0.113.1,', trust(1))).toBe('unknown')
    expect(clientAddress(SOCKET, '999.1.1.1', trust(1))).toBe('unknown')
    expect(clientAddress(SOCKET, '01.2.3.4', trust(1))).toBe('unknown')
    expect(clientAddress(SOCKET, 'unknown', trust(1))).toBe('unknown')
    expect(clientAddress(SOCKET, '[nonsense]', trust(1))).toBe('unknown')
    // Within the trusted hops, the right-most valid address that is not a proxy is the client.
    expect(clientAddress(SOCKET, '203.0.113.1, garbage', trust(2))).toBe('203.0.113.1')
    // Only proxies besides the garbage: the client is unknown, not the (maybe loopback) proxy.
    expect(clientAddress(SOCKET, 'garbage, 10.0.0.2', trust(2))).toBe('unknown')
    expect(clientAddress('127.0.0.1', 'garbage', { hops: 1, proxies: parseTrustedProxies(['127.0.0.0/8']) as typeof PROXIES })).toBe('unknown')
  })

  test('garbage elsewhere in the list does not matter', () => {
    expect(clientAddress(SOCKET, 'garbage, , 203.0.113.1', trust(1))).toBe('203.0.113.1')
  })

  test('maps IPv4-mapped IPv6 to IPv4', () => {
    expect(clientAddress('::ffff:127.0.0.1', null, trust(0))).toBe('127.0.0.1')
    expect(clientAddress(SOCKET, '::ffff:127.0.0.1', trust(1))).toBe('127.0.0.1')
    expect(clientAddress(SOCKET, '::FFFF:7f00:1', trust(1))).toBe('127.0.0.1')
    expect(clientAddress(SOCKET, '[::ffff:203.0.113.1]', trust(1))).toBe('203.0.113.1')
  })

  test('handles bracketed IPv6, zones and spaces', () => {
    expect(clientAddress(SOCKET, ' [2001:db8::1] ', trust(1))).toBe('2001:db8:0:0::/64')
    expect(clientAddress(SOCKET, '203.0.113.1 ,   [2001:db8::1]:4711  ', trust(1))).toBe('2001:db8:0:0::/64')
    expect(clientAddress(SOCKET, '2001:db8::1 , 10.0.0.2', trust(2))).toBe('2001:db8:0:0::/64')
    expect(clientAddress(SOCKET, 'fe80::1%eth0', trust(1))).toBe('fe80:0:0:0::/64')
    expect(clientAddress(SOCKET, '[fe80::1%25eth0]', trust(1))).toBe('fe80:0:0:0::/64')
    expect(clientAddress('  ::1  ', null, trust(0))).toBe('0:0:0:0::/64')
  })

  test('spells one IPv6 client one way, so it has one rate-limit key', () => {
    expect(clientAddress(SOCKET, '2001:0DB8:0000:0000:0000:0000:0000:0001', trust(1))).toBe('2001:db8:0:0::/64')
    expect(clientAddress('2001:DB8::1', null, trust(0))).toBe('2001:db8:0:0::/64')
  })

  test('accepts an IPv4 entry with a port', () => {
    expect(clientAddress(SOCKET, '203.0.113.1:51234', trust(1))).toBe('203.0.113.1')
  })

  test('no socket address: unknown, whatever X-Forwarded-For says', () => {
    expect(clientAddress(undefined, null, trust(0))).toBe('unknown')
    expect(clientAddress('', null, trust(0))).toBe('unknown')
    expect(clientAddress(undefined, '203.0.113.1', trust(0))).toBe('unknown')
    expect(clientAddress(undefined, 'garbage', trust(1))).toBe('unknown')
    // Without a peer address nothing shows the header came from a trusted proxy.
    expect(clientAddress(undefined, '203.0.113.1', trust(1))).toBe('unknown')
  })
})

describe('normaliseAddress', () => {
  test('returns undefined for anything that is not an IP address', () => {
    for (const raw of ['', '   ', 'localhost', '1.2.3', '1.2.3.4.5', '::g', '[1.2.3.4', '1.2.3.4:99999']) {
      expect(normaliseAddress(raw)).toBeUndefined()
    }
  })

  test('keeps valid addresses in canonical form', () => {
    expect(normaliseAddress('10.0.0.1')).toBe('10.0.0.1')
    expect(normaliseAddress('::')).toBe('::')
    expect(normaliseAddress('[::1]:80')).toBe('::1')
    expect(normaliseAddress('::ffff:0:1')).toBe('0.0.0.1')
    // Not IPv4-mapped: stays IPv6.
    expect(normaliseAddress('64:ff9b::1.2.3.4')).toBe('64:ff9b::102:304')
  })
})

describe('who may speak for a client', () => {
  test('X-Forwarded-For from a peer that is not a trusted proxy is ignored, whatever ALTTEXT_TRUST_PROXY says', () => {
    const outsider = '203.0.113.50'
    expect(clientAddress(outsider, '192.0.2.1', trust(1))).toBe(outsider)
    expect(clientAddress(outsider, '192.0.2.1, 10.0.0.2', trust(2))).toBe(outsider)
  })

  test('the default list trusts loopback and private peers only', () => {
    const defaults = { hops: 1, proxies: parseTrustedProxies(DEFAULT_TRUSTED_PROXIES) as typeof PROXIES }
    expect(clientAddress('127.0.0.1', '192.0.2.1', defaults)).toBe('192.0.2.1')
    expect(clientAddress('10.1.2.3', '192.0.2.1', defaults)).toBe('192.0.2.1')
    expect(clientAddress('192.168.0.9', '192.0.2.1', defaults)).toBe('192.0.2.1')
    expect(clientAddress('203.0.113.9', '192.0.2.1', defaults)).toBe('203.0.113.9')
  })

  test('with two hops, an entry that is not a trusted proxy is the client even if it stands first from the right', () => {
    // Someone reached the second proxy directly: its entry is their own address, the rest is theirs to forge.
    expect(clientAddress(SOCKET, '192.0.2.1, 203.0.113.66', trust(2))).toBe('203.0.113.66')
  })

  test('a bad trusted-proxy entry is named', () => {
    expect(parseTrustedProxies(['10.0.0.0/8', 'not-a-cidr'])).toBe('not-a-cidr')
  })
})

describe('IPv6 clients are counted per /64', () => {
  test('addresses of one /64 share a key; another /64 has its own', () => {
    expect(clientKey('2001:db8:1:2::1')).toBe(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'))
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'))
    expect(clientKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
  })

  test('IPv4 keys are the address itself', () => {
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1')
  })
})
