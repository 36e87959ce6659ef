// Resolves an X-API-Key header to its key and account, enforcing revocation, expiry, a disabled account and
// an email address not yet confirmed.
// Known keys are cached in memory: a request then costs no database read. Every revocation in this
// process (revoke, rotate, password reset) calls `forget`, and so does the change feed for what another
// process changed (alttext admin), so a revoked key or a disabled account stops working at once;
// expiry is checked against the cached record on every request. While the feed is not heard (`trusted`
// false), every request reads its key from the database and nothing is cached; an entry lives at most
// `cacheTtlMs` whatever the feed says. A key in memory is answered at once,
// without a promise (see shared/maybe-promise.ts).
import { ApiError } from '../../shared/errors'
import { andThen, type MaybePromise } from '../../shared/maybe-promise'
import type { AccountRecord, KeyRecord, KeyStore, OrgRecord, Role, SessionRecord } from '../../store/contract'
import { API_KEY_PATTERN, hashKey } from '../keys/material'
import type { ActivityRecorder } from './activity'

/**
 * Who is calling: by key (`key` set) or by browser session (`session` set); a key, when sent, wins. `org` is
 * the organisation the call acts in (it pays, it owns what is made) and `role` the caller's role there.
 */
export type Caller = { account: AccountRecord; key: KeyRecord | null; session: SessionRecord | null; org: OrgRecord; role: Role }

type KeyCaller = { account: AccountRecord; key: KeyRecord; session: null; org: OrgRecord; role: Role }

export type KeyCheck =
  | { ok: true; caller: KeyCaller }
  | { ok: false; reason: 'invalid' | 'expired' | 'disabled' }
  /** A valid key of an account that has not followed its mailed link: only sign-in and the resend take it. */
  | { ok: false; reason: 'unverified'; caller: KeyCaller }

export type AuthService = {
  /** Checks a key without side effects (validate-key). At once when the key is in memory. */
  check(apiKey: string, now: number): MaybePromise<KeyCheck>
  /**
   * Authenticates a request: throws (or rejects with) the contract's 401s and 403s, records the call. At once
   * when the key is in memory. `unverified`: an account still waiting for its mailed link passes too.
   */
  authenticate(header: string | null | undefined, options?: { now?: number; unverified?: boolean }): MaybePromise<Caller>
  /**
   * Drops cached keys of an account (or organisation) after any of its keys was revoked, its memberships or
   * the account changed; without an id, every cached key.
   */
  forget(accountId?: number): void
}

type CacheEntry = { caller: KeyCaller; cachedAt: number }

const INVALID: KeyCheck = { ok: false, reason: 'invalid' }

export const missingCredentials = () => new ApiError('missing_api_key', 'send your API key in the X-API-Key header or sign in')

/** The one refusal of the keys and sessions of an account that has not followed its mailed link yet. */
export const emailNotVerified = () =>
  new ApiError('email_not_verified', 'confirm your email address first: open the link mailed to it (POST /api/verify-email/resend mails a new one)')

export const orgNotFound = () =>
  new ApiError('org_not_found', 'no organisation with this id that you belong to (GET /api/orgs lists yours; a key acts only in its own)')

export const forbiddenForRole = (role: Role, needed: Role) =>
  new ApiError('forbidden_for_role', `your role in this organisation is ${role}; this needs ${needed} or above`)

/** The one refusal of a disabled account's keys, sessions and sign-ins. */
export const accountDisabled = () => new ApiError('account_disabled', 'this account is disabled by the operator of this service; ask them to enable it again')

function verdict(found: KeyCaller | null, now: number): KeyCheck {
  if (!found || found.key.revokedAt !== null) return INVALID
  if (found.key.expiresAt !== null && found.key.expiresAt <= now) return { ok: false, reason: 'expired' }
  if (found.account.disabledAt !== null || found.org.account.disabledAt !== null) return { ok: false, reason: 'disabled' }
  if (found.account.emailVerifiedAt === null) return { ok: false, reason: 'unverified', caller: found }
  return { ok: true, caller: found }
}

