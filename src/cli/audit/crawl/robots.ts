// robots.txt for the user agent `alttext`, read with robots-parser (Google's matching: longest rule wins,
// * and $ wildcards). As Google reads it: at most 500 KiB (the rest is ignored, and said so); a 4xx
// answer means no rules; a 5xx answer or no answer means nothing may be crawled, for now.
import robotsParser from 'robots-parser'
import { fetchThrough, type HttpOptions, readCapped } from './http'
import type { SiteGate } from './gate'

/** The robots.txt group the audit obeys. */
export const ROBOTS_AGENT = 'alttext'
/** Google's limit: the first 500 KiB are read, the rest ignored. */
export const ROBOTS_MAX_BYTES = 500 * 1024
const ROBOTS_TIMEOUT_MS = 30_000
/** Google follows five redirects for robots.txt. */
const ROBOTS_REDIRECTS = 5

export type RobotsRules = {
  /** The robots.txt this came from. */
  url: string
  allowed(url: string): boolean
  /** Crawl-delay for `alttext` (or *), in seconds, as written (not capped here). */
  crawlDelay: number | null
  /** Its Sitemap: lines, absolute. */
  sitemaps: string[]
  /** Something the user should hear (cut at the cap, unreadable), or null. */
  note: string | null
}

/** The rules of a robots.txt text read from `url`. */
export function parseRobots(url: string, text: string, note: string | null = null): RobotsRules {
  const robots = robotsParser(url, text)
  const delay = robots.getCrawlDelay(ROBOTS_AGENT)
  return {
    url,
    // undefined: the URL is on another origin than this robots.txt, which says nothing about it.
    allowed: (page) => robots.isAllowed(page, ROBOTS_AGENT) !== false,
    crawlDelay: typeof delay === 'number' && Number.isFinite(delay) && delay > 0 ? delay : null,
    sitemaps: robots.getSitemaps().flatMap((line: string) => {
      try {
        return [new URL(line, url).href]
      } catch {
        return []
      }
    }),
    note,
  }
}

const everything = (url: string, note: string | null): RobotsRules => ({ url, allowed: () => true, crawlDelay: null, sitemaps: [], note })
const nothing = (url: string, note: string): RobotsRules => ({ url, allowed: () => false, crawlDelay: null, sitemaps: [], note })

/** Fetches and reads `<origin>/robots.txt`. */
export async function readRobots(gate: SiteGate, origin: string, options: Pick<HttpOptions, 'signal' | 'ca'>): Promise<RobotsRules> {
  const url = `${origin}/robots.txt`
  const fetched = await fetchThrough(gate, new URL(url), {
    ...options,
    accept: 'text/plain,*/*;q=0.1',
    maxRedirects: ROBOTS_REDIRECTS,
    timeoutMs: ROBOTS_TIMEOUT_MS,
  })
  if (!fetched.ok) return nothing(url, `${url}: ${fetched.error}; the pages it could disallow are not read`)
  const { response } = fetched
  if (response.status >= 400 && response.status < 500) {
    await response.body?.cancel().catch(() => {})
    return everything(url, null)
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {})
    return nothing(url, `${url}: HTTP ${response.status}; the pages it could disallow are not read`)
  }
  let read: Awaited<ReturnType<typeof readCapped>>
  try {
    read = await readCapped(response, ROBOTS_MAX_BYTES)
  } catch (error) {
    return nothing(url, `${url}: cannot read: ${(error as Error).message}; the pages it could disallow are not read`)
  }
  const note = read.cut
    ? `${url} is larger than ${ROBOTS_MAX_BYTES / 1024} KiB: its first ${ROBOTS_MAX_BYTES / 1024} KiB are obeyed, the rest ignored (as Google does)`
    : null
  let text = new TextDecoder().decode(read.bytes)
  // A cut line is no rule: only whole lines are read.
  if (read.cut) text = text.slice(0, Math.max(0, text.lastIndexOf('\n')))
  // Parsed as the origin's own, wherever a redirect took the fetch: its rules are about this origin's pages.
  return parseRobots(url, text, note)
}
