// Credits of an account in the current billing period (calendar month, UTC). A generation first holds a
// credit (so concurrent requests can never overspend), and the hold becomes a charge only when the
// answer is ready; failures release it. Holds are rows of the credit store that every process counts
// (see CreditStore): the check and the hold are one transaction there, exact across processes, and the
// holds of a process that was killed lapse after CREDIT_HOLD_SECONDS (SQLite's one serving process drops
// them at its start). While a hold lives, this ledger renews it on a timer of its own (a batch item may
// wait long for a model slot).
import { ApiError } from '../shared/errors'
import { CREDIT_HOLD_MS } from '../shared/limits'
import { andThen, type MaybePromise } from '../shared/maybe-promise'
import { createCalendar, type Period } from '../shared/time'
import type { AccountRecord, CreditStore, PeriodCredits } from '../store/contract'

/** `total` is the plan's credits plus `granted`, the operator's one-off credits of this period. */
export type Balance = { total: number; used: number; remaining: number; granted: number; period: Period }

/**
 * A durable charge of one credit of `period` per hold of `holdIds` made by the caller, in a transaction of
 * its own that also records what was paid for (a batch item's result) and deletes those holds (see
 * CreditStore.commitHold): returns the period's charged count, or null when the account no longer exists.
 */
export type ChargeWith = (period: string, total: number, holdIds: number[]) => Promise<number | null>

export type CreditHold = {
  /** The hold's row in the credit store. */
  readonly id: number
  /**
   * Charges the held credit, and those of `alongside` (other holds of this ledger and account, the
   * languages of one answer); returns the credits left in the period. `chargeWith` makes the charge,
   * of all of them in one transaction, instead of the credit store's own statement (the ledger's counts
   * follow it the same way).
   */
  commit(chargeWith?: ChargeWith, alongside?: CreditHold[]): Promise<number>
  release(): Promise<void>
}

export interface CreditLedger {
  /** At once when the period's counts are in memory (see shared/maybe-promise.ts). */
  balance(account: AccountRecord, now: number): MaybePromise<Balance>
  /**
   * The balance, or 429 quota_exceeded when no credit of the period is left: a refusal before any
   * work. Credits held by generations under way still count as left (they may be released);
   * `reserve` is the check that holds.
   */
  requireCredit(account: AccountRecord, now: number): MaybePromise<Balance>
  /**
   * The balance with the credits held by generations under way (any process's) taken out of `remaining`:
   * what a new generation may still take (GET /api/usage). Their holds are read again at most a second
   * apart, and at once after this process took or settled one of the account's.
   */
  available(account: AccountRecord, now: number): MaybePromise<Balance>
  /**
   * Holds one credit, or throws 429 quota_exceeded: with Retry-After until the period ends when the
   * charged credits use it up, or CreditsHeldError when credits held by generations under way take the
   * rest (they may be released). `batchItemId`: the batch item whose claim holds it (a takeover of the
   * item ends the hold, BatchStore.claim).
   */
  reserve(account: AccountRecord, now: number, batchItemId?: number): Promise<CreditHold>
  /**
   * Drops the counts kept of an account: it was deleted (SQLite may give its id to the next account), or
   * another process changed them (an operator's grant). Without an id: of every account.
   */
  forget(accountId?: number): void
}

// Counts are kept in memory once read (see CreditStore.keepCounts): a commit updates the memory too and
// reads cost no query. Grants come from the operator's process and, on PostgreSQL, charges from other
// replicas; the change feed (accounts/changes.ts) makes this ledger forget the account's counts then.
// While the feed is not heard (`trusted` false) counts are read each time and not kept; kept counts are
// read again after COUNTS_MAX_AGE_MS whatever the feed says, so a change it missed unnoticed heals.
const COUNTS_CACHE_SIZE = 10_000
export const COUNTS_MAX_AGE_MS = 60_000
/** Holds are renewed this often while they live: a third of their life, so two renewals may fail in a row. */
const RENEW_EVERY_MS = CREDIT_HOLD_MS / 3

/** Held credits are read again at most this often for GET /api/usage (another process's holds). */
const HELD_FRESH_MS = 1000

/**
 * 429 quota_exceeded while some of the credits are only held by generations under way (any process's):
 * they come back when a generation fails or its process died and its hold lapses, so Retry-After says
 * when the earliest hold lapses (`retryInMs`), not when the period ends.
 */
