// Credits of an account in the current billing period (calendar month, UTC). A generation first holds a
// credit (so concurrent requests can never overspend), and the hold becomes a charge only when the
// answer is ready; failures release it. Holds live in memory: this process is the only one serving the
// database, and a hold lost in a crash belonged to a request that was never answered.
import { ApiError } from '../shared/errors'
import { andThen, type MaybePromise } from '../shared/maybe-promise'
import { createCalendar, type Period } from '../shared/time'
import type { AccountRecord, CreditStore } from '../store/types'

export type Balance = { total: number; used: number; remaining: number; period: Period }

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
  /** At once when the period's count is in memory (see shared/maybe-promise.ts). */
  balance(account: AccountRecord, now: number): MaybePromise<Balance>
  /**
   * The balance, or 429 quota_exceeded when no credit of the period is left: a refusal before any
   * work. Credits held by generations under way still count as left (they may be released);
   * `reserve` is the check that holds.
   */
  requireCredit(account: AccountRecord, now: number): MaybePromise<Balance>
  /** Holds one credit, or throws 429 quota_exceeded with Retry-After until the period ends. */
  reserve(account: AccountRecord, now: number): Promise<CreditHold>
  /** Drops the counts kept of a deleted account (SQLite may give its id to the next account). */
  forget(accountId: number): void
}

// Charged counts are kept in memory once read: this ledger is the only writer of charges (one
// process per database), so a commit updates the memory too and reads cost no query.
const USED_CACHE_SIZE = 10_000

function quotaExceeded(total: number, period: Period, now: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil((period.end - now) / 1000))
  return new ApiError('quota_exceeded', `all ${total} credits of this period are used; the period ends ${new Date(period.end).toISOString()}`, {
    'Retry-After': String(retryAfter),
  })
}

export function createCreditLedger(store: CreditStore, freeCredits: number): CreditLedger {
  const { periodOf } = createCalendar()
  const totalFor = (_plan: AccountRecord['plan']) => freeCredits
  const usedCache = new Map<string, number>()
  /** Credits held by generations under way, per account and period. */
  const held = new Map<string, number>()
  const remember = (key: string, used: number) => {
    usedCache.delete(key)
    usedCache.set(key, used)
    if (usedCache.size > USED_CACHE_SIZE) usedCache.delete(usedCache.keys().next().value!)
  }
  const unhold = (key: string) => {
    const count = (held.get(key) ?? 0) - 1
    if (count > 0) held.set(key, count)
    else held.delete(key)
  }
  const usedIn = (accountId: number, period: string): MaybePromise<number> => {
    const key = `${accountId}:${period}`
    const cached = usedCache.get(key)
    if (cached !== undefined) return cached
    return store.used(accountId, period).then((used) => {
      remember(key, used)
      return used
    })
  }
  const balance = (account: AccountRecord, now: number): MaybePromise<Balance> => {
    const period = periodOf(now)
    const total = totalFor(account.plan)
    return andThen(usedIn(account.id, period.id), (used): Balance => ({ total, used, remaining: Math.max(0, total - used), period }))
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
      const total = totalFor(account.plan)
      const key = `${account.id}:${period.id}`
      let used = await usedIn(account.id, period.id)
      // From here to the hold nothing awaits, so the check and the hold are one step. The count is
      // read again: a commit may have moved a credit from held to used during the await.
      used = usedCache.get(key) ?? used
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
            remember(key, charged)
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
      const prefix = `${accountId}:`
      for (const key of usedCache.keys()) if (key.startsWith(prefix)) usedCache.delete(key)
    },
  }
}
