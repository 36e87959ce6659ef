import { z } from 'zod'
import { IMAGE_FORMATS, MAX_URL_LENGTH } from '../../intake'
import { MAX_IMAGE_MB, MAX_LONG_DESCRIPTION_CHARS } from '../../shared/limits'
import { canonicalTag, checkLanguageTag } from './language-tag'

export const STYLES = ['descriptive', 'concise'] as const
export type Style = (typeof STYLES)[number]

// Bounds of the caller's fields: the schema enforces them, and the prompt is built within them.
export const MAX_CONTEXT_CHARS = 1000
export const MAX_KEYWORDS = 10
export const MAX_KEYWORD_CHARS = 50
const MIN_ALT_LENGTH = 20
const MAX_ALT_LENGTH = 1000

/** The language of a request that names none. */
export const DEFAULT_LANGUAGE = 'en'
export const MAX_LANGUAGES = 5

/** A BCP 47 tag, checked against the IANA registry and put in its canonical form (see language-tag.ts). */
export const languageTag = z
  .string('must be a string')
  .trim()
  .superRefine((value, ctx) => {
    const checked = checkLanguageTag(value)
    if ('problem' in checked) ctx.addIssue({ code: 'custom', message: checked.problem })
  })
  .overwrite(canonicalTag)

const TAG_RULES =
  'A BCP 47 tag (RFC 5646): a language of the IANA registry, optionally with script, region and variants (de, pt-BR, en-GB, zh-Hant, sr-Latn), in any case; the answer gives it in canonical case. Private-use (-x-…) and extension (-u-…) subtags are refused.'
// Optional rather than defaulted, so that giving it beside `languages` can be refused; DEFAULT_LANGUAGE applies.
const language = languageTag.optional().meta({
  description: `The language to write in. ${TAG_RULES} Default: ${DEFAULT_LANGUAGE}. Not with \`languages\`.`,
  examples: ['en', 'pt-BR'],
  default: DEFAULT_LANGUAGE,
})
const languages = z
  .array(languageTag, 'must be an array of language tags')
  .min(1, 'must name at least one language')
  .max(MAX_LANGUAGES, `must name at most ${MAX_LANGUAGES} languages`)
  .superRefine((tags, ctx) => {
    const seen = new Set<string>()
    for (const [index, tag] of tags.entries()) {
      if (seen.has(tag)) ctx.addIssue({ code: 'custom', path: [index], message: `names ${tag} twice (tags are compared in canonical form)` })
      seen.add(tag)
    }
  })
  .optional()
  .meta({
    description: `1 to ${MAX_LANGUAGES} languages, instead of \`language\`: the first is written from the image (one vision call), each further one translated from it by the same model, text only. Each tag as for \`language\`, no tag twice. The answer's \`alt_texts\` has one entry per language returned; one credit per language returned (a cached one is free).`,
    examples: [['en', 'de', 'pt-BR']],
  })

/** Refuses `language` and `languages` together: added where a body schema with both is parsed (AltTextBody stays plain for .pick and .omit). */
export function oneLanguageChoice(value: { language?: string | undefined; languages?: string[] | undefined }, ctx: z.RefinementCtx): void {
  if (value.language !== undefined && value.languages !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['languages'], message: 'give language or languages, not both' })
  }
}

/** The languages a request asks for, in order: `languages`, else `language`, else the default. */
export const requestedLanguages = (request: { language?: string | undefined; languages?: string[] | undefined }): string[] =>
  request.languages ?? [request.language ?? DEFAULT_LANGUAGE]
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
        description: `Public https URL of a JPEG, PNG, GIF, WebP, AVIF or SVG image up to ${MAX_IMAGE_MB} MB. ${SOURCES}`,
        examples: ['https://example.com/photos/harbour.jpg'],
      }),
    image_base64: z
      .string('must be a string')
      .nullish()
      .meta({
        description: `The image file itself: standard base64 (RFC 4648, padding optional, line breaks allowed) of a JPEG, PNG, GIF, WebP, AVIF or SVG file up to ${MAX_IMAGE_MB} MB once decoded, or a data URL \`data:image/<type>;base64,…\`. The format is read from the bytes. ${SOURCES}`,
        examples: ['iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=='],
      }),
    language,
    languages,
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
      description: `The image file (JPEG, PNG, GIF, WebP, AVIF or SVG by its bytes, at most ${MAX_IMAGE_MB} MB). Its filename and Content-Type are not used.`,
      format: 'binary',
      contentMediaType: 'application/octet-stream',
    }),
    language: z
      .string()
      .optional()
      .meta({ description: 'As in the JSON body.', examples: ['pt-BR'] }),
    languages: z
      .array(z.string())
      .optional()
      .meta({ description: `As in the JSON body: repeat the field once per language, or give one comma-separated list (at most ${MAX_LANGUAGES}).` }),
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

/** The JSON body as POST /api/alt-text checks it: AltTextBody, and not both language and languages. */
export const AltTextRequestBody = AltTextBody.superRefine(oneLanguageChoice)

/** One language's alt text in an answer to `languages`. */
export const LanguageAltText = z
  .object({
    alt_text: z.string(),
    wcag_compliant: z.boolean(),
    wcag_issues: z.array(z.string()).meta({ description: 'As for the answer; "is not in … (…)" when the text is still not in this language after one retry.' }),
    character_count: z.number().int(),
  })
  .meta({ id: 'LanguageAltText' })

export const AltTextResponse = z.object({
  alt_text: z.string(),
  credits_remaining: z.number().int(),
  wcag_compliant: z.boolean().meta({
    description: 'Computed: non-empty, within max_length, no redundant opening, not a file name or URL, and the lint rules of @double-great/alt-text.',
  }),
  character_count: z.number().int(),
  processing_time_ms: z.number().int(),
  length: z.number().int().meta({ description: 'Same as character_count (both field sets of the spec are returned).' }),
  language: z
    .string()
    .meta({ description: 'The language tag of alt_text, in canonical case (pt-BR, zh-Hant): the one asked for, or with `languages` the first returned.' }),
  cached: z.boolean().meta({ description: 'Served from the cache: costs no credit. With `languages`: every language returned was cached.' }),
  wcag_issues: z.array(z.string()).meta({ description: 'What failed the WCAG checks; empty when compliant.' }),
  model: z.string(),
  image: z.object({ width: z.number().int(), height: z.number().int(), format: z.enum(IMAGE_FORMATS) }),
  animated: z.boolean().meta({
    description:
      'The image is an animation (a GIF or WebP of several frames): the model saw up to four of its frames, evenly spaced from the first to the last, in one grid in reading order. False for every other image.',
  }),
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
  alt_texts: z.record(z.string(), LanguageAltText).optional().meta({
    description:
      'Only with `languages`: the alt text of each language returned, by tag in canonical case. The top-level alt_text, wcag_compliant, wcag_issues, character_count and language are those of the first language returned, so a client that reads only them still works.',
  }),
  failed_languages: z.array(z.string()).optional().meta({
    description:
      'Only with `languages`: the tags whose translation failed (the model server erred or answered nothing usable); they cost nothing. A translation still in another language after one retry is returned, with wcag_compliant false.',
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
  animated: false,
  decorative: false,
  decorative_reason: null,
  text_in_image: null,
  source: 'url' as const,
}
