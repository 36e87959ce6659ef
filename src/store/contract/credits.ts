// Credits: what an account was charged per period, and the holds of generations under way.
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
