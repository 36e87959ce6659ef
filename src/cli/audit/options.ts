// `alttext audit`'s command line: the flags, their checks (alt-text options by the service's own request
// schema), and --help.
import { resolve } from 'node:path'
import { AltTextBody } from '../../modules/alt-text/model'
import { CLIENT_OPTIONS, helpText, listFlag, parseCommandArgs, UsageError, wholeNumberFlag } from '../shared/args'
import type { AltTextOptions } from '../shared/client'
import { CHECK_REFUSES } from './check'
import { checkAllowPrivate, type SiteSettings } from './crawl/site'

/** Requests in flight by default: enough to keep a model server with 2–4 slots busy. */
const DEFAULT_CONCURRENCY = 4
const MAX_CONCURRENCY = 64
const DEFAULT_MAX_PAGES = 100
const MAX_CRAWL_DEPTH = 20
export const DEFAULT_REPORT = 'alttext-audit.html'

export type AuditSettings = {
  inputs: string[]
  /** Sent with every request (language only when --language is given: else each page's own). */
  options: Pick<AltTextOptions, 'style' | 'max_length' | 'keywords' | 'long_description'>
  language: string | undefined
  /** The length the lint holds current alt texts to: --max-length, else the service's default. */
  lintMaxLength: number
  concurrency: number
  /** Absolute paths; '-' for stdout. The HTML report is undefined only with --check and no --report. */
  report: string | undefined
  json: string | undefined
  csv: string | undefined
  fix: string | undefined
  overwrite: boolean
  /** --check: the lint only (a dry run), exit 1 when an image needs work. */
  check: boolean
  /** --sarif: absolute path, or '-'. */
  sarif: string | undefined
  /** --review: the CSV of proposed changes to write instead of fixed copies (absolute path). */
  review: string | undefined
  /** --apply: the reviewed CSV to write (absolute path); with it `inputs` is empty. */
  apply: string | undefined
  /** --review --queue: each proposed change becomes a suggestion of the service's review queue instead of a CSV row. */
  queue: boolean
  /** --apply --from-queue: write the accepted and edited suggestions of the roots in `inputs` (or --root). */
  fromQueue: boolean
  /** --in-place: --apply rewrites the files themselves instead of writing copies under --fix. */
  inPlace: boolean
  /** Alt texts that pass the lint are judged by POST /api/alt-text/review (see judge.ts). */
  judge: boolean
  dryRun: boolean
  crawl: number
  /** --render: page URLs are loaded in Chromium and their live DOM scanned (render/). */
  render: boolean
  maxPages: number
  /** --sitemap, --header, --cookie-file, --allow-private (crawl/site.ts). */
  site: SiteSettings
  root: string | undefined
  quiet: boolean
  /** --exclude GLOB, repeatable (exclude.ts). */
  exclude: string[]
  /** --baseline FILE: accepted findings (absolute path); --write-baseline FILE: where this run's findings go. */
  baseline: string | undefined
  writeBaseline: string | undefined
  url: string | undefined
  key: string | undefined
  /** --evidence DIR: the evidence pack's folder (absolute path). */
  evidence: string | undefined
  /** --diff OLD-summary.json: an older run's summary to compare with (absolute path). */
  diff: string | undefined
}

const FLAGS = {
  ...CLIENT_OPTIONS,
  report: { type: 'string', short: 'o' },
  json: { type: 'string' },
  csv: { type: 'string' },
  fix: { type: 'string' },
  overwrite: { type: 'boolean' },
  check: { type: 'boolean' },
  sarif: { type: 'string' },
  review: { type: 'string' },
  apply: { type: 'string' },
  queue: { type: 'boolean' },
  'from-queue': { type: 'boolean' },
  'in-place': { type: 'boolean' },
  judge: { type: 'boolean' },
  'dry-run': { type: 'boolean', short: 'n' },
  crawl: { type: 'string' },
  render: { type: 'boolean' },
  'max-pages': { type: 'string' },
  sitemap: { type: 'boolean' },
  header: { type: 'string', multiple: true },
  'cookie-file': { type: 'string' },
  'allow-private': { type: 'string', multiple: true },
  root: { type: 'string' },
  language: { type: 'string', short: 'l' },
  style: { type: 'string' },
  'max-length': { type: 'string' },
  keywords: { type: 'string', multiple: true },
  concurrency: { type: 'string', short: 'c' },
  'long-description': { type: 'boolean' },
  evidence: { type: 'string' },
  diff: { type: 'string' },
  exclude: { type: 'string', multiple: true },
  baseline: { type: 'string' },
  'write-baseline': { type: 'string' },
} as const

