import { z } from 'zod'
import { IMAGE_FORMATS } from '../../intake'
import { HISTORY_MAX_ITEMS, USAGE_HISTORY_DEFAULT_DAYS, USAGE_HISTORY_MAX_DAYS } from '../../shared/limits'

const Count = z.number().int().nonnegative()
const DAYS_RULE = `must be a whole number from 1 to ${USAGE_HISTORY_MAX_DAYS}`

export const UsageHistoryQuery = z.object({
  days: z
    .string(DAYS_RULE)
    .refine((days) => /^[0-9]{1,3}$/.test(days), DAYS_RULE)
    .transform(Number)
    .pipe(z.number().min(1, DAYS_RULE).max(USAGE_HISTORY_MAX_DAYS, DAYS_RULE))
    .optional()
    // Described as the number it is (a query string is text until it is checked).
    .meta({
      type: 'integer',
      minimum: 1,
      maximum: USAGE_HISTORY_MAX_DAYS,
      default: USAGE_HISTORY_DEFAULT_DAYS,
      description: `How many UTC days to report, today included: a whole number from 1 to ${USAGE_HISTORY_MAX_DAYS}.`,
      examples: [30],
    }),
})

export const UsageDay = z
  .object({
    date: z.iso.date().meta({ description: 'The UTC day, YYYY-MM-DD.' }),
    generations: Count.meta({ description: 'Fresh generations: answered by the model and charged one credit each.' }),
    cached: Count.meta({ description: 'Answers from the cache: free.' }),
    failed: Count.meta({
      description:
        'Requests that authenticated and then failed: an unusable image, the model server, no credit left (429). Free. A request refused as invalid (400 invalid_request) or abandoned by its client is not counted.',
    }),
  })
  .meta({ id: 'UsageDay' })

export const UsageHistoryResponse = z
  .object({
    days: z.array(UsageDay).meta({ description: 'One entry per UTC day, oldest first, through today; days without requests are zeros.' }),
  })
  .meta({ id: 'UsageHistory' })

export const HistoryItem = z
  .object({
    id: z.string().meta({ description: 'Opaque identifier of the entry (for DELETE /api/history/{id}).', examples: ['q3Vb0x2mT9kL'] }),
    created_at: z.iso.datetime().meta({ description: 'When the answer was given, ISO 8601 UTC.' }),
    source: z.enum(['url', 'upload']).meta({ description: 'How the image came: fetched from `image_url`, or uploaded (base64 or multipart).' }),
    image: z
      .object({
        format: z.enum(IMAGE_FORMATS),
        bytes: Count.meta({ description: 'Size of the image file as received.' }),
        width: Count,
        height: Count,
      })
      .meta({ description: 'What the image was; the image itself is never kept.' }),
    alt_text: z.string().meta({ description: 'The alt text answered; empty for a decorative image.' }),
    decorative: z.boolean(),
    language: z.string(),
    style: z.string(),
    max_length: Count,
    cached: z.boolean().meta({ description: 'Served from the cache (free); false when the answer cost a credit.' }),
    character_count: Count,
  })
  .meta({ id: 'HistoryItem' })

export const HistoryListResponse = z
  .object({
    items: z.array(HistoryItem).meta({ description: `The account's latest generations, newest first, at most ${HISTORY_MAX_ITEMS}.` }),
  })
  .meta({ id: 'HistoryList' })

export const HistoryClearedResponse = z.object({ deleted: Count.meta({ description: 'How many entries were deleted.' }) }).meta({ id: 'HistoryCleared' })

export const HistoryIdParams = z.object({ id: z.string().meta({ description: 'The `id` of a history entry.' }) })

export type UsageHistory = z.output<typeof UsageHistoryResponse>
export type HistoryList = z.output<typeof HistoryListResponse>