export class CreditsHeldError extends ApiError {
  constructor(
    readonly retryInMs: number,
    total: number,
    used: number,
    period: Period,
  ) {
    const seconds = Math.max(1, Math.ceil(retryInMs / 1000))
    super(
      'quota_exceeded',
      `all ${total} credits of this period are used (${used}) or held by generations under way; held credits that are not charged come back within ${seconds} s; the period ends ${new Date(period.end).toISOString()}`,
      { retryAfterSeconds: seconds },
    )
  }
}

function quotaExceeded(total: number, period: Period, now: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil((period.end - now) / 1000))
  return new ApiError('quota_exceeded', `all ${total} credits of this period are used; the period ends ${new Date(period.end).toISOString()}`, {
    retryAfterSeconds: retryAfter,
  })
}

const accountGone = () => new ApiError('invalid_api_key', 'the account was deleted while this request ran; nothing was charged')

/** `clock` dates the renewals of holds; `now` of each call dates everything else. */
export function createCreditLedger(store: CreditStore, freeCredits: number, clock: () => number = Date.now, trusted: () => boolean = () => true): CreditLedger {
  const { periodOf } = createCalendar()
  /** The plan's credits per period: the operator's allowance, else the free plan's. */
  const allowance = (account: AccountRecord) => account.monthlyCredits ?? freeCredits
  /** Counts by account and period, with when they were read. */
  const counts = new Map<string, PeriodCredits & { readAt: number }>()
  /** Raised by each forget: counts read before it may be older than the change that caused it. */
  let forgets = 0
  const remember = (key: string, read: PeriodCredits, readAt: number) => {
    counts.delete(key)
    counts.set(key, { ...read, readAt })
    if (counts.size > COUNTS_CACHE_SIZE) counts.delete(counts.keys().next().value!)
  }
  const countsIn = (accountId: number, period: string): MaybePromise<PeriodCredits> => {
    if (!store.keepCounts) return store.counts(accountId, period)
    const key = `${accountId}:${period}`
    const caching = trusted()
    const readAt = clock()
    const cached = caching ? counts.get(key) : undefined
    if (cached !== undefined && readAt - cached.readAt < COUNTS_MAX_AGE_MS) return cached
    const epoch = forgets
    return store.counts(accountId, period).then((read) => {
      if (epoch === forgets && caching && trusted()) remember(key, read, readAt)
      else counts.delete(key)
      return read
    })
  }
  const balanceOf = (account: AccountRecord, period: Period, read: PeriodCredits): Balance => {
    const total = allowance(account) + read.granted
    return { total, used: read.used, remaining: Math.max(0, total - read.used), granted: read.granted, period }
  }
  const balance = (account: AccountRecord, now: number): MaybePromise<Balance> => {
    const period = periodOf(now)
    return andThen(countsIn(account.id, period.id), (read) => balanceOf(account, period, read))
  }

  // Holds of a process that died before this one started are dropped first (where the store can tell).
  const started = store.endOrphanedHolds().catch(() => 0)

  /** The holds of this process not yet settled (hold id → account id), renewed on the timer that runs while there are any. */
  const live = new Map<number, number>()
  /** How to mark a live hold settled when another hold's commit charged it (see CreditHold.commit's `alongside`). */
  const settlers = new Map<number, () => void>()
  /** Live holds of an account's period as last read (any process's), for `available`; dropped when this process takes or settles one. */
  const heldRead = new Map<string, { held: number; at: number }>()
  const heldIn = (accountId: number, period: string, now: number): MaybePromise<number> => {
    const key = `${accountId}:${period}`
    const read = heldRead.get(key)
    if (read !== undefined && now - read.at < HELD_FRESH_MS && now >= read.at) return read.held
    const epoch = heldEpoch
    return store.held(accountId, period, now).then((held) => {
      if (epoch === heldEpoch) {
        heldRead.delete(key)
        heldRead.set(key, { held, at: now })
        if (heldRead.size > COUNTS_CACHE_SIZE) heldRead.delete(heldRead.keys().next().value!)
      }
      return held
    })
  }
  /** Raised by each change of held credits known here: a read before it may miss that change. */
  let heldEpoch = 0
  const heldChanged = (accountId: number) => {
    heldEpoch++
    for (const key of heldRead.keys()) if (key.startsWith(`${accountId}:`)) heldRead.delete(key)
  }
  let renewTimer: ReturnType<typeof setInterval> | null = null
  let renewing = false
  const renew = () => {
    if (renewing || live.size === 0) return
    renewing = true
    const now = clock()
    // A failed renewal is tried again at the next tick; the hold lapses only after two more fail.
    void store
      .renewHolds([...live.keys()], now, now + CREDIT_HOLD_MS)
      .catch(() => {})
      .finally(() => {
        renewing = false
      })
  }
  const track = (holdId: number, accountId: number) => {
    live.set(holdId, accountId)
    heldChanged(accountId)
    if (renewTimer === null) {
      renewTimer = setInterval(renew, RENEW_EVERY_MS)
      renewTimer.unref()
    }
  }
  const untrack = (holdId: number) => {
    const accountId = live.get(holdId)
    live.delete(holdId)
    if (accountId !== undefined) heldChanged(accountId)
    if (live.size === 0 && renewTimer !== null) {
      clearInterval(renewTimer)
      renewTimer = null
    }
  }

  return {
    balance,

    requireCredit(account, now) {
      return andThen(balance(account, now), (current) => {
        if (current.remaining === 0) throw quotaExceeded(current.total, current.period, now)
        return current
      })
    },

    available(account, now) {
      const period = periodOf(now)
      return andThen(balance(account, now), (current) =>
        andThen(heldIn(account.id, period.id, now), (held) => ({ ...current, remaining: Math.max(0, current.remaining - held) })),
      )
    },

    async reserve(account, now, batchItemId) {
      const period = periodOf(now)
      const key = `${account.id}:${period.id}`
      await started
      const { total } = balanceOf(account, period, await countsIn(account.id, period.id))
      // The store counts charges and every process's live holds in the transaction that inserts this one.
      const holdId = await store.hold(account.id, period.id, total, now, now + CREDIT_HOLD_MS, batchItemId ?? null)
      if (holdId === null) throw accountGone()
      if (typeof holdId !== 'number') {
        if (holdId.used >= total) throw quotaExceeded(total, period, now)
        throw new CreditsHeldError(holdId.nextLapseInMs ?? 1000, total, holdId.used, period)
      }
      track(holdId, account.id)
      let settled = false
      settlers.set(holdId, () => {
        settled = true
      })
      return {
        id: holdId,
        async commit(chargeWith, alongside = []) {
          if (settled) throw new Error('credit hold already settled')
          const ids = [holdId, ...alongside.map((other) => other.id)]
          for (const id of ids) {
            if (!settlers.has(id) || live.get(id) !== account.id) throw new Error('a credit hold committed alongside is not live for this account')
            settlers.get(id)!()
            settlers.delete(id)
          }
          try {
            // The charge and the end of the hold are one transaction, so charged + held never dips. Without
            // `chargeWith`, holds alongside are charged one transaction each (an interactive answer's languages).
            let charged: number | null = null
            if (chargeWith) charged = await chargeWith(period.id, total, ids)
            else for (const id of ids) charged = await store.commitHold({ id, accountId: account.id, period: period.id })
            if (charged === null) throw accountGone()
            // Counts forgotten meanwhile are read again when next needed; kept ones follow the charge.
            const kept = counts.get(key)
            if (kept) kept.used = Math.max(kept.used, charged)
            return Math.max(0, total - charged)
          } catch (error) {
            // Nothing was charged (a failed transaction changes nothing): the holds go, or lapse.
            for (const id of ids) await store.releaseHold(id).catch(() => {})
            throw error
          } finally {
            for (const id of ids) untrack(id)
          }
        },
        async release() {
          if (settled) return
          settled = true
          settlers.delete(holdId)
          untrack(holdId)
          // A release that cannot be written costs the account nothing for long: the hold lapses.
          await store.releaseHold(holdId).catch(() => {})
          heldChanged(account.id)
        },
      }
    },

    forget(accountId) {
      forgets++
      if (accountId === undefined) {
        heldRead.clear()
        return counts.clear()
      }
      heldChanged(accountId)
      const prefix = `${accountId}:`
      for (const key of counts.keys()) if (key.startsWith(prefix)) counts.delete(key)
    },
  }
}