const FIELD_FLAGS: Record<string, string> = { language: '--language', style: '--style', max_length: '--max-length', keywords: '--keywords' }

const OptionsSchema = AltTextBody.pick({ language: true, style: true, max_length: true, keywords: true })

export const HELP = helpText({
  usage: [
    'alttext audit [options] FILES|DIRS|PAGE_URLS...',
    '       alttext audit --apply REVIEW.csv (--fix OUTDIR | --in-place)',
    '       alttext audit --apply --from-queue ROOT... (--fix OUTDIR | --in-place)',
  ].join('\n'),
  summary: [
    'Finds the images that need alt text and asks a running alttext for it. Reads HTML files, Markdown',
    'files (.md, .markdown), MDX (.mdx), Jupyter notebooks (.ipynb), EPUB books (.epub), directories',
    '(walked for all of these) and page URLs',
    '(fetched by this command), and checks every <img>, <input type=image> and role=img element with a',
    'background image (and SVG <image> in books): no alt, an empty alt that leaves a link or button',
    'without a name (alt="" elsewhere is decorative), or an alt the service\'s WCAG lint fails (a file',
    'name, "image of", a placeholder word). Each such image is sent (local files and images in books',
    'uploaded, others by URL) with the text around it as context and with detect_decorative. Writes a',
    'report (HTML, and JSON/CSV on request); --fix writes copies with the new alt texts and nothing else',
    'changed.',
  ].join('\n'),
  options: [
    { flag: '-o, --report FILE', meaning: `the HTML report (default ${DEFAULT_REPORT}; - for stdout)` },
    { flag: '--json FILE', meaning: 'also write the report as JSON (- for stdout)' },
    { flag: '--csv FILE', meaning: 'also write the report as CSV, one row per image (- for stdout)' },
    { flag: '--fix OUTDIR', meaning: 'write copies (pages, Markdown files, books) with the suggested alt texts' },
    { flag: '--overwrite', meaning: 'also replace alt texts that pass the lint or are long (never done otherwise)' },
    { flag: '--judge', meaning: 'have the model judge alt texts that pass the lint (1 credit per fresh verdict)' },
    { flag: '-n, --dry-run', meaning: 'list the findings only: no key needed, nothing sent, no credit spent' },
    { flag: '--check', meaning: 'CI gate: the lint only (no key, nothing sent), exit 1 when an image needs work' },
    { flag: '--sarif FILE', meaning: 'also write the findings as SARIF 2.1.0 for code scanning (- for stdout)' },
    {
      flag: '--exclude GLOB',
      meaning: 'leave out files (path from here or the folder given), book documents (book.epub!OEBPS/x.xhtml), URL paths; repeatable',
    },
    { flag: '--baseline FILE', meaning: 'accepted findings: those in FILE do not fail --check, new ones do (see --write-baseline)' },
    { flag: '--write-baseline FILE', meaning: "write this run's findings as a baseline to commit (JSON, version 1)" },
    { flag: '--review FILE.csv', meaning: 'ask for alt text like --fix, but write only the proposed changes as CSV' },
    { flag: '--apply FILE.csv', meaning: 'write the changes left in a reviewed CSV (nothing sent), with --fix or --in-place' },
    { flag: '--review --queue', meaning: "post the proposed changes as suggestions to the service's review queue (no CSV)" },
    { flag: '--apply --from-queue', meaning: 'write the accepted and edited suggestions of the roots given (or --root), checked as --apply' },
    { flag: '--in-place', meaning: 'with --apply: rewrite the files themselves instead of copies under --fix' },
    { flag: '--evidence DIR', meaning: 'also write the evidence pack: report, summary.json, findings.csv, review log, conformance.md' },
    { flag: '--diff OLD.json', meaning: "compare with an older run's summary.json; with --check, fail only on what got worse" },
    { flag: '--crawl DEPTH', meaning: `follow same-origin links of page URLs this many steps, 0-${MAX_CRAWL_DEPTH} (default 0)` },
    { flag: '--render', meaning: 'load page URLs in Chromium (ALTTEXT_CHROMIUM, else the system one) and scan the live DOM' },
    { flag: '--max-pages N', meaning: `with --crawl or --sitemap, stop adding pages at N in all (default ${DEFAULT_MAX_PAGES})` },
    { flag: '--sitemap', meaning: "also read the pages the site's sitemaps list (robots.txt Sitemap: lines, else /sitemap.xml)" },
    { flag: "--header 'NAME: VALUE'", meaning: 'send this header to the audited origins only, for private pages (repeatable)' },
    { flag: '--cookie-file FILE', meaning: 'send the cookies of this cookies.txt (Netscape format) to the audited origins only' },
    { flag: '--allow-private HOST', meaning: 'let redirects and sitemaps reach this private host, IP or CIDR (repeatable)' },
    { flag: '--root DIR', meaning: 'the site root that "/img/a.png" resolves in (default: the directory given)' },
    { flag: '-l, --language TAG', meaning: "BCP 47 language of the alt text, such as de or pt-BR (default: each document's own, else en)" },
    { flag: '--style STYLE', meaning: 'descriptive or concise (service default: descriptive)' },
    { flag: '--max-length N', meaning: 'maximum characters of a suggestion, 20-1000 (default 125); longer human alts are reported, kept' },
    { flag: '--keywords A,B', meaning: 'up to 10 keywords for every image' },
    { flag: '--long-description', meaning: 'also ask for long descriptions of complex images; --fix adds them (aria-describedby)' },
    { flag: '-c, --concurrency N', meaning: `requests in flight at once, 1-${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY})` },
  ],
  notes: [
    [
      'Human-written alt text that passes the lint, or is only longer than --max-length ("long": a long',
      'description may suit it; no failure), is never replaced unless --overwrite. A linked image',
      'whose link has its own text gets alt="" (no credit spent); an image that is a link\'s only content',
      'is described as the link target, with the link address in the context.',
    ].join('\n'),
    [
      "--judge sends each alt text that passes the lint, with its context, to the service's judge: a verdict",
      'other than ok (needs_fix, decorative, keyword_stuffed) makes it a finding with the reasons and a',
      'suggested alt, which --fix writes.',
    ].join('\n'),
    [
      '--fix copies every page it read into OUTDIR (same relative paths; page URLs under OUTDIR/HOST/),',
      'byte for byte except the alt (or aria-label) attributes it writes. The source files are not touched.',
    ].join('\n'),
    [
      '--check writes the HTML report only when --report is given. --review lists the images of local',
      'files whose alt text would change; edit the proposed_alt column or delete rows, then --apply: a row',
      'whose image no longer has the same alt text at its line and column is refused, the others written.',
    ].join('\n'),
    [
      '--review --queue posts each change the CSV would list as a pending suggestion (target kind file, ref',
      "path:line:column, site the root, the image's fingerprint; the image uploaded), to be decided in the",
      "console's review page. --apply --from-queue ROOT fetches the organisation's accepted and edited",
      'suggestions of that root and writes their final alt texts as --apply writes a CSV, stale ones refused.',
    ].join('\n'),
    [
      'Markdown: images as a CommonMark parser finds them (inline, reference, in links, HTML <img>; never',
      "in code); the language from the front matter's lang: when no --language. --fix rewrites only the",
      'text between ![ and ] of the images it fixes, escaped so that it reads back the same.',
    ].join('\n'),
    [
      "MDX: Markdown images and JSX <img>/<Image> with a literal alt; an alt that is code (alt={t('x')},",
      '{...props}) is listed as not checked and never rewritten; {/* alttext-ignore */} skips the next image.',
      'Notebooks: Markdown cells (attachment: images from the cell) and HTML outputs, at their line in the',
      ".ipynb; --fix rewrites only the alt inside the cell source's JSON string; outputs are not rewritten.",
    ].join('\n'),
    [
      "EPUB: the spine's content documents; <img>, and SVG <image> named by its <svg>'s <title>; the book's",
      'dc:language when no --language; its images are uploaded. --fix writes OUTDIR/book.epub: mimetype',
      'first and stored, the other entries as they were but the fixed documents and, once every image has',
      'a text alternative, the accessibility metadata that says so. Books that are broken, too large,',
      'zip bombs or hold names leaving the book are refused.',
    ].join('\n'),
    [
      '--evidence DIR writes report.html, summary.json, findings.csv, conformance.md (WCAG 1.1.1, EN 301 549',
      "9.1.1.1/10.1.1.1, Section 508 rows and a statement paragraph) and, with a key, the organisation's",
      'review log of these pages (GET requests only, also with --check). --diff OLD/summary.json lists what',
      'got worse since that run; with --check the exit code is then 1 only when something got worse.',
    ].join('\n'),
    [
      'URL pages: the origins of the URLs given may be anywhere (loopback, an intranet); any other address',
      '(a redirect, a sitemap elsewhere) must be public unless --allow-private names it. Pages the audit',
      'finds itself obey robots.txt for the user agent alttext (Disallow, Crawl-delay held to 30 s); the',
      'pages named are read all the same. At most 2 requests to a host at once. Sitemaps: indexes, gzip,',
      'at most 50 MB and 50,000 URLs a file. A page is read once, by its address and its canonical URL.',
    ].join('\n'),
    [
      '--render loads each page URL in headless Chromium, two at once, waits until no request has been in',
      'flight for 0.5 s (at most 30 s; a page still loading then is scanned as it is, with a note) and scans',
      'the live DOM: images inserted by scripts, shadow roots (open and closed), and role=img elements whose',
      'background image comes from a style sheet. Every request the page makes is sent by alttext itself',
      '(redirects checked hop by hop); WebSockets, downloads and service workers are refused. Lines and',
      'columns refer to the serialised DOM, so --fix cannot go with it. See docs/audit.md.',
    ].join('\n'),
    [
      'Skipped (counted as ignored): an element with data-alttext-ignore and the images inside it, and the',
      'next image after the comment <!-- alttext-ignore --> when only tags and whitespace come between.',
      'An image whose picture cannot be read (refused by the service, a missing file, a template address)',
      'is listed as not checked and fails nothing by itself; the lint of its alt text still counts.',
    ].join('\n'),
    [
      'Exit codes: 0 every page was read and every image that needs alt text got a suggestion (with',
      '--dry-run: every page was read; with --check: no image needs work that --baseline does not accept;',
      'with --apply: every row written; images not checked fail nothing); 1 some page or image failed',
      '(--check: some image needs work; --apply: a row was refused); 2 bad',
      'arguments or configuration, the key refused, or the service unreachable (nothing sent); 130 interrupted.',
    ].join('\n'),
  ],
  examples: [
    'alttext audit --dry-run site/',
    'alttext audit --check site/ --sarif alttext.sarif',
    "alttext audit --check site/ --exclude 'vendor/**' --baseline .alttext-baseline.json",
    'alttext audit site/ --review review.csv && alttext audit --apply review.csv --fix site-fixed/',
    'alttext audit site/ --review --queue && alttext audit --apply --from-queue site/ --in-place',
    'alttext audit site/ --fix site-fixed/ --json audit.json',
    'alttext audit docs/ book.epub --fix fixed/',
    'alttext audit https://www.example.org/ --crawl 2 --max-pages 50 -o example-audit.html',
    'alttext audit --check site/ --evidence evidence/ --diff last/summary.json',
    "alttext audit https://intranet.example/ --sitemap --cookie-file cookies.txt --header 'Authorization: Bearer …'",
    'alttext audit --render --check https://www.example.org/',
  ],
})

