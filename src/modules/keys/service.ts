// API keys of one account: list, create, revoke, rotate, and the public validity check. No HTTP here.
import type { CreditLedger } from '../../credits/service'
import { ApiError } from '../../shared/errors'
import { andThen } from '../../shared/maybe-promise'
import { iso } from '../../shared/time'
import type { AccountRecord, KeyRecord, Store } from '../../store/contract'
import type { AuthService } from '../auth/service'
import { mintUniqueKey, SAVE_KEY_MESSAGE } from './material'
import { MAX_ACTIVE_KEYS } from '../../shared/limits'

const DAY_MS = 86_400_000

export function toKeySummary(key: KeyRecord, lastUsed?: number) {
  const used = Math.max(key.lastUsedAt ?? 0, lastUsed ?? 0)
  return {
    prefix: key.prefix,
    label: key.label,
    created_at: iso(key.createdAt),
    expires_at: iso(key.expiresAt),
    last_used_at: used ? iso(used) : null,
  }
}

const expiresSeconds = (expiresAt: number | null) => (expiresAt === null ? null : Math.floor(expiresAt / 1000))

/** The short message of validate-key's plain-string 401, per reason. */
const VALIDATE_ERRORS = { invalid: 'invalid API key', expired: 'API key expired', disabled: 'account disabled', unverified: 'email not verified' } as const

const notFound = () => new ApiError('key_not_found', 'no active key of this account has that prefix')

const notRotatable = () =>
  new ApiError('key_not_found', 'no active key of this account that was not rotated already has that prefix (revoke a key in its grace period to stop it now)')

/** A key in its grace period still works, so it counts: without this an account could hold twice the limit. */
const graceOverLimit = () =>
  new ApiError(
    'key_limit_reached',
    `an account may have at most ${MAX_ACTIVE_KEYS} active keys, and a rotated key in its grace period is one until it expires; rotate with expire_old_in_seconds 0, or revoke a key first`,
  )

export function createKeysService(deps: {
  store: Store
  credits: CreditLedger
  auth: AuthService
  lastUsed: (keyId: number) => number | undefined
  clock: () => number
}) {
  const { store, credits, auth, clock } = deps

  return {
    async list(account: AccountRecord, now = clock()) {
      const keys = await store.keys.listActive(account.id, now)
      return { keys: keys.map((k) => toKeySummary(k, deps.lastUsed(k.id))) }
    },

    async create(account: AccountRecord, input: { label?: string | null; expires_in_days?: number | null }, now = clock()) {
      const label = input.label ? input.label : null
      const expiresAt = input.expires_in_days ? now + input.expires_in_days * DAY_MS : null
      const minted = await mintUniqueKey(store.keys.prefixExists, label, expiresAt)
      const key = await store.keys.create(account.id, minted.record, now, MAX_ACTIVE_KEYS)
      if (key === 'limit') throw new ApiError('key_limit_reached', `an account may have at most ${MAX_ACTIVE_KEYS} active keys; revoke or rotate one`)
      return { api_key: minted.apiKey, prefix: key.prefix, label: key.label, expires: expiresSeconds(key.expiresAt), message: SAVE_KEY_MESSAGE }
    },

    async get(account: AccountRecord, prefix: string, now = clock()) {
      const key = (await store.keys.listActive(account.id, now)).find((k) => k.prefix === prefix)
      if (!key) throw notFound()
      return toKeySummary(key, deps.lastUsed(key.id))
    },

    async revoke(account: AccountRecord, prefix: string, now = clock()) {
      const key = await store.keys.revoke(account.id, prefix, now)
      if (!key) throw notFound()
      auth.forget(account.id)
      return { prefix: key.prefix, revoked: true as const }
    },

    /**
     * The new key keeps the label and the expiry time of the old one (its remaining lifetime). The old key
     * stops at once, or keeps working `expireOldInSeconds` longer (never past its own expiry).
     */
    async rotate(account: AccountRecord, prefix: string, expireOldInSeconds = 0, now = clock()) {
      const minted = await mintUniqueKey(store.keys.prefixExists, null, null)
      const graceUntil = now + expireOldInSeconds * 1000
      const rotated = await store.keys.rotate(
        account.id,
        prefix,
        now,
        graceUntil,
        (old) => ({ ...minted.record, label: old.label, expiresAt: old.expiresAt }),
        MAX_ACTIVE_KEYS,
      )
      if (!rotated) throw notRotatable()
      if (rotated === 'limit') throw graceOverLimit()
      auth.forget(account.id)
      return {
        api_key: minted.apiKey,
        prefix: rotated.key.prefix,
        label: rotated.key.label,
        expires: expiresSeconds(rotated.key.expiresAt),
        message: SAVE_KEY_MESSAGE,
        revoked_prefix: rotated.old.prefix,
        old_key_expires_at: iso(rotated.old.revokedAt ?? rotated.old.expiresAt ?? now),
      }
    },

    /** validate-key: true with the balance, or the short reason for the plain-string 401. At once when the key and its count are in memory. */
    validate(apiKey: string, now = clock()) {
      return andThen(auth.check(apiKey.trim(), now), (result) => {
        if (!result.ok) return { valid: false as const, error: VALIDATE_ERRORS[result.reason] }
        const { account } = result.caller
        return andThen(credits.balance(account, now), (balance) => ({
          valid: true as const,
          plan: account.plan,
          credits_total: balance.total,
          credits_used: balance.used,
          credits_remaining: balance.remaining,
        }))
      })
    },
  }
}

export type KeysService = ReturnType<typeof createKeysService>
