import { z } from 'zod'
import { CreditsSummary } from '../accounts/model'
import { PlanName } from '../keys/model'

export const UsageResponse = z
  .object({
    plan: PlanName,
    credits: CreditsSummary,
    api_calls_today: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Requests that authenticated with any key of the account since 00:00 UTC, this one included.' }),
    period_start: z.iso.datetime().meta({ description: 'Start of the billing period (first day of the month, 00:00 UTC), ISO 8601.' }),
    period_end: z.iso.datetime().meta({ description: 'End of the billing period (exclusive: first day of the next month, 00:00 UTC), ISO 8601.' }),
  })
  .meta({ id: 'Usage' })
export type Usage = z.output<typeof UsageResponse>
