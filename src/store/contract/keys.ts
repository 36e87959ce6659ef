// API keys: only a key's prefix and the SHA-256 of the whole key are stored.
import type { AccountRecord } from './accounts'
import type { OrgRecord, Role } from './orgs'

export type KeyRecord = {
  id: number
  /** The member who made it: it acts with that member's role. */
  accountId: number
  /** The organisation it spends for and acts in (the maker's personal one: `accountId`). */
  orgId: number
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
  /**
   * Looks a key up by the SHA-256 of the full key, with its maker's account, its organisation and the maker's
   * role there (null when the maker is no member any more: removal revokes, so only a race sees it).
   */
  findByHash(keyHash: string): Promise<{ key: KeyRecord; account: AccountRecord; org: OrgRecord; role: Role | null } | null>
  /** Active = not revoked and not expired at `now`; newest first. The account's keys of every organisation. */
  listActive(accountId: number, now: number): Promise<KeyRecord[]>
  /** Every active key of the organisation, whoever made it (its admins list them), newest first. */
  listActiveInOrg(orgId: number, now: number): Promise<KeyRecord[]>
  /** Revokes an active key of the organisation made by anyone (an admin's revocation); null when there is none. */
  revokeInOrg(orgId: number, prefix: string, now: number): Promise<KeyRecord | null>
  /**
   * Inserts a key of `orgId` (default: the personal one) unless the account already has `maxActive` active
   * keys in all (checked in the same transaction).
   */
  create(accountId: number, key: NewKey, now: number, maxActive: number, orgId?: number): Promise<KeyRecord | 'limit'>
  /** Revokes an active key of this account; null when there is none with that prefix. */
  revoke(accountId: number, prefix: string, now: number): Promise<KeyRecord | null>
  /**
   * Replaces an active key that was not rotated before (the new one is of the same organisation), in one transaction: the old key is revoked at
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
