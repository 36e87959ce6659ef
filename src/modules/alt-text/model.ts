import ISO6391 from 'iso-639-1'
import { z } from 'zod'
import { MAX_URL_LENGTH } from '../../intake'
import { MAX_IMAGE_MB, MAX_LONG_DESCRIPTION_CHARS } from '../../shared/limits'

export const STYLES = ['descriptive', 'concise'] as const
export type Style = (typeof STYLES)[number]

// Bounds of the caller's fields: the schema enforces them, and the prompt is built within them.
export const MAX_CONTEXT_CHARS = 1000
export const MAX_KEYWORDS = 10
export const MAX_KEYWORD_CHARS = 50
const MIN_ALT_LENGTH = 20
const MAX_ALT_LENGTH = 1000

const language = z
  .string()
  .trim()
  .toLowerCase()
  .refine((code) => ISO6391.validate(code), 'must be an ISO 639-1 language code such as en, de or fr')
  .default('en')
  .meta({ description: 'ISO 639-1 code of the language to write in.', examples: ['en'] })
const context = z
  .string()
  .trim()
  .max(MAX_CONTEXT_CHARS, `must be at most ${MAX_CONTEXT_CHARS} characters`)
  .nullish()
  .meta({
    description: 'Page context that clarifies, but never overrides, what is visible.',
    examples: ['Article about the reopening of the old harbour'],
  })
const maxLength = z
  .number('must be a whole number')
  .int('must be a whole number')
  .min(MIN_ALT_LENGTH, `must be at least ${MIN_ALT_LENGTH}`)
  .max(MAX_ALT_LENGTH, `must be at most ${MAX_ALT_LENGTH}`)
  .default(125)
  .meta({ description: 'Maximum characters of the alt text.' })
const style = z
  .enum(STYLES, `must be ${STYLES.map((name) => `"${name}"`).join(' or ')}`)
  .default('descriptive')
  .meta({ description: 'descriptive: one or two sentences with the salient details; concise: one short sentence.' })
const keyword = z.string().trim().min(1, 'must not be empty').max(MAX_KEYWORD_CHARS, `must be at most ${MAX_KEYWORD_CHARS} characters`)
const keywords = z
  .array(keyword, 'must be an array of strings')
  .max(MAX_KEYWORDS, `must have at most ${MAX_KEYWORDS} entries`)
  .nullish()
  .meta({
    description: `Up to ${MAX_KEYWORDS} context keywords, used only where they fit the image. Case, order and repeats do not matter.`,
    examples: [['harbour', 'sailing boats']],
  })
const DECORATIVE_DESCRIPTION =
  'Let the model judge whether the image is purely decorative (adds no information: a divider, a background texture, an ornament). When it is, the answer has alt_text "", decorative true and a decorative_reason, so the page can use alt="". Costs a credit like any answer.'
const detectDecorative = z.boolean('must be true or false').default(false).meta({ description: DECORATIVE_DESCRIPTION })

const LONG_DESCRIPTION_DESCRIPTION = `Let the model judge whether the image is complex (a chart, graph, diagram, map, infographic, a screenshot of a table). When it is, the answer carries long_description: plain text of at most ${MAX_LONG_DESCRIPTION_CHARS} characters (what it shows, its data or structure in order, its conclusion), and alt_text names the kind of image and its point; for any other image long_description is null. One credit, like any answer.`
const longDescription = z.boolean('must be true or false').default(false).meta({ description: LONG_DESCRIPTION_DESCRIPTION })

const SOURCES = 'Exactly one image source: image_url, image_base64, or (as multipart/form-data) the file field image.'

