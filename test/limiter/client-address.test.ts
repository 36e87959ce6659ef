import { describe, expect, test } from 'bun:test'
import { clientAddress, normaliseAddress } from '../../src/limiter/client-address'

const SOCKET = '198.51.100.7'

describe('clientAddress', () => {
  test('uses the socket address when no proxy is trusted, ignoring X-Forwarded-For', () => {
    expect(clientAddress(SOCKET, '203.0.113.1', 0)).toBe(SOCKET)
    expect(clientAddress(SOCKET, '203.0.113.1, 203.0.113.2', 0)).toBe(SOCKET)
    expect(clientAddress(SOCKET, null, 0)).toBe(SOCKET)
  })

  test('uses the socket address when a proxy is trusted but sent no X-Forwarded-For', () => {
    expect(clientAddress(SOCKET, null, 1)).toBe(SOCKET)
  })

  test('one trusted hop: the rightmost entry', () => {
    expect(clientAddress(SOCKET, '203.0.113.1', 1)).toBe('203.0.113.1')
    // The left entries were written by the client and may be forged.
    expect(clientAddress(SOCKET, '6.6.6.6, 203.0.113.1', 1)).toBe('203.0.113.1')
  })

  test('two trusted hops: the second entry from the right', () => {
    expect(clientAddress(SOCKET, '6.6.6.6, 203.0.113.1, 10.0.0.2', 2)).toBe('203.0.113.1')
  })

  test('a list shorter than the hops: the leftmost entry', () => {
    expect(clientAddress(SOCKET, '203.0.113.1, 10.0.0.2', 3)).toBe('203.0.113.1')
    expect(clientAddress(SOCKET, '203.0.113.1', 5)).toBe('203.0.113.1')
  })

  test('a garbage entry falls back to the socket address', () => {
    expect(clientAddress(SOCKET, 'not-an-ip', 1)).toBe(SOCKET)
    expect(clientAddress(SOCKET, '203.0.113.1, garbage', 1)).toBe(SOCKET)
    expect(clientAddress(SOCKET, '', 1)).toBe(SOCKET)
    expect(clientAddress(SOCKET, '203.0.113.1,', 1)).toBe(SOCKET)
    expect(clientAddress(SOCKET, '999.1.1.1', 1)).toBe(SOCKET)
    expect(clientAddress(SOCKET, '01.2.3.4', 1)).toBe(SOCKET)
    expect(clientAddress(SOCKET, 'unknown', 1)).toBe(SOCKET)
    expect(clientAddress(SOCKET, '[nonsense]', 1)).toBe(SOCKET)
  })

  test('garbage elsewhere in the list does not matter', () => {
    expect(clientAddress(SOCKET, 'garbage, , 203.0.113.1', 1)).toBe('203.0.113.1')
  })

  test('maps IPv4-mapped IPv6 to IPv4', () => {
    expect(clientAddress('::ffff:127.0.0.1', null, 0)).toBe('127.0.0.1')
    expect(clientAddress(SOCKET, '::ffff:127.0.0.1', 1)).toBe('127.0.0.1')
    expect(clientAddress(SOCKET, '::FFFF:7f00:1', 1)).toBe('127.0.0.1')
    expect(clientAddress(SOCKET, '[::ffff:203.0.113.1]', 1)).toBe('203.0.113.1')
  })

  test('handles bracketed IPv6, zones and spaces', () => {
    expect(clientAddress(SOCKET, ' [2001:db8::1] ', 1)).toBe('2001:db8::1')
    expect(clientAddress(SOCKET, '203.0.113.1 ,   [2001:db8::1]:4711  ', 1)).toBe('2001:db8::1')
    expect(clientAddress(SOCKET, '2001:db8::1 , 10.0.0.2', 2)).toBe('2001:db8::1')
    expect(clientAddress(SOCKET, 'fe80::1%eth0', 1)).toBe('fe80::1')
    expect(clientAddress(SOCKET, '[fe80::1%25eth0]', 1)).toBe('fe80::1')
    expect(clientAddress('  ::1  ', null, 0)).toBe('::1')
  })

  test('spells one IPv6 client one way, so it has one rate-limit key', () => {
    expect(clientAddress(SOCKET, '2001:0DB8:0000:0000:0000:0000:0000:0001', 1)).toBe('2001:db8::1')
    expect(clientAddress('2001:DB8::1', null, 0)).toBe('2001:db8::1')
  })

  test('accepts an IPv4 entry with a port', () => {
    expect(clientAddress(SOCKET, '203.0.113.1:51234', 1)).toBe('203.0.113.1')
  })

  test('no socket address: unknown, unless a trusted proxy names the client', () => {
    expect(clientAddress(undefined, null, 0)).toBe('unknown')
    expect(clientAddress('', null, 0)).toBe('unknown')
    expect(clientAddress(undefined, '203.0.113.1', 0)).toBe('unknown')
    expect(clientAddress(undefined, 'garbage', 1)).toBe('unknown')
    expect(clientAddress(undefined, '203.0.113.1', 1)).toBe('203.0.113.1')
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
