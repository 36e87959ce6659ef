// Credits of an account in the current billing period (calendar month, UTC).
import { periodOf, type Period } from '../shared/time'
import type { AccountRecord, CreditStore } from '../store/types'

export type Balance = { total: number; used: number; remaining: number; period: Period }

export interface CreditLedger {
  balance(account: AccountRecord, now: number): Promise<Balance>
}

export function createCreditLedger(store: CreditStore, freeCredits: number): CreditLedger {
  const totalFor = (_plan: AccountRecord['plan']) => freeCredits
  return {
    async balance(account, now) {
      const period = periodOf(now)
      const total = totalFor(account.plan)
      const used = await store.used(account.id, period.id)
      return { total, used, remaining: Math.max(0, total - used), period }
    },
  }
}