/** The JSON body of POST /api/alt-text. Exactly one of image_url and image_base64 (checked by the route). */
export const AltTextBody = z
  .object({
    image_url: z
      .string('must be a string')
      .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
      .nullish()
      .meta({
        description: `Public https URL of a JPEG, PNG, GIF or WebP image up to ${MAX_IMAGE_MB} MB. ${SOURCES}`,
        examples: ['https://example.com/photos/harbour.jpg'],
      }),
    image_base64: z
      .string('must be a string')
      .nullish()
      .meta({
        description: `The image file itself: standard base64 (RFC 4648, padding optional, line breaks allowed) of a JPEG, PNG, GIF or WebP file up to ${MAX_IMAGE_MB} MB once decoded, or a data URL \`data:image/<type>;base64,…\`. The format is read from the bytes. ${SOURCES}`,
        examples: ['iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=='],
      }),
    language,
    context,
    max_length: maxLength,
    style,
    keywords,
    detect_decorative: detectDecorative,
    long_description: longDescription,
  })
  .meta({
    id: 'AltTextRequest',
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

/**
 * The multipart/form-data body of POST /api/alt-text, for the document only: the route reads the form as
 * it streams and checks its fields with AltTextBody (see body.ts).
 */
export const AltTextUploadBody = z
  .object({
    image: z.string().meta({
      description: `The image file (JPEG, PNG, GIF or WebP by its bytes, at most ${MAX_IMAGE_MB} MB). Its filename and Content-Type are not used.`,
      format: 'binary',
      contentMediaType: 'application/octet-stream',
    }),
    language: z
      .string()
      .optional()
      .meta({ description: 'As in the JSON body.', examples: ['en'] }),
    context: z.string().max(MAX_CONTEXT_CHARS).optional().meta({ description: 'As in the JSON body.' }),
    max_length: z.int().min(MIN_ALT_LENGTH).max(MAX_ALT_LENGTH).optional().meta({ description: 'A whole number, as in the JSON body.' }),
    style: z.enum(STYLES).optional(),
    keywords: z
      .array(z.string())
      .optional()
      .meta({ description: `Repeat the field once per keyword, or give one comma-separated list (at most ${MAX_KEYWORDS} in all).` }),
    detect_decorative: z.enum(['true', 'false']).optional().meta({ description: DECORATIVE_DESCRIPTION }),
    long_description: z.enum(['true', 'false']).optional().meta({ description: LONG_DESCRIPTION_DESCRIPTION }),
  })
  .meta({ id: 'AltTextUploadRequest', description: 'Fields left empty count as not given. A field image_url may stand in for the file.' })

// long_description optional: requests built in code (batch items, the CLI, tests) need not name it to mean false.
export type AltTextRequest = Omit<z.output<typeof AltTextBody>, 'long_description'> & { long_description?: boolean }

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
  decorative: z.boolean().meta({
    description: 'The model judged the image purely decorative (only when detect_decorative was true): alt_text is "" and the image should get alt="".',
  }),
  decorative_reason: z.string().nullable().meta({ description: 'Why the image was judged decorative, in a few words; null when it was not.' }),
  text_in_image: z.string().nullable().meta({
    description:
      'The text the image shows, read by the OCR inside the service: verbatim, its lines in reading order joined by "\\n"; null when it shows none. An image mostly of text gets it in alt_text (fitted to max_length; the whole text in long_description when asked for), else wcag_issues says the alt text leaves it out. With ALTTEXT_OCR=off: as the model read it, null when the model server answered in plain text.',
  }),
  source: z.enum(['url', 'upload']).meta({ description: 'Where the image came from: fetched from image_url, or uploaded (image_base64 or multipart).' }),
  long_description: z
    .string()
    .nullable()
    .optional()
    .meta({
      description: `Only when long_description was true (then always present): the long description of a complex image, plain text of at most ${MAX_LONG_DESCRIPTION_CHARS} characters; null for an image that is not complex.`,
    }),
})

export type AltTextResult = z.output<typeof AltTextResponse>

/** The errors a route that asks the model for an image can answer (POST /api/alt-text, /api/alt-text/review), as OpenAPI lists them. */
export const GENERATION_ERRORS = [
  'invalid_request',
  'invalid_image_url',
  'invalid_image',
  'quota_exceeded',
  'upstream_error',
  'overloaded',
  'upstream_timeout',
  'database_busy',
] as const

/** The example 200 body in the API description: of POST /api/alt-text, and of a done batch item. */
export const EXAMPLE_ALT_TEXT_RESULT = {
  alt_text: 'Sailing boats moored in a small harbour at sunset, with a lighthouse on the pier.',
  credits_remaining: 46,
  wcag_compliant: true,
  character_count: 81,
  processing_time_ms: 1420,
  length: 81,
  language: 'en',
  cached: false,
  wcag_issues: [],
  model: 'llava',
  image: { width: 1024, height: 683, format: 'jpeg' as const },
  decorative: false,
  decorative_reason: null,
  text_in_image: null,
  source: 'url' as const,
}
