import { z } from 'zod'
import { BATCH_LIST_DEFAULT, BATCH_LIST_MAX, IDEMPOTENCY_WINDOW_HOURS, MAX_BATCH_ITEMS, MAX_BATCH_METADATA_BYTES, MAX_IMAGE_MB } from '../../shared/limits'
import { AltTextBody, AltTextResponse, oneLanguageChoice } from '../alt-text/model'
import { Target } from '../suggestions/model'

/** Longest webhook_url accepted. */
export const MAX_WEBHOOK_URL_CHARS = 2048

const metadata = z
  .record(z.string(), z.unknown(), 'must be a JSON object')
  .nullish()
  .refine((value) => value == null || Buffer.byteLength(JSON.stringify(value)) <= MAX_BATCH_METADATA_BYTES, {
    message: `must be at most ${MAX_BATCH_METADATA_BYTES} bytes as JSON`,
  })
  .meta({
    description: `Any JSON object of at most ${MAX_BATCH_METADATA_BYTES} bytes (as compact JSON), returned with the item's result: your own ids, a file name, a page.`,
    examples: [{ media_id: 4711, file: 'harbour.jpg' }],
  })

/** One item: the body of POST /api/alt-text (JSON), with its own metadata. Exactly one of image_url and image_base64. */
export const BatchItemBody = AltTextBody.extend({
  metadata,
  target: Target.nullish().meta({
    description: 'Only with review: true. Where the item\'s alt text goes, as the suggestion\'s target; absent: {kind: "batch", ref: "<batch id>#<index>"}.',
  }),
})
  .superRefine(oneLanguageChoice)
  .meta({
    id: 'BatchItemRequest',
    description: `The fields of POST /api/alt-text's JSON body, plus metadata (and target, for a review batch). Exactly one image source: image_url or image_base64 (at most ${MAX_IMAGE_MB} MB once decoded).`,
  })

export const BatchCreateBody = z
  .object({
    items: z
      .array(BatchItemBody, 'must be an array of items')
      .min(1, 'must have at least 1 item')
      .max(MAX_BATCH_ITEMS, `must have at most ${MAX_BATCH_ITEMS} items; send more in several batches`)
      .meta({ description: `1 to ${MAX_BATCH_ITEMS} items, answered in this order as items[].index.` }),
    webhook_url: z
      .string('must be a string')
      .max(MAX_WEBHOOK_URL_CHARS, `must be at most ${MAX_WEBHOOK_URL_CHARS} characters`)
      .nullish()
      .meta({
        description:
          'An https URL that receives one signed POST when the batch ends (completed or cancelled); see the webhook documentation. The account needs a webhook secret first (POST /api/webhook-secret).',
        examples: ['https://cms.example.org/hooks/alttext'],
      }),
    review: z.boolean('must be true or false').default(false).meta({
      description:
        "true: each item that succeeds also becomes a pending suggestion of the organisation's review queue (no further credit), named by the item's suggestion_id.",
    }),
  })
  .meta({
    id: 'BatchCreateRequest',
    examples: [
      {
        items: [
          { image_url: 'https://example.com/photos/harbour.jpg', metadata: { media_id: 4711 } },
          { image_url: 'https://example.com/photos/divider.png', detect_decorative: true, metadata: { media_id: 4712 } },
          { image_url: 'https://example.com/charts/sales-2024.png', long_description: true, metadata: { media_id: 4713 } },
        ],
      },
    ],
  })

const Count = z.number().int().nonnegative()
const BatchStatusSchema = z.enum(['queued', 'running', 'completed', 'cancelled']).meta({
  description:
    'queued: no item started yet; running: items are being answered; completed: every item is done or failed; cancelled: cancelled (items that were running still finish; completed_at is set when they have).',
})

