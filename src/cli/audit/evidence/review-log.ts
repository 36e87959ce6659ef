// The review log of the evidence pack: the organisation's decisions on suggestions for the audited pages,
// read from its activity log (GET /api/orgs/{id}/activity, newest first, cursor paging). The log names a
// suggestion by id; its `suggestion.created` entry carries the target (kind and ref: `path:line:column`
// for the audit's own queue, a page URL for others), which ties the decisions to a page of this run.
import { VERSION } from '../../../version'
import { csvField } from '../../shared/csv'
import type { PageResult } from '../report'

const USER_AGENT = `alttext-cli/${VERSION} (audit evidence)`
const PAGE_LIMIT = 200
/** Bounded memory: a log longer than this is read to here and the pack says it was cut. */
const MAX_ENTRIES = 200_000
const REQUEST_TIMEOUT_MS = 30_000

type ActivityEntry = { seq: number; at: string; actor: string | null; action: string; subject: string | null; detail: Record<string, unknown> }

export type ReviewLogRow = {
  seq: number
  at: string
  actor: string | null
  /** created, accepted, edited, rejected or reopened. */
  action: string
  suggestion: string
  page: string
  target_kind: string
  target_ref: string
  final_alt: string | null
  reason: string | null
}

export type ReviewLog =
  | { included: true; organisation: string; service: string; entries: ReviewLogRow[]; truncated: boolean }
  | { included: false; reason: string }

type Service = { url: string; key: string }

class LogUnavailable extends Error {}

