import { z } from 'zod'
import { SUGGESTION_STATUSES } from '../../store/contract'
import { canonicalTag } from '../alt-text/language-tag'
import { AltTextBody } from '../alt-text/model'

const Timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC' })

export const MAX_TARGET_CHARS = 500
export const MAX_SUGGESTED_ALT_CHARS = 2000
export const MAX_REASON_CHARS = 1000
export const MAX_SUGGESTION_PAGE = 100
export const MAX_BULK_DECISIONS = 100

export const SuggestionId = z
  .string()
  .regex(/^sug_[0-9a-f]{24}$/u, 'must be a suggestion id: sug_ and 24 hex characters')
  .meta({ description: 'A suggestion id (`sug_…`), opaque.', examples: ['sug_1a2b3c4d5e6f7a8b9c0d1e2f'] })

const targetText = (what: string) =>
  z
    .string('must be a string')
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_TARGET_CHARS, `must be at most ${MAX_TARGET_CHARS} characters`)
    .meta({ description: what })

export const Target = z.object({
  kind: targetText('What kind of place: `wordpress-attachment`, `file`, `url`, `batch`, or a name of your own.'),
  ref: targetText('Which one: an attachment id, `path:line:column`, a page URL.'),
  site: targetText('Which site or repository it belongs to.').nullish(),
  fingerprint: targetText('What the place held when the suggestion was made, so a stale write-back can be refused (audit: the image fingerprint).').nullish(),
})

const altText = (what: string) =>
  z.string('must be a string').max(MAX_SUGGESTED_ALT_CHARS, `must be at most ${MAX_SUGGESTED_ALT_CHARS} characters`).meta({ description: what })

/** A multipart form sends `target` as JSON text; JSON bodies send the object. */
const targetField = z.preprocess((value) => {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}, Target)

// One proposed alt text per suggestion: in `language`, so `languages` is not taken.
export const CreateSuggestionBody = AltTextBody.omit({ languages: true })
  .extend({
    target: targetField,
    current_alt: altText('The alt text the place has now (null or absent: none).').nullish(),
    proposed_alt: altText('The alt text to propose. Absent: the service writes it (one credit), as POST /api/alt-text would.').nullish(),
  })
  .meta({ id: 'CreateSuggestionRequest' })

export const CreateSuggestionUploadBody = z
  .object({
    image: z.string().meta({ format: 'binary', contentMediaType: 'application/octet-stream', description: 'The image file.' }),
    target: z.string().meta({ description: 'The target as JSON text: {"kind": …, "ref": …, "site": …}.' }),
    current_alt: z.string().optional(),
    proposed_alt: z.string().optional(),
    language: z.string().optional(),
  })
  .meta({ id: 'CreateSuggestionUploadRequest', description: 'Other fields of POST /api/alt-text are taken as form fields too.' })

export const Suggestion = z
  .object({
    id: SuggestionId,
    status: z.enum(SUGGESTION_STATUSES),
    proposed_alt: z.string(),
    current_alt: z.string().nullable(),
    final_alt: z.string().nullable().meta({ description: 'The alt text decided on (accepted or edited); null while pending or when rejected.' }),
    target: z.object({ kind: z.string(), ref: z.string(), site: z.string().nullable(), fingerprint: z.string().nullable() }),
    language: z.string(),
    image: z.object({
      url: z.string().nullable(),
      format: z.string().nullable(),
      width: z.number().int().nullable(),
      height: z.number().int().nullable(),
      thumbnail_url: z.string().nullable(),
    }),
    wcag_compliant: z.boolean().nullable(),
    wcag_issues: z.array(z.string()),
    verdict: z.record(z.string(), z.unknown()).nullable(),
    decorative: z.boolean(),
    batch_id: z.string().nullable(),
    created_at: Timestamp,
    created_by: z.string().nullable().meta({ description: "The author's email; null when a batch or integration made it." }),
    decided_at: Timestamp.nullable(),
    decided_by: z.string().nullable(),
    reason: z.string().nullable(),
  })
  .meta({ id: 'Suggestion' })

export const SuggestionListQuery = z.object({
  status: z.enum(SUGGESTION_STATUSES).optional(),
  target_kind: z.string().trim().min(1).max(MAX_TARGET_CHARS).optional(),
  // Canonical case, as suggestions store their tags: ?language=pt-br finds pt-BR.
  language: z.string().trim().min(1).max(35).overwrite(canonicalTag).optional(),
  mine: z.enum(['true', 'false']).optional().meta({ description: 'true: only the ones you made.' }),
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/u, 'must be the next_cursor of the previous page')
    .optional(),
  limit: z.coerce.number().int().min(1).max(MAX_SUGGESTION_PAGE).optional(),
})

export const SuggestionListResponse = z
  .object({
    suggestions: z.array(Suggestion),
    next_cursor: z.string().nullable(),
    total: z.number().int().meta({ description: 'How many match the filters in all, counted up to 10,000 (10,000 means at least that many).' }),
  })
  .meta({ id: 'SuggestionList' })

export const SuggestionParams = z.object({ id: SuggestionId })

export const AcceptBody = z
  .object({ alt_text: altText('The alt text to keep, when it differs from the proposed one (status `edited`).').trim().min(1, 'must not be empty').nullish() })
  .meta({ id: 'AcceptSuggestionRequest' })

export const RejectBody = z
  .object({ reason: z.string().trim().max(MAX_REASON_CHARS, `must be at most ${MAX_REASON_CHARS} characters`).nullish() })
  .meta({ id: 'RejectSuggestionRequest' })

export const BulkAcceptBody = z
  .object({ ids: z.array(SuggestionId).min(1, 'must name at least one').max(MAX_BULK_DECISIONS, `must name at most ${MAX_BULK_DECISIONS}`) })
  .meta({ id: 'BulkAcceptRequest' })

export const BulkAcceptResponse = z
  .object({ accepted: z.array(SuggestionId), already_decided: z.array(SuggestionId), not_found: z.array(SuggestionId) })
  .meta({ id: 'BulkAccepted' })
