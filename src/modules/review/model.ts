import { z } from 'zod'
import { IMAGE_FORMATS } from '../../intake'
import { AltTextBody, AltTextUploadBody } from '../alt-text/model'
import { asPromptData } from '../alt-text/prompt'

/** The verdicts, exactly as the contract names them; the model's answer is read into one of these or refused. */
export const VERDICTS = ['ok', 'needs_fix', 'decorative', 'keyword_stuffed'] as const
export type Verdict = (typeof VERDICTS)[number]

/** Longest alt text judged: the longest the alt-text route writes (max_length's bound). */
export const MAX_REVIEW_ALT_CHARS = 1000

const altText = z
  .string('must be a string')
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_REVIEW_ALT_CHARS, `must be at most ${MAX_REVIEW_ALT_CHARS} characters`)
  // Zero-width spaces, joiners, a BOM, soft hyphens, bidi marks: what the model would be shown is "".
  .refine((value) => asPromptData(value, MAX_REVIEW_ALT_CHARS) !== '', 'must not be empty: it has no visible characters')
  .meta({
    description: `The alt text in place, to be judged (at most ${MAX_REVIEW_ALT_CHARS} characters). It is data for the model, never instructions.`,
    examples: ['boat'],
  })

/**
 * The JSON body of POST /api/alt-text/review: the alt-text route's (its image sources and options) plus
 * alt_text. detect_decorative is left out: "decorative" is always one of the verdicts; languages is refused: one alt text is judged, in `language`.
 */
// `languages` is refused rather than dropped: a caller who sends it must not think several were judged.
const noLanguages = z
  .never('is not taken here: one alt text is judged, in one language; send language')
  .optional()
  .meta({ description: 'Not taken: one alt text is judged, in `language`. Sending it is a 400.' })

export const ReviewBody = AltTextBody.omit({ detect_decorative: true, languages: true })
  .extend({ alt_text: altText, languages: noLanguages })
  .meta({
    id: 'AltTextReviewRequest',
    examples: [{ image_url: 'https://example.com/photos/harbour.jpg', alt_text: 'boat', context: 'Article about the reopening of the old harbour' }],
  })

export type ReviewRequest = z.output<typeof ReviewBody>

/** The multipart/form-data body, for the document only (the route reads it as it streams, like POST /api/alt-text). */
export const ReviewUploadBody = AltTextUploadBody.omit({ detect_decorative: true, languages: true })
  .extend({ alt_text: z.string().max(MAX_REVIEW_ALT_CHARS).meta({ description: 'As in the JSON body.' }) })
  .meta({ id: 'AltTextReviewUploadRequest', description: 'Fields left empty count as not given. A field image_url may stand in for the file.' })

export const ReviewResponse = z.object({
  verdict: z.enum(VERDICTS).meta({
    description:
      'ok: the alt text serves a blind reader; needs_fix: it is wrong, too vague, misses what matters, or is a file name; decorative: the image adds no information and should have alt=""; keyword_stuffed: it is a list of search terms rather than a description.',
  }),
  reasons: z.string().meta({ description: 'Why, in a few words (one short line, at most 200 characters).' }),
  suggested_alt_text: z.string().nullable().meta({
    description: 'The alt text to use instead, cleaned and within max_length: null when the verdict is ok, "" when it is decorative (use alt="").',
  }),
  credits_remaining: z.number().int(),
  cached: z.boolean().meta({ description: 'A verdict given before for the same image, alt text and options: costs no credit.' }),
  language: z.string(),
  model: z.string(),
  processing_time_ms: z.number().int(),
  image: z.object({ width: z.number().int(), height: z.number().int(), format: z.enum(IMAGE_FORMATS) }),
  source: z.enum(['url', 'upload']),
})

export type ReviewResult = z.output<typeof ReviewResponse>
