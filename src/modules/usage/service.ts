// Usage of an account: credits in the current period and today's authenticated calls.
import type { Balance, CreditLedger } from '../../credits/service'
import { andThen, type MaybePromise } from '../../shared/maybe-promise'
import type { AccountRecord } from '../../store/contract'
import type { ActivityRecorder } from '../auth/activity'
import type { Usage } from './model'

function usageOf(account: AccountRecord, balance: Balance, callsToday: number): Usage {
  return {
    plan: account.plan,
    credits: { total: balance.total, used: balance.used, remaining: balance.remaining },
    api_calls_today: callsToday,
    period_start: balance.period.startIso,
    period_end: balance.period.endIso,
  }
}

export function createUsageService(credits: CreditLedger, activity: ActivityRecorder, clock: () => number) {
  return {
    /** At once when both counts are in memory, as they are after an account's first call (see shared/maybe-promise.ts). */
    usage(account: AccountRecord, now = clock()): MaybePromise<Usage> {
      // Credits held by generations under way are not left: `remaining` leaves them out (docs/api.md).
      return andThen(credits.available(account, now), (balance) => andThen(activity.callsToday(account.id, now), (calls) => usageOf(account, balance, calls)))
    },
  }
}

export type UsageService = ReturnType<typeof createUsageService>
