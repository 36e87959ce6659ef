import { describe, expect, test } from 'bun:test'
import { createSlidingWindowLimiter } from '../../src/http/limiter'

const WINDOW_MS = 60_000
const LOGIN = 'POST /api/login'
const REGISTER = 'POST /api/register'

/** A clock the test moves by hand; the limiter never reads real time. */
function fakeClock(start = 1_700_000_000_000) {
  let now = start
  return {
    read: () => now,
    advance: (ms: number) => {
      now += ms
    },
  }
}

describe('sliding window limiter', () => {
  test('allows the limit, then denies with Retry-After >= 1 and remaining 0', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    for (let i = 0; i < 5; i++) expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(true)

    const denied = limiter.check('1.2.3.4', LOGIN, 5)
    expect(denied.allowed).toBe(false)
    expect(denied.limit).toBe(5)
    expect(denied.remaining).toBe(0)
    expect(denied.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    expect(denied.resetSeconds).toBe(denied.retryAfterSeconds)
  })

  test('retrying after Retry-After seconds is allowed', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    // Spread the hits out so the oldest leaves the window first.
    for (let i = 0; i < 5; i++) {
      expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(true)
      clock.advance(7_250)
    }
    const denied = limiter.check('1.2.3.4', LOGIN, 5)
    expect(denied.allowed).toBe(false)
    // The first hit (at 0) leaves the window at 60 s; we are at 36.25 s.
    expect(denied.retryAfterSeconds).toBe(24)

    // One millisecond short is still too early: Retry-After is tight, not padded by a whole window.
    clock.advance(denied.retryAfterSeconds * 1000 - 251)
    expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(false)
    clock.advance(1)
    const retried = limiter.check('1.2.3.4', LOGIN, 5)
    expect(retried.allowed).toBe(true)
    expect(retried.remaining).toBe(0)
  })

  test('retrying exactly after Retry-After is allowed, whatever the sub-second offset', () => {
    for (const offsetMs of [0, 1, 499, 500, 999, 59_999]) {
      const clock = fakeClock()
      const limiter = createSlidingWindowLimiter({ clock: clock.read })
      for (let i = 0; i < 5; i++) limiter.check('1.2.3.4', LOGIN, 5)
      clock.advance(offsetMs)
      const denied = limiter.check('1.2.3.4', LOGIN, 5)
      expect(denied.allowed).toBe(false)
      expect(denied.retryAfterSeconds).toBeGreaterThanOrEqual(1)
      clock.advance(denied.retryAfterSeconds * 1000)
      expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(true)
    }
  })

  test('windows are independent per endpoint and per address', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    for (let i = 0; i < 5; i++) limiter.check('1.2.3.4', LOGIN, 5)
    expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(false)

    const otherEndpoint = limiter.check('1.2.3.4', REGISTER, 5)
    expect(otherEndpoint.allowed).toBe(true)
    expect(otherEndpoint.remaining).toBe(4)

    const otherAddress = limiter.check('5.6.7.8', LOGIN, 5)
    expect(otherAddress.allowed).toBe(true)
    expect(otherAddress.remaining).toBe(4)

    expect(limiter.check('1.2.3.4', 'GET /api/usage', 60).remaining).toBe(59)
    expect(limiter.size()).toBe(4)
  })

  test('denied requests do not extend the lockout', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    for (let i = 0; i < 5; i++) limiter.check('1.2.3.4', LOGIN, 5)

    const first = limiter.check('1.2.3.4', LOGIN, 5)
    expect(first.allowed).toBe(false)
    const freedAtMs = clock.read() + first.retryAfterSeconds * 1000

    // Hammer once a second until the window should have freed room.
    let lastRetryAfter = first.retryAfterSeconds
    while (clock.read() + 1000 < freedAtMs) {
      clock.advance(1000)
      const denied = limiter.check('1.2.3.4', LOGIN, 5)
      expect(denied.allowed).toBe(false)
      expect(denied.retryAfterSeconds).toBeLessThan(lastRetryAfter)
      lastRetryAfter = denied.retryAfterSeconds
    }
    clock.advance(freedAtMs - clock.read())
    expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(true)
  })

  test('header numbers are consistent: remaining counts down by one, reset stays within the window', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    for (let expected = 59; expected >= 0; expected--) {
      const decision = limiter.check('1.2.3.4', 'GET /api/usage', 60)
      expect(decision).toMatchObject({ allowed: true, limit: 60, remaining: expected, retryAfterSeconds: 0 })
      expect(decision.resetSeconds).toBeGreaterThanOrEqual(1)
      expect(decision.resetSeconds).toBeLessThanOrEqual(WINDOW_MS / 1000)
      clock.advance(500)
    }
    // Room left: reset is when the window fully drains (the newest hit expires).
    // No room left: reset is when one more request would be allowed (the oldest hit expires).
    const denied = limiter.check('1.2.3.4', 'GET /api/usage', 60)
    expect(denied).toMatchObject({ allowed: false, limit: 60, remaining: 0 })
    expect(denied.resetSeconds).toBe(denied.retryAfterSeconds)
    expect(denied.retryAfterSeconds).toBe(30) // first hit at 0, now at 30 s
  })

  test('reset for an allowed request with room left is the time until the window drains', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    expect(limiter.check('1.2.3.4', LOGIN, 5).resetSeconds).toBe(60)
    clock.advance(20_000)
    expect(limiter.check('1.2.3.4', LOGIN, 5).resetSeconds).toBe(60)
    clock.advance(20_000)
    limiter.check('1.2.3.4', LOGIN, 5)
    limiter.check('1.2.3.4', LOGIN, 5)
    // The last slot: reset is when the first hit (at 0, now 40 s ago) leaves.
    const last = limiter.check('1.2.3.4', LOGIN, 5)
    expect(last).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 20 })
  })

  test('an explicit now overrides the clock', () => {
    const limiter = createSlidingWindowLimiter({ clock: () => 0 })
    for (let i = 0; i < 5; i++) limiter.check('1.2.3.4', LOGIN, 5, 1_000)
    expect(limiter.check('1.2.3.4', LOGIN, 5, 1_000).allowed).toBe(false)
    expect(limiter.check('1.2.3.4', LOGIN, 5, 61_000).allowed).toBe(true)
  })

  test('a flood of a million distinct addresses stays within maxEntries', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ maxEntries: 1000, clock: clock.read })
    let largest = 0
    for (let i = 0; i < 1_000_000; i++) {
      const address = `10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff}` // distinct for i < 2^24
      limiter.check(address, LOGIN, 5)
      if (i % 997 === 0) {
        largest = Math.max(largest, limiter.size())
        expect(limiter.size()).toBeLessThanOrEqual(1000)
      }
      if (i % 1000 === 0) clock.advance(1)
    }
    expect(largest).toBe(1000)
    expect(limiter.size()).toBeLessThanOrEqual(1000)
  })

  test('the least recently used entry is evicted at the cap', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ maxEntries: 2, clock: clock.read })
    for (let i = 0; i < 5; i++) limiter.check('a', LOGIN, 5)
    limiter.check('b', LOGIN, 5)
    expect(limiter.check('a', LOGIN, 5).allowed).toBe(false) // touches a: b is now least recent
    limiter.check('c', LOGIN, 5) // evicts b
    expect(limiter.size()).toBe(2)
    expect(limiter.check('a', LOGIN, 5).allowed).toBe(false) // a kept its window
    expect(limiter.check('b', LOGIN, 5).remaining).toBe(4) // b starts afresh
  })

  test('idle entries are dropped as new calls arrive', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    for (let i = 0; i < 100; i++) limiter.check(`10.0.0.${i}`, LOGIN, 5)
    expect(limiter.size()).toBe(100)

    clock.advance(2 * WINDOW_MS)
    // Each call sweeps a couple of idle entries from the front, so size falls without a timer.
    for (let i = 0; i < 100; i++) limiter.check('192.0.2.1', 'GET /api/usage', 60)
    expect(limiter.size()).toBe(1)
  })

  test('sweep drops entries idle for a whole window and keeps the rest', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    for (let i = 0; i < 50; i++) limiter.check(`10.0.0.${i}`, LOGIN, 5)
    clock.advance(WINDOW_MS / 2)
    for (let i = 0; i < 10; i++) limiter.check(`10.0.1.${i}`, LOGIN, 5)

    expect(limiter.sweep()).toBe(0)
    expect(limiter.size()).toBe(60)
    clock.advance(WINDOW_MS / 2)
    expect(limiter.sweep()).toBe(50)
    expect(limiter.size()).toBe(10)
    clock.advance(2 * WINDOW_MS)
    expect(limiter.sweep(clock.read())).toBe(10)
    expect(limiter.size()).toBe(0)
  })

  test('a denied client keeps its entry while it keeps trying', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    for (let i = 0; i < 5; i++) limiter.check('1.2.3.4', LOGIN, 5)
    clock.advance(59_000)
    expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(false)
    clock.advance(30_000)
    expect(limiter.sweep()).toBe(0) // touched 30 s ago: kept, though its hits have expired
    expect(limiter.check('1.2.3.4', LOGIN, 5)).toMatchObject({ allowed: true, remaining: 4 })
  })

  test('clear forgets everything', () => {
    const limiter = createSlidingWindowLimiter({ clock: () => 0 })
    for (let i = 0; i < 5; i++) limiter.check('1.2.3.4', LOGIN, 5)
    limiter.clear()
    expect(limiter.size()).toBe(0)
    expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(true)
  })

  test('a clock stepping backwards does not break the window', () => {
    const clock = fakeClock()
    const limiter = createSlidingWindowLimiter({ clock: clock.read })
    limiter.check('1.2.3.4', LOGIN, 5)
    clock.advance(-10_000)
    for (let i = 0; i < 4; i++) expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(true)
    const denied = limiter.check('1.2.3.4', LOGIN, 5)
    expect(denied.allowed).toBe(false)
    clock.advance(denied.retryAfterSeconds * 1000)
    expect(limiter.check('1.2.3.4', LOGIN, 5).allowed).toBe(true)
  })

  test('rejects nonsense limits and options', () => {
    const limiter = createSlidingWindowLimiter()
    expect(() => limiter.check('1.2.3.4', LOGIN, 0)).toThrow(RangeError)
    expect(() => limiter.check('1.2.3.4', LOGIN, 1.5)).toThrow(RangeError)
    expect(() => createSlidingWindowLimiter({ maxEntries: 0 })).toThrow(RangeError)
    expect(() => createSlidingWindowLimiter({ windowMs: 0 })).toThrow(RangeError)
  })
})
