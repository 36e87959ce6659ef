// Usage of an account: credits in the current period and today's authenticated calls.
import type { CreditLedger } from '../../credits/service'
import type { AccountRecord } from '../../store/types'
import type { ActivityRecorder } from '../auth/activity'

export function createUsageService(credits: CreditLedger, activity: ActivityRecorder, clock: () => number) {
  return {
    async usage(account: AccountRecord, now = clock()) {
      // One after the other: both are usually in memory, and Promise.all costs more than two awaits.
      const balance = await credits.balance(account, now)
      const calls = await activity.callsToday(account.id, now)
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
