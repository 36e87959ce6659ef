import { Elysia } from 'elysia'
import { type Body, routeDetail } from '../../http/openapi-doc'
import type { MaybePromise } from '../../shared/maybe-promise'
import type { authPlugin } from '../auth'
import { UsageResponse } from './model'
import type { UsageService } from './service'

export function usageRoutes(usage: UsageService, authentication: ReturnType<typeof authPlugin>) {
  return new Elysia({ prefix: '/api' })
    .use(authentication)
    .get('/usage', ({ caller }): MaybePromise<Body<typeof UsageResponse>> => usage.usage(caller.org.account), {
      auth: true,
      detail: routeDetail({
        summary: 'Credit usage',
        operationId: 'getUsage',
        description:
          'Credits of the current billing period (the calendar month, UTC) and the calls made today. `credits.used` counts charged credits; `credits.remaining` leaves out credits held by generations under way (charged when each answer is ready, or released), so it is what new work may still take. Call it before bulk work so a batch does not stop halfway at the quota.',
        tags: ['Usage'],
        success: [
          {
            status: 200,
            description: 'Usage of the account.',
            schema: UsageResponse,
            example: {
              plan: 'free',
              credits: { total: 50, used: 3, remaining: 47 },
              api_calls_today: 12,
              period_start: '2026-11-01T00:00:00.000Z',
              period_end: '2026-12-01T00:00:00.000Z',
            },
          },
        ],
        errors: [],
      }),
    })
}