/** The settings, `'help'` for --help, or a UsageError. */
export function parseAuditArgs(argv: string[], cwd: string): AuditSettings | 'help' {
  const { args, bare } = bareModes(argv)
  const { values, positionals } = parseCommandArgs(args, FLAGS)
  if (values.help) return 'help'
  checkQueueModes(values, bare)
  checkCombinations(values, positionals)

  const given: Record<string, unknown> = {}
  if (values.language !== undefined) given.language = values.language
  if (values.style !== undefined) given.style = values.style
  if (values['max-length'] !== undefined) given.max_length = wholeNumberFlag('max-length', values['max-length'], 0, Number.MAX_SAFE_INTEGER)
  const keywords = listFlag(values.keywords)
  if (keywords !== undefined) given.keywords = keywords
  const parsed = OptionsSchema.safeParse(given)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const field = String(issue.path[0] ?? '')
    throw new UsageError(`${FIELD_FLAGS[field] ?? field} ${issue.message}`)
  }
  const options: AuditSettings['options'] = {}
  if (given.style !== undefined) options.style = parsed.data.style
  if (given.max_length !== undefined) options.max_length = parsed.data.max_length
  if (given.keywords !== undefined) options.keywords = parsed.data.keywords ?? undefined
  if (values['long-description']) options.long_description = true

  const path = (raw: string | undefined) => (raw === undefined ? undefined : raw === '-' ? '-' : resolve(cwd, raw))
  const outputs = [values.report, values.json, values.csv, values.sarif].filter((value) => value === '-')
  if (outputs.length > 1) throw new UsageError('only one of --report, --json, --csv and --sarif can write to stdout (-)')
  if (values.fix !== undefined && values.fix.trim() === '') throw new UsageError('--fix needs a directory')
  if (values.overwrite && values.fix === undefined && values.review === undefined && !values.queue)
    throw new UsageError('--overwrite only matters with --fix or --review')
  if (values.render && values.fix !== undefined)
    throw new UsageError("--render scans the live DOM, not the page's source file: --fix cannot write it back (run --fix on the site's files)")
  if (values.render && !positionals.some((positional) => /^https?:\/\//iu.test(positional)))
    throw new UsageError('--render loads page URLs: give at least one http(s) URL')
  for (const flag of ['baseline', 'write-baseline'] as const) {
    const value = values[flag]
    if (value !== undefined && (value.trim() === '' || value === '-')) throw new UsageError(`--${flag} needs a file name`)
  }
  if (values.judge && values['dry-run']) throw new UsageError('--judge asks the service for verdicts; --dry-run sends nothing')

  return {
    inputs: positionals,
    options,
    language: given.language === undefined ? undefined : parsed.data.language,
    lintMaxLength: parsed.data.max_length,
    concurrency: wholeNumberFlag('concurrency', values.concurrency, 1, MAX_CONCURRENCY) ?? DEFAULT_CONCURRENCY,
    report: path(values.report) ?? (values.check ? undefined : resolve(cwd, DEFAULT_REPORT)),
    json: path(values.json),
    csv: path(values.csv),
    fix: values.fix === undefined ? undefined : resolve(cwd, values.fix),
    overwrite: values.overwrite === true,
    check: values.check === true,
    sarif: path(values.sarif),
    review: values.review === undefined ? undefined : resolve(cwd, values.review),
    apply: values.apply === undefined ? undefined : resolve(cwd, values.apply),
    queue: values.queue === true,
    fromQueue: values['from-queue'] === true,
    inPlace: values['in-place'] === true,
    // --check is a dry run: nothing is sent, so no key or service is needed.
    dryRun: values['dry-run'] === true || values.check === true,
    judge: values.judge === true,
    crawl: wholeNumberFlag('crawl', values.crawl, 0, MAX_CRAWL_DEPTH) ?? 0,
    render: values.render === true,
    maxPages: wholeNumberFlag('max-pages', values['max-pages'], 1, 1_000_000) ?? DEFAULT_MAX_PAGES,
    site: {
      sitemap: values.sitemap === true,
      headers: values.header ?? [],
      cookieFile: values['cookie-file'],
      allowPrivate: checkAllowPrivate(listFlag(values['allow-private']) ?? []),
    },
    root: values.root === undefined ? undefined : resolve(cwd, values.root),
    quiet: values.quiet === true,
    exclude: values.exclude ?? [],
    baseline: values.baseline === undefined ? undefined : resolve(cwd, values.baseline),
    writeBaseline: values['write-baseline'] === undefined ? undefined : resolve(cwd, values['write-baseline']),
    url: values.url,
    key: values.key,
    evidence: nonEmptyPath('evidence', values.evidence, cwd),
    diff: nonEmptyPath('diff', values.diff, cwd),
  }
}

/** --evidence DIR and --diff FILE: a path, resolved; an empty one (or stdout's -) is refused. */
function nonEmptyPath(flag: string, value: string | undefined, cwd: string): string | undefined {
  if (value === undefined) return undefined
  if (value.trim() === '' || value === '-') throw new UsageError(`--${flag} needs a ${flag === 'evidence' ? 'folder' : 'file'} name`)
  return resolve(cwd, value)
}

/**
 * --review and --apply take a file name, except beside --queue / --from-queue: there they stand alone,
 * so they are taken out before parsing (else "--review --queue" would read "--queue" as the file name).
 */
function bareModes(argv: string[]): { args: string[]; bare: { review: boolean; apply: boolean } } {
  const end = argv.indexOf('--')
  const head = end === -1 ? argv : argv.slice(0, end)
  const queue = head.includes('--queue')
  const fromQueue = head.includes('--from-queue')
  const bare = { review: false, apply: false }
  // Followed by a value ("--review x.csv --queue"), it keeps it: checkQueueModes then refuses the file name.
  const alone = (index: number) => index + 1 >= head.length || head[index + 1]!.startsWith('-')
  const kept = head.filter((arg, index) => {
    if (queue && arg === '--review' && alone(index)) bare.review = true
    else if (fromQueue && arg === '--apply' && alone(index)) bare.apply = true
    else return true
    return false
  })
  return { args: end === -1 ? kept : [...kept, ...argv.slice(end)], bare }
}

function checkQueueModes(values: Record<string, unknown>, bare: { review: boolean; apply: boolean }) {
  if (values.queue && values['from-queue']) throw new UsageError('--review --queue and --apply --from-queue are two runs: give one')
  if (values.queue && values.review !== undefined)
    throw new UsageError('--review --queue posts to the review queue instead of writing a CSV: give no file name')
  if (values.queue && !bare.review) throw new UsageError('--queue goes with --review: alttext audit --review --queue FILES|DIRS...')
  if (values['from-queue'] && values.apply !== undefined)
    throw new UsageError('--apply --from-queue reads the review queue instead of a CSV: give no file name')
  if (values['from-queue'] && !bare.apply)
    throw new UsageError('--from-queue goes with --apply: alttext audit --apply --from-queue ROOT (--fix OUTDIR | --in-place)')
}

/** The flags that cannot go together: --check sends nothing, --review writes no copy, --apply reads no page. */
function checkCombinations(values: Record<string, unknown>, positionals: string[]) {
  const given = (flag: string) => values[flag] !== undefined
  if (values.check) {
    // --judge is refused too: each fresh verdict costs a credit, and the gate spends none.
    const refused = CHECK_REFUSES.filter(given)
    if (refused.length > 0) throw new UsageError(`--check sends nothing and writes no copy: it cannot go with --${refused.join(', --')}`)
  }
  if (given('review') || given('queue')) {
    if (given('review') && (String(values.review).trim() === '' || values.review === '-')) throw new UsageError('--review needs a file name for the CSV')
    const refused = ['fix', 'dry-run', 'apply'].filter(given)
    if (refused.length > 0) throw new UsageError(`--review writes the proposed changes instead of fixed copies: it cannot go with --${refused.join(', --')}`)
  }
  if (given('in-place') && !given('apply') && !given('from-queue')) throw new UsageError('--in-place only matters with --apply')
  if (given('from-queue')) {
    if (positionals.length === 0 && !given('root')) throw new UsageError('--apply --from-queue needs the root the audit ran on: give its folder, or --root DIR')
    if (positionals.some((positional) => /^[a-z][a-z0-9+.-]*:\/\//iu.test(positional)))
      throw new UsageError("--from-queue writes files: give the site's folder, not a URL")
  }
  if (given('apply') || given('from-queue')) {
    if (positionals.length > 0 && !given('from-queue')) throw new UsageError('--apply reads the files named in the CSV: give no pages or folders with it')
    const refused = [
      ...['dry-run', 'overwrite', 'crawl', 'render', 'report', 'json', 'csv', 'sarif', 'judge', 'evidence', 'diff'],
      ...['sitemap', 'header', 'cookie-file', 'allow-private', 'exclude', 'baseline', 'write-baseline'],
    ].filter(given)
    if (refused.length > 0) throw new UsageError(`--apply sends nothing and writes only the files: it cannot go with --${refused.join(', --')}`)
    if (given('fix') === given('in-place')) throw new UsageError('--apply needs either --fix OUTDIR (copies) or --in-place (the files themselves)')
    return
  }
  if (positionals.length === 0) throw new UsageError('give at least one file (HTML, Markdown, EPUB), directory or page URL')
  const urlFlags = ['sitemap', 'header', 'cookie-file', 'allow-private'].filter(given)
  if (urlFlags.length > 0 && !positionals.some((positional) => /^https?:\/\//iu.test(positional)))
    throw new UsageError(`--${urlFlags.join(', --')} ${urlFlags.length === 1 ? 'is' : 'are'} for page URLs: give the site's address (https://…)`)
}
