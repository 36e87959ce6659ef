// What the operator's commands (alttext admin) change, and the feed of account changes by which a serving
// process learns of writes made by another process.
import type { AccountRecord } from './accounts'
import type { PeriodCredits } from './credits'

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
