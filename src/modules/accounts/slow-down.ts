// Per-account sign-in slow-down, beside the per-address rate limit: after LOGIN_FAILURES_BEFORE_DELAY failed
// password checks for an email within the window, each further attempt for it must wait (1 s, doubling per
// failure, capped), and is refused with 429 without checking the password. A success resets the count.
// Addresses that signed in to the account before are never delayed, so a stranger's failures cannot lock
// the owner out. Kept in memory, bounded: the oldest entries go first. With ALTTEXT_REDIS_URL the same
// rules run in Redis (redis/slow-down.ts), shared by every replica, and this one is the fallback.
import { LOGIN_FAILURE_WINDOW_MINUTES, LOGIN_FAILURES_BEFORE_DELAY, LOGIN_KNOWN_ADDRESSES, LOGIN_MAX_DELAY_SECONDS } from '../../shared/limits'
import type { MaybePromise } from '../../shared/maybe-promise'

export const WINDOW_MS = LOGIN_FAILURE_WINDOW_MINUTES * 60_000
export const MAX_DELAY_MS = LOGIN_MAX_DELAY_SECONDS * 1000

/** Failure times kept per email: more than enough to reach the longest delay within the window. */
export const MAX_FAILURES_KEPT = 64

type Failures = {
  /** Failure times within the window, oldest first. */
  times: number[]
  /** No attempt (from an unknown address) before this time. */
  nextAt: number
}

/** Values from memory; promises when kept in Redis. */
export type LoginSlowDown = {
  /** Milliseconds this attempt must still wait (0: go ahead). Letting an attempt through claims the next slot. */
  wait(email: string, client: string, now: number): MaybePromise<number>
  failed(email: string, now: number): MaybePromise<void>
  succeeded(email: string, client: string, now: number): MaybePromise<void>
  /** Forgets an email entirely (its account was deleted). */
  forget(email: string): MaybePromise<void>
}

/** This process's own slow-down: every answer at once. */
export type LocalSlowDown = {
  [Method in keyof LoginSlowDown]: (...args: Parameters<LoginSlowDown[Method]>) => Awaited<ReturnType<LoginSlowDown[Method]>>
}

/** The wait after `failures` failures in the window: 2^(n-5) s from the fifth on, capped. */
export const delayAfter = (failures: number) =>
  failures < LOGIN_FAILURES_BEFORE_DELAY ? 0 : Math.min(MAX_DELAY_MS, 1000 * 2 ** (failures - LOGIN_FAILURES_BEFORE_DELAY))

/** Puts a key last in a Map's order (most recently used) and drops the oldest entries over `max`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key)
  map.set(key, value)
  while (map.size > max) map.delete(map.keys().next().value as K)
}

export function createLoginSlowDown(options: { maxAccounts?: number } = {}): LocalSlowDown {
  const maxAccounts = options.maxAccounts ?? 10_000
  const failures = new Map<string, Failures>()
  const known = new Map<string, string[]>()

  const current = (email: string, now: number): Failures | undefined => {
    const entry = failures.get(email)
    if (entry === undefined) return undefined
    const fresh = entry.times.findIndex((t) => now - t < WINDOW_MS)
    if (fresh === -1) {
      failures.delete(email)
      return undefined
    }
    if (fresh > 0) entry.times.splice(0, fresh)
    return entry
  }

  return {
    wait(email, client, now) {
      if (known.get(email)?.includes(client)) return 0
      const entry = current(email, now)
      if (entry === undefined || entry.times.length < LOGIN_FAILURES_BEFORE_DELAY) return 0
      if (now < entry.nextAt) return entry.nextAt - now
      // Attempts arriving together while this one's password is checked wait for its outcome's slot.
      entry.nextAt = now + delayAfter(entry.times.length)
      return 0
    },
    failed(email, now) {
      const entry = current(email, now) ?? { times: [], nextAt: 0 }
      entry.times.push(now)
      if (entry.times.length > MAX_FAILURES_KEPT) entry.times.shift()
      entry.nextAt = now + delayAfter(entry.times.length)
      remember(failures, email, entry, maxAccounts)
    },
    succeeded(email, client) {
      failures.delete(email)
      const addresses = (known.get(email) ?? []).filter((a) => a !== client)
      addresses.push(client)
      if (addresses.length > LOGIN_KNOWN_ADDRESSES) addresses.shift()
      remember(known, email, addresses, maxAccounts)
    },
    forget(email) {
      failures.delete(email)
      known.delete(email)
    },
  }
}
