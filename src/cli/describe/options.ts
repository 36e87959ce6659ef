// `alttext describe`'s command line: the flags, their checks (the alt-text options by the service's own
// request schema, so the command refuses before sending what every image would be refused for), and --help.
import { resolve } from 'node:path'
import { AltTextBody, MAX_LANGUAGES, oneLanguageChoice } from '../../modules/alt-text/model'
import { CLIENT_OPTIONS, choiceFlag, helpText, listFlag, parseCommandArgs, UsageError, wholeNumberFlag } from '../shared/args'
import type { AltTextOptions } from '../shared/client'

export const FORMATS = ['jsonl', 'csv', 'json'] as const
export type Format = (typeof FORMATS)[number]

/** Requests in flight by default: enough to keep a model server with 2–4 slots busy. */
const DEFAULT_CONCURRENCY = 4
const MAX_CONCURRENCY = 64

export type DescribeSettings = {
  inputs: string[]
  options: AltTextOptions
  concurrency: number
  format: Format
  /** Absolute path of the output file; undefined: results go to stdout (no resume). */
  output: string | undefined
  /** Discard the results already in the output file instead of resuming from them. */
  restart: boolean
  quiet: boolean
  url: string | undefined
  key: string | undefined
}

const FLAGS = {
  ...CLIENT_OPTIONS,
  language: { type: 'string', short: 'l' },
  languages: { type: 'string', multiple: true },
  style: { type: 'string' },
  'max-length': { type: 'string' },
  context: { type: 'string' },
  keywords: { type: 'string', multiple: true },
  'detect-decorative': { type: 'boolean' },
  'long-description': { type: 'boolean' },
  concurrency: { type: 'string', short: 'c' },
  format: { type: 'string', short: 'f' },
  output: { type: 'string', short: 'o' },
  restart: { type: 'boolean' },
} as const

/** The request field each flag sets, for messages that name the flag rather than the field. */
const FIELD_FLAGS: Record<string, string> = {
  language: '--language',
  languages: '--languages',
  style: '--style',
  max_length: '--max-length',
  context: '--context',
  keywords: '--keywords',
  detect_decorative: '--detect-decorative',
  long_description: '--long-description',
}

const OptionsSchema = AltTextBody.pick({
  language: true,
  languages: true,
  style: true,
  max_length: true,
  context: true,
  keywords: true,
  detect_decorative: true,
  long_description: true,
}).superRefine(oneLanguageChoice)

export const HELP = helpText({
  usage: 'alttext describe [options] FILES|DIRS|URLS...',
  summary: [
    'Writes alt text for many images with a running alttext service. Local files are uploaded; URLs',
    '(https://...) are passed for the service to fetch; directories are walked (subdirectories too, hidden',
    'ones skipped) for JPEG, PNG, GIF, WebP, AVIF and SVG files, by extension or by their first bytes.',
  ].join('\n'),
  options: [
    { flag: '-l, --language TAG', meaning: 'BCP 47 language of the alt text: de, pt-BR, zh-Hant ... (service default: en)' },
    { flag: '--languages A,B', meaning: `instead of --language: up to ${MAX_LANGUAGES} languages, the first described, the others translated` },
    { flag: '--style STYLE', meaning: 'descriptive or concise (service default: descriptive)' },
    { flag: '--max-length N', meaning: 'maximum characters of each alt text, 20-1000 (service default: 125)' },
    { flag: '--context TEXT', meaning: 'what the images are about; clarifies, never overrides what is visible' },
    { flag: '--keywords A,B', meaning: 'up to 10 keywords, comma-separated or the flag repeated' },
    { flag: '--detect-decorative', meaning: 'let the model judge purely decorative images (alt_text "")' },
    { flag: '--long-description', meaning: 'a long description of complex images (charts, diagrams, maps) too: its own column' },
    { flag: '-c, --concurrency N', meaning: `requests in flight at once, 1-${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY})` },
    { flag: '-f, --format FORMAT', meaning: 'jsonl, csv or json (default: from the --output extension, else jsonl)' },
    { flag: '-o, --output FILE', meaning: 'write results here (default: stdout); an existing file is resumed' },
    { flag: '--restart', meaning: 'ignore the results already in --output and start over' },
  ],
  notes: [
    [
      'Resume: with --output, results are written as they arrive (json: to FILE.partial.jsonl until the',
      'end). Run the same command again after an interruption and the images that already have a result',
      'in FILE are skipped: no credit is spent twice. Failed images are tried again. Keep the working',
      'directory: relative paths are matched as written.',
    ].join('\n'),
    [
      'Waiting: 429 rate_limited and 503 answers are waited out as their Retry-After says (all requests',
      'pause), then sent again. 429 quota_exceeded stops the run: no credit left this month.',
    ].join('\n'),
    [
      'Exit codes: 0 every image has a result; 1 some failed or the run stopped early (out of credits);',
      '2 bad arguments or configuration, the key refused, or the service unreachable (nothing sent);',
      '130 interrupted (Ctrl-C: running requests finish and are written; a second Ctrl-C stops at once).',
    ].join('\n'),
  ],
  examples: [
    'alttext describe photos/ -o alt.csv',
    'alttext describe --language de --style concise --detect-decorative media/ -o media-alt.jsonl',
    'alttext describe --languages de,fr,pt-BR media/ -o media-alt.csv',
    'ALTTEXT_URL=https://alttext.example.org alttext describe https://example.org/a.jpg hero.png',
  ],
})

/** The settings, `'help'` for --help, or a UsageError. */
export function parseDescribeArgs(argv: string[], cwd: string): DescribeSettings | 'help' {
  const { values, positionals } = parseCommandArgs(argv, FLAGS)
  if (values.help) return 'help'
  if (positionals.length === 0) throw new UsageError('give at least one image file, directory or URL')

  const given: Record<string, unknown> = {}
  if (values.language !== undefined) given.language = values.language
  const languages = listFlag(values.languages)
  if (languages !== undefined) given.languages = languages
  if (values.style !== undefined) given.style = values.style
  if (values['max-length'] !== undefined) given.max_length = wholeNumberFlag('max-length', values['max-length'], 0, Number.MAX_SAFE_INTEGER)
  if (values.context !== undefined) given.context = values.context
  const keywords = listFlag(values.keywords)
  if (keywords !== undefined) given.keywords = keywords
  if (values['detect-decorative']) given.detect_decorative = true
  if (values['long-description']) given.long_description = true
  const parsed = OptionsSchema.safeParse(given)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const field = String(issue.path[0] ?? '')
    throw new UsageError(`${FIELD_FLAGS[field] ?? field} ${issue.message}`)
  }
  // Only what was given is sent: the service applies its own defaults to the rest.
  const options: AltTextOptions = {}
  for (const name of Object.keys(given) as (keyof AltTextOptions)[]) (options as Record<string, unknown>)[name] = parsed.data[name]

  const output = values.output === undefined ? undefined : resolve(cwd, values.output)
  const fromExtension = FORMATS.find((format) => output?.toLowerCase().endsWith(`.${format}`))
  const format = choiceFlag('format', values.format, FORMATS, fromExtension ?? 'jsonl')
  if (values.restart && output === undefined) throw new UsageError('--restart needs --output')

  return {
    inputs: positionals,
    options,
    concurrency: wholeNumberFlag('concurrency', values.concurrency, 1, MAX_CONCURRENCY) ?? DEFAULT_CONCURRENCY,
    format,
    output,
    restart: values.restart === true,
    quiet: values.quiet === true,
    url: values.url,
    key: values.key,
  }
}
