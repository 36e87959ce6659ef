// API keys: only a key's prefix and the SHA-256 of the whole key are stored.
import type { AccountRecord } from './accounts'

export type KeyRecord = {
  id: number
  accountId: number
  prefix: string
  label: string | null
  createdAt: number
  expiresAt: number | null
  revokedAt: number | null
  lastUsedAt: number | null
}

/** What is stored for a new key: never the key itself, only its SHA-256. */
export type NewKey = {
  prefix: string
  keyHash: string
  label: string | null
  expiresAt: number | null
}

export interface KeyStore {
  /** Looks a key up by the SHA-256 of the full key, with its account. */
  findByHash(keyHash: string): Promise<{ key: KeyRecord; account: AccountRecord } | null>
  /** Active = not revoked and not expired at `now`; newest first. */
  listActive(accountId: number, now: number): Promise<KeyRecord[]>
  /** Inserts a key unless the account already has `maxActive` active keys (checked in the same transaction). */
  create(accountId: number, key: NewKey, now: number, maxActive: number): Promise<KeyRecord | 'limit'>
  /** Revokes an active key of this account; null when there is none with that prefix. */
  revoke(accountId: number, prefix: string, now: number): Promise<KeyRecord | null>
  /**
   * Replaces an active key that was not rotated before, in one transaction: the old key is revoked at
   * once, or with `graceUntil` later than `now` keeps working until then (or its own earlier expiry).
   * `makeKey` sees the old key as it was. Null when there is no such key; `'limit'` when a grace period
   * was asked for and the account already has `maxActive` active keys (a key in its grace period is
   * active, so the new one would be one too many).
   */
  rotate(
    accountId: number,
    prefix: string,
    now: number,
    graceUntil: number,
    makeKey: (old: KeyRecord) => NewKey,
    maxActive: number,
  ): Promise<{ old: KeyRecord; key: KeyRecord } | null | 'limit'>
  prefixExists(prefix: string): Promise<boolean>
}
