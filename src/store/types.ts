// The storage contract, the same for every engine (SQLite in this folder, PostgreSQL in postgres/).
// Operations, not tables: each one that must be atomic is one call, so a second database is a new
// implementation of these interfaces and nothing else changes. Times are Unix ms. A write that cannot get
// the database within its bounded wait rejects with StoreBusyError (errors.ts); no HTTP in here.
import type { BatchStore } from './batches'
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

export interface ResetTokenStore {
  /**
   * Stores a new token hash and invalidates every older unused token of the account; true when it did.
   * With `cooldownMs`, a token of the account issued less than that before `now` stops it (checked in the
   * same transaction, so requests at once on any replica issue one). With a null account (an unknown
   * email), or in the cooldown, it rewrites a decoy row instead, in the same kind of durable transaction,
   * so all cost the same and the answer's time does not tell whether the account exists; false then.
   */
  issue(accountId: number | null, tokenHash: string, expiresAt: number, now: number, cooldownMs?: number): Promise<boolean>
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

/**
 * No credit could be held: `used` were charged in the period, and the rest are held by generations under
 * way, the earliest of whose holds lapses in `nextLapseInMs` unless renewed (null when none is live).
 */
export type HoldRefused = { kind: 'exhausted'; used: number; nextLapseInMs: number | null }

/** A hold's id, its refusal, or null: the account is gone. */
export type HoldResult = number | HoldRefused | null

/** A held credit: what charging it needs, also once its row has lapsed and been purged. */
export type HeldCredit = { id: number; accountId: number; period: string }

/**
 * Credits: charged counts per account and period, and holds. A hold is a row that counts as a spent credit
 * from the moment it is taken until it is charged (the row goes in the charge's transaction), released, or
 * until its `expiresAt`, which the process holding it moves on while its generation runs: the holds of a
 * killed process lapse by themselves, and no process keeps any credit state the others cannot see.
 */
export interface CreditStore {
  /**
   * True when the ledger may keep counts in memory and follow its own charges: every other charge and
   * grant reaches it through the change feed (SQLite: one serving process per file charges, alttext admin's
   * grants are in the feed; PostgreSQL: every charge notifies `charged`, every grant `credits`). False:
   * counts are read from the database each time.
   */
  readonly keepCounts: boolean
  /** Credits charged to the account in the period, and credits granted to it for the period. */
  counts(accountId: number, period: string): Promise<PeriodCredits>
  /**
   * Holds one credit of `period`, in one transaction: counts the credits charged in the period and the
   * account's holds of it not expired at `now`; when they reach `total`, inserts nothing and returns
   * HoldRefused, else inserts a hold expiring at `expiresAt` and returns its id. Null when the account no
   * longer exists. `batchItemId`: the batch item whose claim holds it; a later claim of that item ends it
   * (BatchStore.claim). On PostgreSQL `now` and `expiresAt` are judged by the database's clock
   * (PostgresStoreOptions.clock): the hold lasts `expiresAt - now` from the database's now. Exact under concurrency from any number of processes: SQLite admits one writer at a
   * time; PostgreSQL must first lock the account's row (SELECT … FROM accounts WHERE id = $1 FOR NO KEY
   * UPDATE, which excludes every other such lock) and then count, in the same transaction, so two holds of
   * one account never count past each other.
   * Need not be durable: a hold lost in a crash belonged to a request that crash ended.
   */
  hold(accountId: number, period: string, total: number, now: number, expiresAt: number, batchItemId?: number | null): Promise<HoldResult>
  /** How many of the account's holds of `period` are live at `now` (credits neither charged nor free). */
  held(accountId: number, period: string, now: number): Promise<number>
  /**
   * Charges the held credit and deletes the hold, in one transaction, durable when it returns; returns the
   * credits charged in the period, or null when the account no longer exists (nothing charged). It charges
   * whether or not the hold's row is still there: a hold that lapsed and was purged still charges, as its
   * answer was produced. Called at most once per hold (the ledger settles each once) and not retried after
   * an error that leaves unknown whether the transaction committed, so a credit is never charged twice.
   */
  commitHold(hold: HeldCredit): Promise<number | null>
  /** Deletes the hold (nothing charged); nothing happens when it is gone already. Need not be durable. */
  releaseHold(holdId: number): Promise<void>
  /**
   * Moves the expiry of these holds (those still there) to `expiresAt`, never earlier (on PostgreSQL:
   * `expiresAt - now` from the database's now). Need not be durable.
   */
  renewHolds(holdIds: number[], now: number, expiresAt: number): Promise<void>
  /** Deletes the holds expired at `now`; returns how many. */
  purgeExpiredHolds(now: number): Promise<number>
  /**
   * Called once at start, before this process holds anything: deletes the holds no live process can
   * own; returns how many. SQLite, in the process that serves the file (it holds the file's lock): every
   * hold, as one found at start belongs to a process that died; opened beside that process (alttext
   * admin): none. An engine that several processes share deletes none (returns 0): holds lapse by expiry.
   */
  endOrphanedHolds(): Promise<number>
}

export type CachedAltText = {
  /** '' for an image the model judged purely decorative (decorativeReason says why). */
  altText: string
  /** Why the model judged the image purely decorative; null (absent in entries of before) when it did not. */
  decorativeReason?: string | null
  /** The text the image shows, from a structured answer; null (absent in entries of before) when none or unknown. */
  textInImage?: string | null
  /** The long description of a complex image (asked with long_description); null (absent in entries of before) when none. */
  longDescription?: string | null
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

// Browser sessions and the account operations that end them (password change, account deletion). Only
// the SHA-256 of a session's token is stored.

export type SessionRecord = {
  id: number
  accountId: number
  createdAt: number
  lastSeenAt: number
  /** The absolute end; the idle end is `lastSeenAt` + the idle time. */
  expiresAt: number
}

/** What deleting an account removed, by kind. */
export type RemovedAccount = { keys: number; sessions: number; history: number }

export interface SessionStore {
  create(accountId: number, tokenHash: string, now: number, expiresAt: number): Promise<SessionRecord>
  /** The session with this token hash and its account; null when there is none (expiry is the caller's check). */
  findByHash(tokenHash: string): Promise<{ session: SessionRecord; account: AccountRecord } | null>
  /** Records a use of the session (the caller throttles how often). */
  touch(sessionId: number, now: number): Promise<void>
  /** Ends the session with this token hash; false when there was none. */
  end(tokenHash: string): Promise<boolean>
  /** Ends every session of the account, except `keepSessionId` when given; returns how many ended. */
  endAll(accountId: number, keepSessionId: number | null): Promise<number>
  /**
   * In one transaction: sets the password, ends every other session of the account (keeping
   * `keepSessionId`) and invalidates its unused reset tokens. Keys stay. Returns the sessions ended.
   */
  changePassword(accountId: number, passwordHash: string, keepSessionId: number, now: number): Promise<number>
  /** In one transaction: deletes the account with everything that belongs to it; null when it was already gone. */
  deleteAccount(accountId: number): Promise<RemovedAccount | null>
  /** Deletes sessions past their absolute end or idle for `idleMs`. */
  purgeExpired(now: number, idleMs: number): Promise<number>
}

// Per-account daily counts of alt-text outcomes and the account's latest generations. No image bytes.

/** One generation as kept in the history. `createdAt` is Unix ms. */
export type HistoryRecord = {
  /** Opaque, random: says nothing about how many generations the service has made. */
  id: string
  accountId: number
  createdAt: number
  source: 'url' | 'upload'
  format: 'jpeg' | 'png' | 'gif' | 'webp'
  /** Size of the image file as received. */
  bytes: number
  width: number
  height: number
  altText: string
  decorative: boolean
  language: string
  style: string
  maxLength: number
  cached: boolean
  characterCount: number
}

/** Outcome counts of one account on one UTC day (`YYYY-MM-DD`). */
export type DailyCounts = { day: string; generations: number; cached: number; failed: number }

/** What one account gathered since the last write. */
export type AccountBatch = {
  /** The earliest time of anything in it: an account created after that is not the one it belongs to. */
  since: number
  /** day → counts to add */
  days: Map<string, Omit<DailyCounts, 'day'>>
  /** New history records, oldest first. */
  records: HistoryRecord[]
}

/** account id → what it gathered */
export type HistoryBatch = Map<number, AccountBatch>

export interface HistoryStore {
  /**
   * In one transaction: adds the counts, inserts the records, keeps only the newest `keep` records of
   * every account in the batch and drops its daily rows before `oldestDay`. An account deleted since
   * the batch was gathered is skipped, also when a new account has been given its id since.
   */
  apply(batch: HistoryBatch, keep: number, oldestDay: string): Promise<void>
  /** The account's stored daily rows from `from` to `to` (both included, `YYYY-MM-DD`); days without a row are absent. */
  days(accountId: number, from: string, to: string): Promise<DailyCounts[]>
  /** The account's records, newest first, at most `limit`. */
  list(accountId: number, limit: number): Promise<HistoryRecord[]>
  /** Deletes one record of the account; false when it has none with that id. */
  remove(accountId: number, id: string): Promise<boolean>
  /** Deletes every record of the account (the daily counts stay); returns how many. */
  clear(accountId: number): Promise<number>
}

// What the operator's commands (alttext admin) change, and the feed of account changes by which a serving
// process learns of writes made by another process.

/** An account as the operator lists it: its active keys and its last activity. */
export type AccountOverview = {
  account: AccountRecord
  activeKeys: number
  /** The latest use of any of its keys or sessions; null when never used. */
  lastActiveAt: number | null
}

export interface AdminStore {
  /** Every account (or the one with `accountId`), oldest first, with the keys active at `now`. */
  overview(now: number, accountId?: number): Promise<AccountOverview[]>
  /**
   * Disables the account (keeping the first time it was disabled), ending its sessions and unused reset
   * tokens in the same transaction; or, with null, enables it. Null when there is no such account.
   */
  setDisabled(accountId: number, disabledAt: number | null): Promise<AccountRecord | null>
  /** Sets the plan's name and credits per period (null: the free plan's). Null when there is no such account. */
  setPlan(accountId: number, plan: string, monthlyCredits: number | null): Promise<AccountRecord | null>
  /** Adds one-off credits to the account's period; returns its counts then, or null when there is no such account. */
  grant(accountId: number, period: string, credits: number): Promise<PeriodCredits | null>
}

/**
 * What changed: the account's row (plan, credits, disabled), the account deleted, a key revoked, credits
 * granted, a credit charged (PostgreSQL only: there another replica may have charged it).
 */
export type AccountChangeKind = 'account' | 'deleted' | 'keys' | 'credits' | 'charged'
export type AccountChange = { seq: number; accountId: number; change: AccountChangeKind }

export interface AccountChangeFeed {
  /** The number of the latest change (0 when there is none). */
  latest(): Promise<number>
  /**
   * Whether anything may have changed since the previous call, without reading a table: SQLite's counter
   * of other connections' commits, or PostgreSQL's notifications having arrived.
   */
  changedElsewhere(): Promise<boolean>
  /**
   * The changes after `seq`, in order. A gap before the first means some were lost (SQLite keeps the last
   * 1000; a PostgreSQL listener that reconnected missed what was sent meanwhile): forget every account.
   */
  since(seq: number): Promise<AccountChange[]>
  /**
   * Calls `heard` as soon as a change arrives, where the engine pushes them (PostgreSQL's notifications), so
   * it is applied at once rather than at the next poll; SQLite has no push (absent).
   */
  onChange?(heard: () => void): void
  /**
   * Where the engine can tell that its pushes stopped arriving (PostgreSQL: this replica's own heartbeat,
   * sent through the pool, does not come back on the listening connection): whether every change committed
   * up to `staleMs` ago has been heard. SQLite reads a table each poll and cannot miss one (absent).
   */
  hearing?(): FeedHearing
}

/**
 * `heard`: every change committed before `heardUpToAgoMs` ago has been heard (a notification committed after
 * the heartbeat is heard after it), and that is at most the feed's staleness bound. While not heard, what
 * memory keeps of accounts may be stale: read them from the database.
 */
export type FeedHearing = { heard: boolean; heardUpToAgoMs: number | null; staleMs: number }

// Counts of what the database holds, for /metrics: read at each scrape, so each must stay cheap.

export type StoreCounts = {
  accounts: number
  /** Batch items waiting for the runner, and claimed by it. */
  batchItems: { pending: number; running: number }
}

export interface CountsStore {
  counts(): Promise<StoreCounts>
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
  /** The schema once opened and the migrations this opening applied, for the start-up log (absent in test doubles). */
  schema?: { version: number; applied: number[] }
  /** Readiness: one small write that really commits (a full disk, a damaged page or a held lock fail it). */
  probe(): Promise<void>
  /** Closes the database (and releases SQLite's one-process-per-file lock); PostgreSQL's pool closes asynchronously. */
  close(): void | Promise<void>
}
