// Credits of an account in the current billing period (calendar month, UTC). A generation first holds a
// credit (so concurrent requests can never overspend), and the hold becomes a charge only when the
// answer is ready; failures release it. Holds live in memory: this process is the only one serving the
// database, and a hold lost in a crash belonged to a request that was never answered.
import { ApiError } from '../shared/errors'
import { andThen, type MaybePromise } from '../shared/maybe-promise'
import { createCalendar, type Period } from '../shared/time'
import type { AccountRecord, CreditStore, PeriodCredits } from '../store/types'

/** `total` is the plan's credits plus `granted`, the operator's one-off credits of this period. */
export type Balance = { total: number; used: number; remaining: number; granted: number; period: Period }

/**
 * A durable charge of one credit of `period` made by the caller, in a transaction of its own that also
 * records what was paid for (a batch item's result): returns the period's charged count, or null when the
 * account no longer exists.
 */
export type ChargeWith = (period: string, total: number) => Promise<number | null>

export type CreditHold = {
  /**
   * Charges the held credit; returns the credits left in the period. `chargeWith` makes the charge
   * instead of the credit store's own statement (the ledger's counts follow it the same way).
   */
  commit(chargeWith?: ChargeWith): Promise<number>
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
  /** Holds one credit, or throws 429 quota_exceeded with Retry-After until the period ends. */
  reserve(account: AccountRecord, now: number): Promise<CreditHold>
  /**
   * Drops the counts kept of an account: it was deleted (SQLite may give its id to the next account), or
   * another process changed them (an operator's grant). Without an id: of every account.
   */
  forget(accountId?: number): void
}

// Counts are kept in memory once read: this ledger is the only writer of charges (one process per
// database), so a commit updates the memory too and reads cost no query. Grants come from the operator's
// process; the change feed (accounts/changes.ts) makes this ledger forget the account's counts then.
const COUNTS_CACHE_SIZE = 10_000

function quotaExceeded(total: number, period: Period, now: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil((period.end - now) / 1000))
  return new ApiError('quota_exceeded', `all ${total} credits of this period are used; the period ends ${new Date(period.end).toISOString()}`, {
    'Retry-After': String(retryAfter),
  })
}

export function createCreditLedger(store: CreditStore, freeCredits: number): CreditLedger {
  const { periodOf } = createCalendar()
  /** The plan's credits per period: the operator's allowance, else the free plan's. */
  const allowance = (account: AccountRecord) => account.monthlyCredits ?? freeCredits
  const counts = new Map<string, PeriodCredits>()
  /** Credits held by generations under way, per account and period. */
  const held = new Map<string, number>()
  /** Raised by each forget: counts read before it may be older than the change that caused it. */
  let forgets = 0
  const remember = (key: string, read: PeriodCredits) => {
    counts.delete(key)
    counts.set(key, read)
    if (counts.size > COUNTS_CACHE_SIZE) counts.delete(counts.keys().next().value!)
  }
  const unhold = (key: string) => {
    const count = (held.get(key) ?? 0) - 1
    if (count > 0) held.set(key, count)
    else held.delete(key)
  }
  const countsIn = (accountId: number, period: string): MaybePromise<PeriodCredits> => {
    const key = `${accountId}:${period}`
    const cached = counts.get(key)
    if (cached !== undefined) return cached
    const epoch = forgets
    return store.counts(accountId, period).then((read) => {
      if (epoch === forgets) remember(key, read)
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
  return {
    balance,

    requireCredit(account, now) {
      return andThen(balance(account, now), (current) => {
        if (current.remaining === 0) throw quotaExceeded(current.total, current.period, now)
        return current
      })
    },

    async reserve(account, now) {
      const period = periodOf(now)
      const key = `${account.id}:${period.id}`
      let read = await countsIn(account.id, period.id)
      // From here to the hold nothing awaits, so the check and the hold are one step. The counts are
      // read again: a commit may have moved a credit from held to used during the await.
      read = counts.get(key) ?? read
      const { total, used } = balanceOf(account, period, read)
      if (used + (held.get(key) ?? 0) >= total) throw quotaExceeded(total, period, now)
      held.set(key, (held.get(key) ?? 0) + 1)
      let settled = false
      return {
        async commit(chargeWith) {
          if (settled) throw new Error('credit hold already settled')
          settled = true
          try {
            // The charge is in the database before the hold goes, so used + held never dips.
            const charged = chargeWith ? await chargeWith(period.id, total) : await store.charge(account.id, period.id)
            if (charged === null) throw new ApiError('invalid_api_key', 'the account was deleted while this request ran; nothing was charged')
            // Counts forgotten meanwhile are read again when next needed; kept ones follow the charge.
            const kept = counts.get(key)
            if (kept) kept.used = Math.max(kept.used, charged)
            return Math.max(0, total - charged)
          } finally {
            unhold(key)
          }
        },
        async release() {
          if (settled) return
          settled = true
          unhold(key)
        },
      }
    },

    forget(accountId) {
      forgets++
      if (accountId === undefined) return counts.clear()
      const prefix = `${accountId}:`
      for (const key of counts.keys()) if (key.startsWith(prefix)) counts.delete(key)
    },
  }
}
