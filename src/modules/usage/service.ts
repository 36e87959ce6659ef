// Usage of an account: credits in the current period and today's authenticated calls.
import type { CreditLedger } from '../../credits/service'
import { iso } from '../../shared/time'
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
        period_start: iso(balance.period.start),
        period_end: iso(balance.period.end),
      }
    },
  }
}

export type UsageService = ReturnType<typeof createUsageService>
