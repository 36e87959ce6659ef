// --review --queue and --apply --from-queue: the review CSV's proposed changes as suggestions of the
// service's review queue (decided by people in the console), and the decided ones written back. The
// suggestions carry what the CSV carries (the place as `path:line:column`, the root as `site`, the image's
// fingerprint), so --from-queue turns them into the CSV's rows and writes them with the same code.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { MAX_SUGGESTED_ALT_CHARS } from '../../modules/suggestions/model'
import { plural } from '../../shared/wording'
import { VERSION } from '../../version'
import { displayPath } from './pages'
import { normaliseAlt, placeOf, type ReviewEntry, type ReviewRow } from './review'

const USER_AGENT = `alttext-cli/${VERSION} (audit)`

/** The suggestions' target kind of an image in a file. */
export const FILE_TARGET = 'file'

type Service = { url: string; key: string }

/** Where the organisation's reviewers decide: the console's review page. */
export const queueUrl = (service: Service) => `${service.url}/console/#/review`

/** The answer's error as one line: `code: message`, or the status. */
async function errorOf(response: Response): Promise<string> {
  const text = await response.text()
  try {
    const error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error
    if (error?.code) return `${error.code}: ${error.message ?? ''}`
  } catch {
    // Not JSON: the status says enough.
  }
  return `HTTP ${response.status}`
}

const call = (service: Service, path: string, init: RequestInit = {}) =>
  fetch(`${service.url}${path}`, {
    ...init,
    headers: { 'x-api-key': service.key, 'user-agent': USER_AGENT, accept: 'application/json', 'content-type': 'application/json' },
  })

/** The body of POST /api/suggestions for an entry: its proposal given, so the service generates (and charges) nothing. */
function suggestionBody(entry: ReviewEntry, language: string, maxLength: number | undefined, cwd: string): Record<string, unknown> | string {
  const { source } = entry
  let image: Record<string, string>
  if ('error' in source) return `its image cannot be read: ${source.error}`
  if ('file' in source) image = { image_base64: readFileSync(source.file).toString('base64') }
  else if ('data' in source) image = { image_base64: Buffer.from(source.data).toString('base64') }
  else image = { image_url: source.url }
  const current = entry.image.text
  return {
    ...image,
    target: { kind: FILE_TARGET, ref: placeOf({ file: entry.file, change: entry }, cwd), site: displayPath(entry.root, cwd), fingerprint: entry.fingerprint },
    // Only shown to the reviewer: a very long one is cut rather than refused.
    ...(current !== null && { current_alt: current.slice(0, MAX_SUGGESTED_ALT_CHARS) }),
    proposed_alt: entry.alt,
    language,
    ...(maxLength !== undefined && { max_length: maxLength }),
  }
}

/**
 * Posts each entry as a pending suggestion (`concurrency` at a time). An empty proposal (alt="") is
 * left out: the queue takes a text (an empty proposed_alt would make the service write one, for a credit).
 */
export async function queueEntries(
  entries: { entry: ReviewEntry; language: string }[],
  options: { service: Service; maxLength: number | undefined; concurrency: number; cwd: string },
  warn: (line: string) => void,
): Promise<{ queued: number; failed: number; empty: number }> {
  let queued = 0
  let failed = 0
  const todo = entries.filter(({ entry }) => entry.alt !== '')
  let next = 0
  const worker = async () => {
    while (next < todo.length) {
      const { entry, language } = todo[next++]!
      const place = placeOf({ file: entry.file, change: entry }, options.cwd)
      let body: Record<string, unknown> | string
      try {
        body = suggestionBody(entry, language, options.maxLength, options.cwd)
      } catch (error) {
        body = `its image cannot be read: ${(error as Error).message}`
      }
      if (typeof body === 'string') {
        failed++
        warn(`${place}: not queued: ${body}`)
        continue
      }
      try {
        const response = await call(options.service, '/api/suggestions', { method: 'POST', body: JSON.stringify(body) })
        if (response.status === 201) {
          await response.body?.cancel()
          queued++
          continue
        }
        failed++
        warn(`${place}: not queued: ${await errorOf(response)}`)
      } catch (error) {
        failed++
        warn(`${place}: not queued: ${(error as Error).message}`)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency, todo.length) }, worker))
  return { queued, failed, empty: entries.length - todo.length }
}

