// The storage contract. Operations, not tables: each one that must be atomic is one call, so a second
// database is a new implementation of this interface and nothing else changes. Times are Unix ms.
// A write that cannot get the database within its bounded wait rejects with ApiError 'database_busy'.
import type { AccountChangeFeed, AdminStore } from './admin'
import type { BatchStore } from './batches'
import type { CountsStore } from './counts'
import type { HistoryStore } from './history'
import type { SessionStore } from './sessions'
import type { WebhookStore } from './webhooks'

/** `free` unless an operator set another plan (alttext admin plans set). */
export const FREE_PLAN = 'free'

export type AccountRecord = {
  id: number
  email: string
  passwordHash: string
  /** The plan's name: `free`, or the name an operator gave a monthly allowance. */
  plan: string
  /** Credits per period of the account's plan; null: the free plan's (ALTTEXT_FREE_CREDITS). */
  monthlyCredits: number | null
  /** When an operator disabled the account; null while it is enabled. */
  disabledAt: number | null
  createdAt: number
  /** When the account proved its mailbox, or was made without that being asked; null while it waits for the mailed link. */
  emailVerifiedAt: number | null
}

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

export type ActivityBatch = {
  /** account id → day (YYYY-MM-DD, UTC) → number of authenticated calls */
  calls: Map<number, Map<string, number>>
  /** key id → last use time */
  lastUsed: Map<number, number>
}

export interface AccountStore {
  /**
   * Creates the account and its first key atomically; null when the email is taken. `emailVerifiedAt`:
   * `now` unless given (no proof asked); null makes an account that waits for its mailed link.
   */
  createWithKey(
    email: string,
    passwordHash: string,
    plan: string,
    key: NewKey,
    now: number,
    emailVerifiedAt?: number | null,
  ): Promise<{ account: AccountRecord; key: KeyRecord } | null>
  findByEmail(email: string): Promise<AccountRecord | null>
  findById(id: number): Promise<AccountRecord | null>
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
   * `makeKey` sees the old key as it was. Null when there is no such key.
   */
  rotate(
    accountId: number,
    prefix: string,
    now: number,
    graceUntil: number,
    makeKey: (old: KeyRecord) => NewKey,
  ): Promise<{ old: KeyRecord; key: KeyRecord } | null>
  prefixExists(prefix: string): Promise<boolean>
}

export interface ResetTokenStore {
  /**
   * Stores a new token hash and invalidates every older unused token of the account. With a null account
   * (an unknown email) it rewrites a decoy row instead, in the same kind of durable transaction, so both
   * cost the same and the answer's time does not tell whether the account exists.
   */
  issue(accountId: number | null, tokenHash: string, expiresAt: number, now: number): Promise<void>
  /** Is there an unused, unexpired token with this hash? A read: lets a bogus token be refused before any hashing. */
  isUsable(tokenHash: string, now: number): Promise<boolean>
  /**
   * In one transaction: checks the token is unused and unexpired, marks it used, sets the new password,
   * marks the account verified (the token came by mail), revokes every key of the account, ends every
   * session of it and inserts `key`. Null when the token is not valid.
   */
  consume(tokenHash: string, now: number, passwordHash: string, key: NewKey): Promise<{ account: AccountRecord; key: KeyRecord } | null>
}

export interface EmailVerificationStore {
  /** Stores a new token hash of the account and ends its older unused ones. */
  issue(accountId: number, tokenHash: string, expiresAt: number, now: number): Promise<void>
  /** When the account's newest token was issued; null when none was. */
  lastIssuedAt(accountId: number): Promise<number | null>
  /**
   * In one transaction: checks the token is unused and unexpired, marks it and every other token of the
   * account used, and marks the account verified. The account as it is then; null when the token is not valid.
   */
  consume(tokenHash: string, now: number): Promise<AccountRecord | null>
}

/** An account's credits of one period: charged, and granted by an operator on top of the plan's. */
export type PeriodCredits = { used: number; granted: number }

export interface CreditStore {
  /** Credits charged to the account in the period, and credits granted to it for the period. */
  counts(accountId: number, period: string): Promise<PeriodCredits>
  /**
   * Charges one credit (one statement, durable when it returns); returns the credits charged in the
   * period, or null when the account no longer exists (deleted while its request ran).
   */
  charge(accountId: number, period: string): Promise<number | null>
}

export type CachedAltText = {
  /** '' for an image the model judged purely decorative (decorativeReason says why). */
  altText: string
  /** Why the model judged the image purely decorative; null (absent in entries of before) when it did not. */
  decorativeReason?: string | null
  /** The text the image shows, from a structured answer; null (absent in entries of before) when none or unknown. */
  textInImage?: string | null
  wcagCompliant: boolean
  wcagIssues: string[]
  language: string
  model: string
  width: number
  height: number
  format: 'jpeg' | 'png' | 'gif' | 'webp'
}

export interface AltTextCacheStore {
  get(cacheKey: string, now: number): Promise<CachedAltText | null>
  put(cacheKey: string, entry: CachedAltText, now: number, expiresAt: number): Promise<void>
  purgeExpired(now: number): Promise<number>
}

export interface ActivityStore {
  /** Applies a batch of call counts and last-used times in one transaction. */
  apply(batch: ActivityBatch): Promise<void>
  callsOn(accountId: number, day: string): Promise<number>
}

export interface Store {
  accounts: AccountStore
  keys: KeyStore
  resetTokens: ResetTokenStore
  verifications: EmailVerificationStore
  credits: CreditStore
  activity: ActivityStore
  cache: AltTextCacheStore
  sessions: SessionStore
  history: HistoryStore
  batches: BatchStore
  webhooks: WebhookStore
  counts: CountsStore
  /** The operator's changes (alttext admin). */
  admin: AdminStore
  /** Account changes written by any process, for the serving one to drop what it keeps in memory. */
  changes: AccountChangeFeed
  /** Readiness: one small write that really commits (a full disk, a damaged page or a held lock fail it). */
  probe(): Promise<void>
  /** Closes the database and releases the one-process-per-file lock. */
  close(): void
}