export function createAuthService(
  keys: KeyStore,
  activity: ActivityRecorder,
  clock: () => number,
  options: { cacheSize?: number; cacheTtlMs?: number; trusted?: () => boolean } = {},
): AuthService {
  const cacheSize = options.cacheSize ?? 10_000
  // A safety net only: in-process revocations already evict at once, and the change feed others'.
  const cacheTtlMs = options.cacheTtlMs ?? 60_000
  const trusted = options.trusted ?? (() => true)
  const cache = new Map<string, CacheEntry>()
  /**
   * Reads under way, by key hash: the requests of a busy key that arrive while it is read (its first use,
   * or each time its entry ages out) share one read instead of queueing one each for the database's pool.
   */
  const reading = new Map<string, { epoch: number; read: Promise<KeyCaller | null> }>()
  /** Raised by each forget: a key read before it may be older than the change that caused it. */
  let forgets = 0

  const lookup = (keyHash: string, now: number): MaybePromise<KeyCaller | null> => {
    const caching = trusted()
    const hit = caching ? cache.get(keyHash) : undefined
    if (hit && now - hit.cachedAt < cacheTtlMs) return hit.caller
    const epoch = forgets
    // Only a read begun after the latest forget may be shared: an older one may miss the change.
    const under = reading.get(keyHash)
    if (under && under.epoch === epoch && caching) return under.read
    const read = keys.findByHash(keyHash).then(
      (found) => {
        if (reading.get(keyHash)?.read === read) reading.delete(keyHash)
        // A maker no longer a member (its removal revokes its keys: only a race sees this) has no caller.
        const caller: KeyCaller | null = found?.role ? { account: found.account, key: found.key, session: null, org: found.org, role: found.role } : null
        if (caller && caller.key.revokedAt === null && epoch === forgets && caching && trusted()) {
          cache.delete(keyHash)
          cache.set(keyHash, { caller, cachedAt: now })
          if (cache.size > cacheSize) cache.delete(cache.keys().next().value!)
        } else cache.delete(keyHash)
        return caller
      },
      (error: unknown) => {
        if (reading.get(keyHash)?.read === read) reading.delete(keyHash)
        throw error
      },
    )
    reading.set(keyHash, { epoch, read })
    return read
  }

  const check = (apiKey: string, now: number): MaybePromise<KeyCheck> => {
    if (!API_KEY_PATTERN.test(apiKey)) return INVALID
    return andThen(lookup(hashKey(apiKey), now), (found) => verdict(found, now))
  }

  const admitted = (result: KeyCheck, unverified: boolean): KeyCaller => {
    if (result.ok) return result.caller
    if (result.reason === 'unverified') {
      if (unverified) return result.caller
      throw emailNotVerified()
    }
    if (result.reason === 'disabled') throw accountDisabled()
    throw result.reason === 'expired'
      ? new ApiError('key_expired', 'this API key has expired; create a new key')
      : new ApiError('invalid_api_key', 'the API key is malformed, unknown or revoked')
  }

  const admit = (result: KeyCheck, now: number, unverified: boolean): Caller => {
    const caller = admitted(result, unverified)
    // Calls by key are counted (api_calls_today: "requests that authenticated with any key"), for the
    // organisation the key acts in (its usage is the organisation's); session calls are not.
    activity.record(caller.org.id, caller.key.id, now)
    return caller
  }

  return {
    check,
    authenticate(header, options = {}) {
      const now = options.now ?? clock()
      const apiKey = header?.trim()
      if (!apiKey) throw missingCredentials()
      return andThen(check(apiKey, now), (result) => admit(result, now, options.unverified === true))
    },
    forget(accountId) {
      forgets++
      if (accountId === undefined) return cache.clear()
      for (const [hash, entry] of cache) if (entry.caller.account.id === accountId || entry.caller.org.id === accountId) cache.delete(hash)
    },
  }
}