type QueuedSuggestion = {
  id: string
  status: string
  final_alt: string | null
  target: { kind: string; ref: string; site: string | null; fingerprint: string | null }
}

/** Every suggestion of the organisation with `status` and target kind file, page after page. */
async function fetchDecided(service: Service, status: 'accepted' | 'edited'): Promise<QueuedSuggestion[]> {
  const found: QueuedSuggestion[] = []
  let cursor: string | null = null
  do {
    const query = new URLSearchParams({ status, target_kind: FILE_TARGET, limit: '100', ...(cursor !== null && { cursor }) })
    const response = await call(service, `/api/suggestions?${query}`)
    if (response.status !== 200) throw new Error(`${service.url} answered ${response.status} ${await errorOf(response)}`)
    const page = (await response.json()) as { suggestions: QueuedSuggestion[]; next_cursor: string | null }
    found.push(...page.suggestions)
    cursor = page.next_cursor
  } while (cursor !== null)
  return found
}

/** `path:line:column`, the path with `book.epub!entry` inside a book (as placeOf writes it). */
const REF = /^(?<path>.+):(?<line>[1-9][0-9]*):(?<column>[1-9][0-9]*)$/u
const BOOK_ENTRY = /^(?<book>.+?\.epub)!(?<document>.+)$/iu

/**
 * The accepted and edited suggestions of kind file whose site is one of `roots`, as the rows --apply
 * writes (newest decision first, as listed); one that cannot be read is refused with its id.
 */
export async function rowsFromQueue(
  service: Service,
  roots: string[],
  cwd: string,
): Promise<{ rows: ReviewRow[]; unread: { row: number; text: string }[]; other: number }> {
  const sites = new Set(roots.map((root) => displayPath(root, cwd)))
  const decided = [...(await fetchDecided(service, 'accepted')), ...(await fetchDecided(service, 'edited'))]
  const rows: ReviewRow[] = []
  const unread: { row: number; text: string }[] = []
  let other = 0
  for (const suggestion of decided) {
    const site = suggestion.target.site
    if (site === null || !sites.has(site)) {
      other++
      continue
    }
    const row = rows.length + unread.length + 1
    const label = `suggestion ${suggestion.id}`
    const ref = REF.exec(suggestion.target.ref)?.groups
    const fingerprint = (suggestion.target.fingerprint ?? '').trim().toLowerCase()
    if (!ref || !/^[0-9a-f]{32}$/u.test(fingerprint) || suggestion.final_alt === null) {
      unread.push({ row, text: `${label}: ${suggestion.target.ref}: refused: not a place of alttext audit (path:line:column and a fingerprint)` })
      continue
    }
    const book = BOOK_ENTRY.exec(ref.path!)?.groups
    rows.push({
      row,
      label,
      file: resolve(cwd, book ? book.book! : ref.path!),
      root: resolve(cwd, site),
      change: {
        document: book ? book.document! : '',
        line: Number(ref.line),
        column: Number(ref.column),
        fingerprint,
        alt: normaliseAlt(suggestion.final_alt),
      },
    })
  }
  return { rows, unread, other }
}

/** The line that closes --review --queue. */
export const queuedLine = (service: Service, outcome: { queued: number; failed: number; empty: number }) =>
  `queued: ${plural(outcome.queued, 'suggestion')} for review at ${queueUrl(service)}` +
  `${outcome.failed > 0 ? `, ${outcome.failed} failed` : ''}` +
  `${outcome.empty > 0 ? `; ${plural(outcome.empty, 'empty alt')} (alt="") left out: use --review FILE.csv for those` : ''}`