export const BatchCreatedResponse = z
  .object({
    id: z.string().meta({ description: 'The batch id: bat_ and 24 random characters.', examples: ['bat_3kq9x2m7vd4t8w1c6h5n0r2j'] }),
    status: BatchStatusSchema,
    total: Count.meta({ description: 'Number of items.' }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'BatchCreated' })

export const ItemError = z
  .object({
    code: z.string().meta({
      description:
        'An error code of the reference (invalid_image_url, invalid_image, quota_exceeded, upstream_error, upstream_timeout, batch_cancelled, internal_error, …).',
    }),
    message: z.string(),
  })
  .meta({ id: 'BatchItemError' })

export const BatchItemView = z
  .object({
    index: Count.meta({ description: 'Position of the item in the request, from 0.' }),
    status: z
      .enum(['pending', 'done', 'failed'])
      .meta({ description: 'pending: not answered yet (waiting or running); done: result is set; failed: error is set.' }),
    result: AltTextResponse.optional().meta({
      description:
        'The answer, as POST /api/alt-text gives it (credits_remaining as it was just after this item). Only when done. cached: true means it cost nothing.',
    }),
    error: ItemError.optional().meta({ description: 'Why the item failed. Only when failed; a failed item costs nothing.' }),
    metadata: z.record(z.string(), z.unknown()).nullable().meta({ description: "The item's metadata as sent, or null." }),
    suggestion_id: z.string().nullable().optional().meta({
      description: 'Only in a review batch: the suggestion the answer became (GET /api/suggestions/{id}); null until it is made, and for a failed item.',
    }),
  })
  .meta({ id: 'BatchItem' })

const batchFields = {
  id: z.string(),
  status: BatchStatusSchema,
  total: Count,
  succeeded: Count.meta({ description: 'Items done.' }),
  failed: Count.meta({ description: 'Items failed (also those cancelled before they ran).' }),
  created_at: z.iso.datetime(),
  completed_at: z.iso.datetime().nullable().meta({ description: 'When the last item ended; null before.' }),
  webhook_url: z.string().nullable(),
  review: z.boolean().meta({ description: 'Whether each answer becomes a suggestion of the review queue.' }),
}

export const BatchViewResponse = z
  .object({ ...batchFields, items: z.array(BatchItemView).meta({ description: 'Every item, in request order.' }) })
  .meta({ id: 'Batch' })

export const BatchSummary = z.object(batchFields).meta({ id: 'BatchSummary' })

export const BatchListResponse = z
  .object({
    items: z.array(BatchSummary).meta({ description: "The account's batches, newest first (without their items)." }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as cursor for the next page; null on the last page.' }),
  })
  .meta({ id: 'BatchList' })

const LIMIT_RULE = `must be a whole number from 1 to ${BATCH_LIST_MAX}`

export const BatchListQuery = z.object({
  limit: z
    .string(LIMIT_RULE)
    .refine((value) => /^[0-9]{1,3}$/.test(value), LIMIT_RULE)
    .transform(Number)
    .pipe(z.number().min(1, LIMIT_RULE).max(BATCH_LIST_MAX, LIMIT_RULE))
    .optional()
    .meta({ type: 'integer', minimum: 1, maximum: BATCH_LIST_MAX, default: BATCH_LIST_DEFAULT, description: 'Batches per page.' }),
  cursor: z.string('must be a string').max(200, 'is not a cursor of this API').optional().meta({ description: 'next_cursor of the previous page.' }),
})

export const BatchIdParams = z.object({ id: z.string().meta({ description: 'The batch id (bat_…).' }) })

export const IDEMPOTENCY_HEADER_DESCRIPTION = `Optional. A key of your choice (a UUID; 1 to 255 printable ASCII characters) that makes a retried create safe: within ${IDEMPOTENCY_WINDOW_HOURS} hours the same key with the same body answers with the first batch (202, header Idempotent-Replayed: true) instead of creating a second one; with another body it is 409 idempotency_conflict.`

export type BatchView = z.output<typeof BatchViewResponse>
export type BatchSummaryView = z.output<typeof BatchSummary>
export type BatchCreated = z.output<typeof BatchCreatedResponse>
export type BatchList = z.output<typeof BatchListResponse>
