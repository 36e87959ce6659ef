// Usage of an account: credits in the current period and today's authenticated calls.
import type { CreditLedger } from '../../credits/service'
import type { AccountRecord } from '../../store/types'
import type { ActivityRecorder } from '../auth/activity'

export function createUsageService(credits: CreditLedger, activity: ActivityRecorder, clock: () => number) {
  return {
    async usage(account: AccountRecord, now = clock()) {
      const [balance, calls] = await Promise.all([credits.balance(account, now), activity.callsToday(account.id, now)])
      return {
        plan: account.plan,
        credits: { total: balance.total, used: balance.used, remaining: balance.remaining },
        api_calls_today: calls,
        period_start: balance.period.startIso,
        period_end: balance.period.endIso,
      }
    },
  }
}

export type UsageService = ReturnType<typeof createUsageService>
