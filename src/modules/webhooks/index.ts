// HTTP routes of signed webhooks: the account's signing secret and its delivery log. Every route takes a
// key or a session (a session's POST passes the origin check, as every state-changing route does).
import { Elysia } from 'elysia'
import { type Body, routeDetail } from '../../http/openapi-doc'
import { WEBHOOK_DELIVERIES_DEFAULT_PAGE, WEBHOOK_DELIVERIES_MAX_PAGE, WEBHOOK_RETRY_DELAYS_SECONDS, WEBHOOK_TIMEOUT_SECONDS } from '../../shared/limits'
import type { authPlugin } from '../auth'
import { CreatedSecretResponse, DeliveriesQuery, DeliveriesResponse, Delivery, DeliveryIdParams, SecretStatusResponse } from './model'
import type { WebhookService } from './service'

const exampleDelivery = {
  id: 'whd_4f1c0b9e2a7d5c3b8e6f0a1d',
  batch_id: 'bat_7k2m9q4x1c8v5b3n6z0p2r7t',
  suggestion_id: null,
  event: 'batch.completed' as const,
  url: 'https://example.com/hooks/alttext',
  status: 'pending' as const,
  attempts: 2,
  last_status: 503,
  last_error: 'the receiver answered 503',
  next_attempt_at: '2026-11-20T10:02:30.000Z',
  delivered_at: null,
  created_at: '2026-11-20T10:00:00.000Z',
}

const retries = `${WEBHOOK_RETRY_DELAYS_SECONDS.length} retries after ${WEBHOOK_RETRY_DELAYS_SECONDS.map((s) => (s < 60 ? `${s} s` : `${s / 60} min`)).join(', ')}`

export function webhookRoutes(webhooks: WebhookService, authentication: ReturnType<typeof authPlugin>) {
  return new Elysia({ prefix: '/api' })
    .use(authentication)
    .get('/webhook-secret', ({ caller }): Promise<Body<typeof SecretStatusResponse>> => webhooks.secretStatus(caller.org.account), {
      auth: true,
      detail: routeDetail({
        summary: 'Webhook secret status',
        operationId: 'getWebhookSecret',
        description: 'Whether the account has a webhook signing secret, and when it was made. The secret itself is shown only when it is made.',
        tags: ['Webhooks'],
        success: [{ status: 200, description: 'The status.', schema: SecretStatusResponse, example: { exists: true, created_at: '2026-11-20T10:00:00.000Z' } }],
        errors: [],
      }),
    })
    .post(
      '/webhook-secret',
      async ({ caller, set }): Promise<Body<typeof CreatedSecretResponse>> => {
        const created = await webhooks.createSecret(caller.org.account)
        set.status = 201
        return created
      },
      {
        auth: true,
        detail: routeDetail({
          summary: 'Create or rotate the webhook secret',
          operationId: 'createWebhookSecret',
          description:
            'Makes a new signing secret for the account and shows it, only now. It replaces any earlier secret at once: every delivery attempt from now on, retries of earlier events included, is signed with the new one. Each delivery carries `Alttext-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` keyed with the whole secret. A batch may name a `webhook_url` only once the account has a secret. No body.',
          tags: ['Webhooks'],
          success: [
            {
              status: 201,
              description: 'Created; the secret is shown only now.',
              schema: CreatedSecretResponse,
              example: { secret: 'whsec_3q2-7wVhZ0m1bXk9T4pLr8sJd6yQe5uFc2nHa0gKiOo', created_at: '2026-11-20T10:00:00.000Z', replaced: false },
            },
          ],
          errors: ['database_busy'],
        }),
      },
    )
    .get(
      '/webhook-deliveries',
      ({ caller, query }): Promise<Body<typeof DeliveriesResponse>> => webhooks.deliveries(caller.org.account, query.limit, query.cursor),
      {
        auth: true,
        query: DeliveriesQuery,
        detail: routeDetail({
          summary: 'Webhook delivery log',
          operationId: 'listWebhookDeliveries',
          description: `The account's webhook deliveries, newest first, ${WEBHOOK_DELIVERIES_DEFAULT_PAGE} per page by default (\`limit\` up to ${WEBHOOK_DELIVERIES_MAX_PAGE}); \`next_cursor\` fetches the next page. One delivery per ended batch with a \`webhook_url\`, and one per decision on a suggestion while the organisation has a webhook (PUT /api/orgs/{id}/webhook): attempts wait at most ${WEBHOOK_TIMEOUT_SECONDS} s for an answer; anything but 2xx (a redirect too) is a failure, retried with backoff (${retries}), then \`failed\`. A batch's delivery goes when its batch is deleted; an organisation's, with the organisation.`,
          tags: ['Webhooks'],
          success: [{ status: 200, description: 'One page.', schema: DeliveriesResponse, example: { items: [exampleDelivery], next_cursor: null } }],
          errors: ['invalid_request'],
          exampleMessages: { invalid_request: `limit: must be a whole number from 1 to ${WEBHOOK_DELIVERIES_MAX_PAGE}` },
        }),
      },
    )
    .post('/webhook-deliveries/:id/retry', ({ caller, params }): Promise<Body<typeof Delivery>> => webhooks.retry(caller.org.account, params.id), {
      auth: true,
      params: DeliveryIdParams,
      detail: routeDetail({
        summary: 'Retry a webhook delivery',
        operationId: 'retryWebhookDelivery',
        description:
          "Schedules one more attempt of the delivery now, whatever its status (a delivered event is sent again, with the same `Alttext-Delivery` id). An unknown id, or another account's, is 404 `not_found`.",
        tags: ['Webhooks'],
        success: [
          {
            status: 200,
            description: 'Scheduled; the delivery as it is now.',
            schema: Delivery,
            example: { ...exampleDelivery, status: 'pending', next_attempt_at: '2026-11-20T10:05:00.000Z' },
          },
        ],
        errors: ['not_found', 'database_busy'],
        exampleMessages: { not_found: 'no webhook delivery with that id in this account' },
      }),
    })
}
