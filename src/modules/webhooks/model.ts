import { z } from 'zod'
import { WEBHOOK_DELIVERIES_DEFAULT_PAGE, WEBHOOK_DELIVERIES_MAX_PAGE } from '../../shared/limits'
import { WEBHOOK_EVENTS } from '../../store/contract'

const LIMIT_RULE = `must be a whole number from 1 to ${WEBHOOK_DELIVERIES_MAX_PAGE}`

export const CreatedSecretResponse = z
  .object({
    secret: z.string().meta({ description: 'The signing secret, `whsec_` and 43 characters. Shown only now: store it with your receiver.' }),
    created_at: z.iso.datetime().meta({ description: 'When it was made, ISO 8601 UTC.' }),
    replaced: z.boolean().meta({ description: 'True when it replaced an earlier secret, which signs nothing from now on.' }),
  })
  .meta({ id: 'WebhookSecretCreated' })

export const SecretStatusResponse = z
  .object({
    exists: z.boolean().meta({ description: 'Whether the account has a webhook secret (needed before a batch may name a `webhook_url`).' }),
    created_at: z.iso.datetime().nullable().meta({ description: 'When the current secret was made; null when there is none.' }),
  })
  .meta({ id: 'WebhookSecretStatus' })

export const DeliveriesQuery = z.object({
  limit: z
    .string(LIMIT_RULE)
    .refine((limit) => /^[0-9]{1,3}$/.test(limit), LIMIT_RULE)
    .transform(Number)
    .pipe(z.number().min(1, LIMIT_RULE).max(WEBHOOK_DELIVERIES_MAX_PAGE, LIMIT_RULE))
    .optional()
    .meta({
      type: 'integer',
      minimum: 1,
      maximum: WEBHOOK_DELIVERIES_MAX_PAGE,
      default: WEBHOOK_DELIVERIES_DEFAULT_PAGE,
      description: `Deliveries per page: a whole number from 1 to ${WEBHOOK_DELIVERIES_MAX_PAGE}.`,
    }),
  cursor: z
    .string('must be the next_cursor of an earlier page')
    .regex(/^[0-9]{1,15}$/, 'must be the next_cursor of an earlier page')
    .transform(Number)
    .optional()
    .meta({ type: 'string', description: 'The `next_cursor` of the page before; absent for the newest page.' }),
})

export const Delivery = z
  .object({
    id: z.string().meta({
      description: 'The delivery id, also sent as the `Alttext-Delivery` header (the same at every attempt).',
      examples: ['whd_4f1c0b9e2a7d5c3b8e6f0a1d'],
    }),
    batch_id: z.string().nullable().meta({ description: 'The ended batch; null for a `suggestion.decided` event.' }),
    suggestion_id: z.string().nullable().meta({ description: 'The decided suggestion (`suggestion.decided`); null for a batch event.' }),
    event: z.enum(WEBHOOK_EVENTS),
    url: z.string().meta({ description: "The batch's `webhook_url`, or the organisation webhook's URL when the event was queued." }),
    status: z.enum(['pending', 'delivered', 'failed']).meta({
      description:
        '`pending`: not yet delivered, an attempt is scheduled at `next_attempt_at`; `delivered`: the receiver answered 2xx; `failed`: every attempt failed (or no retry could help).',
    }),
    attempts: z.number().int().nonnegative(),
    last_status: z.number().int().nullable().meta({ description: "The receiver's HTTP status at the last attempt; null when it did not answer." }),
    last_error: z.string().nullable().meta({ description: 'Why the last attempt failed; null after a success or before any attempt.' }),
    next_attempt_at: z.iso.datetime().nullable(),
    delivered_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime().meta({ description: 'When the event was made: the batch ended, the suggestion was decided.' }),
  })
  .meta({ id: 'WebhookDelivery' })

export const DeliveriesResponse = z
  .object({
    items: z.array(Delivery).meta({ description: 'Newest first.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next (older) page; null on the last page.' }),
  })
  .meta({ id: 'WebhookDeliveries' })

export const DeliveryIdParams = z.object({ id: z.string().meta({ description: 'The `id` of a delivery.' }) })

export const OrgWebhookBody = z
  .object({
    url: z.string('must be a string').meta({
      description: 'Where `suggestion.decided` events go: https, at most 2,048 characters, not a private address.',
      examples: ['https://example.com/hooks/alttext'],
    }),
  })
  .meta({ id: 'OrgWebhookRequest' })

export const OrgWebhookResponse = z
  .object({
    url: z.string(),
    created_at: z.iso.datetime().meta({ description: 'When the URL (and its secret) was set.' }),
  })
  .meta({ id: 'OrgWebhook' })

export const OrgWebhookCreatedResponse = OrgWebhookResponse.extend({
  secret: z.string().meta({
    description:
      "The organisation's signing secret, `whsec_` and 43 characters, new at every PUT. Shown only now. It is also the secret of the organisation's batch webhooks (POST /api/webhook-secret rotates the same one).",
  }),
}).meta({ id: 'OrgWebhookCreated' })

export type CreatedSecret = z.output<typeof CreatedSecretResponse>
export type SecretStatus = z.output<typeof SecretStatusResponse>
export type DeliveryView = z.output<typeof Delivery>
export type Deliveries = z.output<typeof DeliveriesResponse>
export type OrgWebhookView = z.output<typeof OrgWebhookResponse>
export type OrgWebhookCreated = z.output<typeof OrgWebhookCreatedResponse>