async function getJson(service: Service, path: string): Promise<unknown> {
  let response: Response
  try {
    response = await fetch(`${service.url}${path}`, {
      headers: { 'x-api-key': service.key, 'user-agent': USER_AGENT, accept: 'application/json' },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
  } catch (error) {
    throw new LogUnavailable(`${service.url} could not be reached (${(error as Error).message})`)
  }
  const text = await response.text()
  if (!response.ok) {
    let code = `HTTP ${response.status}`
    try {
      const parsed = (JSON.parse(text) as { error?: { code?: string } }).error?.code
      if (parsed) code = `${response.status} ${parsed}`
    } catch {
      // Not JSON: the status says enough.
    }
    if (response.status === 401) throw new LogUnavailable(`the service refused the key (${code})`)
    if (response.status === 403) throw new LogUnavailable(`the key's role cannot read the organisation's activity log: admins and owners only (${code})`)
    throw new LogUnavailable(`${service.url}${path.replace(/\?.*$/u, '')} answered ${code}`)
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new LogUnavailable(`${service.url}${path.replace(/\?.*$/u, '')} answered with no JSON`)
  }
}

/** The organisation the key acts in: its org_id in GET /api/keys, or (a personal key) the account's personal organisation. */
async function organisationOf(service: Service): Promise<string> {
  const prefix = service.key.slice(0, 12)
  const keys = (await getJson(service, '/api/keys')) as { keys?: { prefix: string; org_id?: string }[] }
  const own = keys.keys?.find((key) => key.prefix === prefix)
  if (own?.org_id) return own.org_id
  const orgs = (await getJson(service, '/api/orgs')) as { orgs?: { id: string; personal: boolean }[] }
  const personal = orgs.orgs?.find((org) => org.personal)
  if (!personal) throw new LogUnavailable('the key names no organisation the service knows')
  return personal.id
}

/** The page of this run a suggestion's target names: its ref, less a `:line:column` place, is a page's name or address. */
function pageMatcher(pages: PageResult[]): (ref: string) => string | null {
  const byName = new Map<string, string>()
  for (const page of pages) {
    byName.set(page.page, page.page)
    byName.set(page.address, page.page)
  }
  return (ref) => byName.get(ref) ?? byName.get(ref.replace(/:\d+:\d+$/u, '')) ?? byName.get(ref.replace(/#.*$/u, '')) ?? null
}

/** Reads the organisation's activity log and keeps the suggestion entries of the pages audited. */
export async function readReviewLog(service: Service, pages: PageResult[]): Promise<ReviewLog> {
  try {
    const organisation = await organisationOf(service)
    const suggestionEntries: ActivityEntry[] = []
    let cursor: string | null = null
    let read = 0
    let truncated = false
    for (;;) {
      const query = `limit=${PAGE_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
      const page = (await getJson(service, `/api/orgs/${encodeURIComponent(organisation)}/activity?${query}`)) as {
        entries?: ActivityEntry[]
        next_cursor?: string | null
      }
      const entries = page.entries ?? []
      read += entries.length
      for (const entry of entries) if (entry.action.startsWith('suggestion.') && entry.subject) suggestionEntries.push(entry)
      cursor = page.next_cursor ?? null
      if (cursor === null || entries.length === 0) break
      if (read >= MAX_ENTRIES) {
        truncated = true
        break
      }
    }
    const match = pageMatcher(pages)
    const targets = new Map<string, { kind: string; ref: string; page: string }>()
    for (const entry of suggestionEntries) {
      if (entry.action !== 'suggestion.created') continue
      const ref = typeof entry.detail.target_ref === 'string' ? entry.detail.target_ref : null
      const page = ref === null ? null : match(ref)
      if (ref !== null && page !== null) targets.set(entry.subject!, { kind: String(entry.detail.target_kind ?? ''), ref, page })
    }
    const rows: ReviewLogRow[] = []
    for (const entry of suggestionEntries) {
      const target = targets.get(entry.subject!)
      if (!target) continue
      rows.push({
        seq: entry.seq,
        at: entry.at,
        actor: entry.actor,
        action: entry.action.slice('suggestion.'.length),
        suggestion: entry.subject!,
        page: target.page,
        target_kind: target.kind,
        target_ref: target.ref,
        final_alt: typeof entry.detail.final_alt === 'string' ? entry.detail.final_alt : null,
        reason: typeof entry.detail.reason === 'string' ? entry.detail.reason : null,
      })
    }
    // Oldest first: the order in which things happened.
    rows.sort((a, b) => a.seq - b.seq)
    return { included: true, organisation, service: service.url, entries: rows, truncated }
  } catch (error) {
    if (error instanceof LogUnavailable) return { included: false, reason: error.message }
    throw error
  }
}

const LOG_COLUMNS = ['seq', 'at', 'actor', 'action', 'suggestion', 'page', 'target_kind', 'target_ref', 'final_alt', 'reason'] as const

export function reviewLogCsv(entries: ReviewLogRow[]): string {
  const rows = [LOG_COLUMNS.join(',')]
  for (const entry of entries) rows.push(LOG_COLUMNS.map((column) => csvField(entry[column])).join(','))
  return `${rows.join('\r\n')}\r\n`
}

export function reviewLogJson(log: ReviewLog, readAt: string): string {
  const body = log.included
    ? {
        format: 'alttext-review-log',
        version: 1,
        included: true,
        reason: null,
        organisation: log.organisation,
        service: log.service,
        read_at: readAt,
        truncated: log.truncated,
        entries: log.entries,
      }
    : {
        format: 'alttext-review-log',
        version: 1,
        included: false,
        reason: log.reason,
        organisation: null,
        service: null,
        read_at: readAt,
        truncated: false,
        entries: [],
      }
  return `${JSON.stringify(body, null, 2)}\n`
}

/** Decisions by kind among the log's rows: what a person decided, not what was only queued. */
export function decisionCounts(entries: ReviewLogRow[]): { accepted: number; edited: number; rejected: number; pages: number } {
  const latest = new Map<string, ReviewLogRow>()
  for (const entry of entries) if (entry.action !== 'created') latest.set(entry.suggestion, entry)
  const counts = { accepted: 0, edited: 0, rejected: 0, pages: 0 }
  const pages = new Set<string>()
  for (const entry of latest.values()) {
    if (entry.action === 'accepted' || entry.action === 'edited' || entry.action === 'rejected') {
      counts[entry.action]++
      pages.add(entry.page)
    }
  }
  counts.pages = pages.size
  return counts
}
