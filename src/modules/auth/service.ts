// Resolves an X-API-Key header to its key and account, enforcing revocation and expiry.
import { ApiError } from '../../shared/errors'
import type { AccountRecord, KeyRecord, KeyStore } from '../../store/types'
import { API_KEY_PATTERN, hashKey } from '../keys/material'
import type { ActivityRecorder } from './activity'

export type Caller = { account: AccountRecord; key: KeyRecord }

export type KeyCheck = { ok: true; caller: Caller } | { ok: false; reason: 'invalid' | 'expired' }

export type AuthService = {
  /** Checks a key without side effects (validate-key). */
  check(apiKey: string, now: number): Promise<KeyCheck>
  /** Authenticates a request: throws the contract's 401s, records the call. */
  authenticate(header: string | null | undefined, now?: number): Promise<Caller>
}

export function createAuthService(keys: KeyStore, activity: ActivityRecorder, clock: () => number): AuthService {
  const check = async (apiKey: string, now: number): Promise<KeyCheck> => {
    if (!API_KEY_PATTERN.test(apiKey)) return { ok: false, reason: 'invalid' }
    const found = await keys.findByHash(hashKey(apiKey))
    if (!found || found.key.revokedAt !== null) return { ok: false, reason: 'invalid' }
    if (found.key.expiresAt !== null && found.key.expiresAt <= now) return { ok: false, reason: 'expired' }
    return { ok: true, caller: found }
  }

  return {
    check,
    async authenticate(header, now = clock()) {
      if (header === null || header === undefined || header.trim() === '') {
        throw new ApiError('missing_api_key', 'send your API key in the X-API-Key header')
      }
      const result = await check(header.trim(), now)
      if (!result.ok) {
        throw result.reason === 'expired'
          ? new ApiError('key_expired', 'this API key has expired; create a new key')
          : new ApiError('invalid_api_key', 'the API key is malformed, unknown or revoked')
      }
      activity.record(result.caller.account.id, result.caller.key.id, now)
      return result.caller
    },
  }
}
