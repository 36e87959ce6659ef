import ISO6391 from 'iso-639-1'
import { z } from 'zod'
import { MAX_URL_LENGTH } from '../../intake'

export const STYLES = ['descriptive', 'concise'] as const
export type Style = (typeof STYLES)[number]

// Bounds of the caller's fields: the schema enforces them, and the prompt is built within them.
export const MAX_CONTEXT_CHARS = 1000
export const MAX_KEYWORDS = 10
export const MAX_KEYWORD_CHARS = 50
const MIN_ALT_LENGTH = 20
const MAX_ALT_LENGTH = 1000

export const AltTextBody = z
  .object({
    image_url: z
      .string()
      .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
      .meta({ description: 'Public https URL of a JPEG, PNG, GIF or WebP image up to 10 MB.', examples: ['https://example.com/photos/harbour.jpg'] }),
    language: z
      .string()
      .trim()
      .toLowerCase()
      .refine((code) => ISO6391.validate(code), 'must be an ISO 639-1 language code such as en, de or fr')
      .default('en')
      .meta({ description: 'ISO 639-1 code of the language to write in.', examples: ['en'] }),
    context: z
      .string()
      .trim()
      .max(MAX_CONTEXT_CHARS, `must be at most ${MAX_CONTEXT_CHARS} characters`)
      .nullish()
      .meta({
        description: 'Page context that clarifies, but never overrides, what is visible.',
        examples: ['Article about the reopening of the old harbour'],
      }),
    max_length: z
      .number()
      .int('must be a whole number')
      .min(MIN_ALT_LENGTH, `must be at least ${MIN_ALT_LENGTH}`)
      .max(MAX_ALT_LENGTH, `must be at most ${MAX_ALT_LENGTH}`)
      .default(125)
      .meta({ description: 'Maximum characters of the alt text.' }),
    style: z.enum(STYLES, `must be ${STYLES.map((style) => `"${style}"`).join(' or ')}`).default('descriptive'),
    keywords: z
      .array(
        z.string().trim().min(1, 'must not be empty').max(MAX_KEYWORD_CHARS, `must be at most ${MAX_KEYWORD_CHARS} characters`),
        'must be an array of strings',
      )
      .max(MAX_KEYWORDS, `must have at most ${MAX_KEYWORDS} entries`)
      .nullish()
      .meta({
        description: `Up to ${MAX_KEYWORDS} context keywords, used only where they fit the image. Case, order and repeats do not matter.`,
        examples: [['harbour', 'sailing boats']],
      }),
  })
  .meta({
    examples: [
      {
        image_url: 'https://example.com/photos/harbour.jpg',
        language: 'en',
        style: 'descriptive',
        max_length: 125,
        context: 'Article about the reopening of the old harbour',
        keywords: ['harbour', 'sailing boats'],
      },
    ],
  })

export type AltTextRequest = z.output<typeof AltTextBody>

export const AltTextResponse = z.object({
  alt_text: z.string(),
  credits_remaining: z.number().int(),
  wcag_compliant: z.boolean().meta({
    description: 'Computed: non-empty, within max_length, no redundant opening, not a file name or URL, and the lint rules of @double-great/alt-text.',
  }),
  character_count: z.number().int(),
  processing_time_ms: z.number().int(),
  length: z.number().int().meta({ description: 'Same as character_count (both field sets of the spec are returned).' }),
  language: z.string(),
  cached: z.boolean().meta({ description: 'Served from the cache: costs no credit.' }),
  wcag_issues: z.array(z.string()).meta({ description: 'What failed the WCAG checks; empty when compliant.' }),
  model: z.string(),
  image: z.object({ width: z.number().int(), height: z.number().int(), format: z.enum(['jpeg', 'png', 'gif', 'webp']) }),
})

export type AltTextResult = z.output<typeof AltTextResponse>
