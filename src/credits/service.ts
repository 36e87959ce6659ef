// Credits of an account in the current billing period (calendar month, UTC). A generation first holds a
// credit (so concurrent requests can never overspend), and the hold becomes a charge only when the
// answer is ready; failures release it. Holds left by a crash are released at start: never answered.
import { ApiError } from '../shared/errors'
import { periodOf, type Period } from '../shared/time'
import type { AccountRecord, CreditStore } from '../store/types'

export type Balance = { total: number; used: number; remaining: number; period: Period }

export type CreditHold = {
  /** Charges the held credit; returns the credits left in the period. */
  commit(): Promise<number>
  release(): Promise<void>
}

export interface CreditLedger {
  balance(account: AccountRecord, now: number): Promise<Balance>
  /** Holds one credit, or throws 429 quota_exceeded with Retry-After until the period ends. */
  reserve(account: AccountRecord, now: number): Promise<CreditHold>
}

// Charged counts are kept in memory once read: this ledger is the only writer of charges (one
// process per database), so a commit updates the memory too and reads cost no query.
const USED_CACHE_SIZE = 10_000

export function createCreditLedger(store: CreditStore, freeCredits: number): CreditLedger {
  const totalFor = (_plan: AccountRecord['plan']) => freeCredits
  const usedCache = new Map<string, number>()
  const remember = (key: string, used: number) => {
    usedCache.delete(key)
    usedCache.set(key, used)
    if (usedCache.size > USED_CACHE_SIZE) usedCache.delete(usedCache.keys().next().value!)
  }
  const usedIn = async (accountId: number, period: string) => {
    const key = `${accountId}:${period}`
    const cached = usedCache.get(key)
    if (cached !== undefined) return cached
    const used = await store.used(accountId, period)
    remember(key, used)
    return used
  }
  return {
    async balance(account, now) {
      const period = periodOf(now)
      const total = totalFor(account.plan)
      const used = await usedIn(account.id, period.id)
      return { total, used, remaining: Math.max(0, total - used), period }
    },

    async reserve(account, now) {
      const period = periodOf(now)
      const total = totalFor(account.plan)
      const holdId = await store.reserve(account.id, period.id, total, now)
      if (holdId === null) {
        const retryAfter = Math.max(1, Math.ceil((period.end - now) / 1000))
        throw new ApiError('quota_exceeded', `all ${total} credits of this period are used; the period ends ${new Date(period.end).toISOString()}`, {
          'Retry-After': String(retryAfter),
        })
      }
      let settled = false
      return {
        async commit() {
          settled = true
          const used = await store.commit(holdId)
          remember(`${account.id}:${period.id}`, used)
          return Math.max(0, total - used)
        },
        async release() {
          if (settled) return
          settled = true
          await store.release(holdId)
        },
      }
    },
  }
}
