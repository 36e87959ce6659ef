// HTTP routes of the daily usage counts and the generation history. Every route takes a key or a session.
import { Elysia } from 'elysia'
import { z } from 'zod'
import { type Body, routeDetail } from '../../http/openapi-doc'
import { HISTORY_MAX_ITEMS, USAGE_HISTORY_DEFAULT_DAYS, USAGE_HISTORY_MAX_DAYS } from '../../shared/limits'
import type { authPlugin } from '../auth'
import { HistoryClearedResponse, HistoryIdParams, HistoryListResponse, UsageHistoryQuery, UsageHistoryResponse } from './model'
import type { HistoryService } from './service'

const exampleItem = {
  id: 'q3Vb0x2mT9kL',
  created_at: '2026-11-20T10:00:00.000Z',
  source: 'upload' as const,
  image: { format: 'jpeg' as const, bytes: 482113, width: 1600, height: 1067 },
  alt_text: 'Sailing boats moored in the old harbour at sunset',
  decorative: false,
  language: 'en',
  style: 'descriptive',
  max_length: 125,
  cached: false,
  character_count: 49,
}

/** A 204 has no body: the generated entry's content goes. */
function withoutBody<T extends { responses: Record<string, object> }>(detail: T, description: string): T {
  const { content: _none, ...rest } = detail.responses['204'] as { content?: unknown; headers?: unknown }
  detail.responses['204'] = { ...rest, description }
  return detail
}

export function historyRoutes(history: HistoryService, authentication: ReturnType<typeof authPlugin>) {
  return new Elysia({ prefix: '/api' })
    .use(authentication)
    .get('/usage/history', ({ caller, query }): Promise<Body<typeof UsageHistoryResponse>> => history.usageHistory(caller.org.account, query.days), {
      auth: true,
      query: UsageHistoryQuery,
      detail: routeDetail({
        summary: 'Daily usage',
        operationId: 'getUsageHistory',
        description: `Counts of alt-text requests per UTC day, for the last \`days\` days through today (${USAGE_HISTORY_DEFAULT_DAYS} by default, at most ${USAGE_HISTORY_MAX_DAYS}), oldest first; a day without requests is zeros. \`generations\` were charged, \`cached\` and \`failed\` were free.`,
        tags: ['Usage'],
        success: [
          {
            status: 200,
            description: 'One entry per day.',
            schema: UsageHistoryResponse,
            example: {
              days: [
                { date: '2026-11-19', generations: 0, cached: 0, failed: 0 },
                { date: '2026-11-20', generations: 12, cached: 3, failed: 1 },
              ],
            },
          },
        ],
        errors: ['invalid_request'],
        exampleMessages: { invalid_request: `days: must be a whole number from 1 to ${USAGE_HISTORY_MAX_DAYS}` },
      }),
    })
    .get('/history', ({ caller }): Promise<Body<typeof HistoryListResponse>> => history.list(caller.org.account), {
      auth: true,
      detail: routeDetail({
        summary: 'Recent generations',
        operationId: 'listHistory',
        description: `The account's latest ${HISTORY_MAX_ITEMS} answered requests (fresh and cached), newest first: what the image was (never the image), the options and the alt text. Older entries are deleted as new ones come.`,
        tags: ['Usage'],
        success: [{ status: 200, description: 'The history.', schema: HistoryListResponse, example: { items: [exampleItem] } }],
        errors: [],
      }),
    })
    .delete('/history', ({ caller }): Promise<Body<typeof HistoryClearedResponse>> => history.clear(caller.org.account), {
      auth: true,
      role: 'admin',
      detail: routeDetail({
        summary: 'Delete the history',
        operationId: 'clearHistory',
        description:
          'Deletes every history entry of the organisation you act in (your personal one: yours); in a team, admins only. The daily counts, credits and the shared cache stay.',
        tags: ['Usage'],
        success: [{ status: 200, description: 'Deleted.', schema: HistoryClearedResponse, example: { deleted: 17 } }],
        errors: ['database_busy', 'forbidden_for_role'],
      }),
    })
    .delete(
      '/history/:id',
      async ({ caller, params, set }) => {
        await history.remove(caller.org.account, params.id)
        set.status = 204
      },
      {
        auth: true,
        role: 'admin',
        params: HistoryIdParams,
        detail: withoutBody(
          routeDetail({
            summary: 'Delete a history entry',
            operationId: 'deleteHistoryItem',
            description:
              "Deletes one entry of the history of the organisation you act in (in a team, admins only). An unknown id, or another organisation's, is 404 `not_found`.",
            tags: ['Usage'],
            success: [{ status: 204, description: 'Deleted.', schema: z.null(), example: null }],
            errors: ['not_found', 'database_busy', 'forbidden_for_role'],
            exampleMessages: { not_found: 'no history entry with that id in this account' },
          }),
          'Deleted; no body.',
        ),
      },
    )
}
