// The URL pages of an audit: the pages named, then (--sitemap) the pages their sites' sitemaps list and
// (--crawl) the same-origin links followed, breadth first. Pages the audit finds itself obey robots.txt
// for `alttext`; the pages named are the user's own request and are read even when disallowed (said so).
// Every request waits its turn at the per-host scheduler. At most --max-pages pages are known at once
// and sitemaps stop being read when that many are queued, so a 100,000-URL sitemap costs the pages read.
// A page is read once: by its address with the fragment dropped, and by its canonical URL.
import { plural } from '../../../shared/wording'
import type { LoadedPage, PageFetcher, UrlSource } from '../pages'
import { fetchThrough } from './http'
import { canonicalOf } from './page'
import { MAX_CRAWL_DELAY_MS } from './politeness'
import { readRobots, type RobotsRules } from './robots'
import { sitemapEntries } from './sitemap'
import type { SiteAccess } from './site'

/** Pages fetched at once in all (each host also holds to its own limit). */
const PAGE_FETCHES_AT_ONCE = 4
/** Sitemap files read per run at most, indexes included: 200 × 50,000 URLs is more than any audit reads. */
const MAX_SITEMAP_FILES = 200
/** Skipped addresses remembered (so each is listed and counted once); past it they are counted again. */
const MAX_REMEMBERED_SKIPS = 100_000
/** How deep sitemap indexes may nest (sitemaps.org allows one level; some sites nest more). */
const MAX_SITEMAP_DEPTH = 5
const SITEMAP_TIMEOUT_MS = 120_000
/** Skipped pages listed by address; past it they are only counted. */
const MAX_LISTED_SKIPS = 100

/** Links to these are no pages: not fetched when crawling. */
const NOT_A_PAGE =
  /\.(?:jpe?g|png|gif|webp|avif|svg|ico|bmp|tiff?|pdf|zip|gz|tgz|rar|7z|mp[34]|m4a|webm|ogg|wav|mov|avi|css|js|mjs|json|xml|txt|csv|woff2?|ttf|otf|eot|docx?|xlsx?|pptx?)$/iu

export type SkippedPage = { url: string; reason: string }

export type CrawlOptions = {
  crawl: number
  maxPages: number
  /** Pages already known (files read before): they count towards --max-pages. */
  known: number
  sitemap: boolean
  signal?: AbortSignal
  site: SiteAccess
  fetchPage: PageFetcher
  /** Sees each page (and each sitemap that failed, as a page with its error); returns the page's links. */
  onPage: (page: LoadedPage) => string[]
  /** A line for the user (robots.txt notes, a start URL read against robots.txt). */
  onNote?: (line: string) => void
  /** --exclude: a sitemap page it matches is left out (counted), never fetched. */
  exclude?: (url: string) => boolean
}

export type CrawlOutcome = {
  /** Links not followed because --max-pages was reached. */
  unfollowed: number
  /** Pages left out: robots.txt disallows them, or a sitemap lists them on another origin (the first MAX_LISTED_SKIPS). */
  skipped: SkippedPage[]
  skippedCount: number
  /** Pages fetched whose address after redirects, or canonical URL, was already read: not reported again. */
  duplicates: number
  /** The sitemaps were left unread past --max-pages. */
  sitemapsStopped: boolean
  /** Sitemap pages left out by --exclude. */
  excluded: number
}

/** The address a page is known by: absolute, without its fragment (WHATWG parsing has already lower-cased the host and dropped a default port). */
export function pageKey(href: string, base?: URL | string): string | null {
  try {
    const url = new URL(href.trim(), base)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
    url.hash = ''
    return url.href
  } catch {
    return null
  }
}

type Queued = UrlSource & { origin: string; named: boolean }

export async function crawlUrls(starts: UrlSource[], options: CrawlOptions): Promise<CrawlOutcome> {
  const { site, signal } = options
  const note = options.onNote ?? (() => {})
  const outcome: CrawlOutcome = { unfollowed: 0, skipped: [], skippedCount: 0, duplicates: 0, sitemapsStopped: false, excluded: 0 }
  const skippedKeys = new Set<string>()
  const skip = (url: string, reason: string) => {
    if (skippedKeys.has(url)) return
    if (skippedKeys.size < MAX_REMEMBERED_SKIPS) skippedKeys.add(url)
    outcome.skippedCount++
    if (outcome.skipped.length < MAX_LISTED_SKIPS) outcome.skipped.push({ url, reason })
  }
  /** Every address queued or read (so nothing is queued twice), and every address a read page stands for. */
  const seen = new Set<string>()
  const read = new Set<string>()
  const queue: Queued[] = []
  let head = 0
  for (const start of starts) {
    const key = pageKey(start.url) ?? start.url
    if (seen.has(key)) continue
    seen.add(key)
    queue.push({ ...start, url: key, origin: new URL(key).origin, named: true })
  }
  let known = options.known + queue.length
  const origins = [...new Set(queue.map((entry) => entry.origin))]

  // robots.txt matters only for pages the audit finds itself.
  const robots = new Map<string, RobotsRules>()
  if (options.sitemap || options.crawl > 0) {
    await Promise.all(
      origins.map(async (origin) => {
        const host = new URL(origin).host
        const rules = await site.scheduler.run(host, () => readRobots(site.gate, origin, { signal, ca: site.ca }), signal)
        robots.set(origin, rules)
        if (rules.note) note(`note: ${rules.note}`)
        if (rules.crawlDelay !== null) {
          const ms = site.scheduler.setCrawlDelay(host, rules.crawlDelay)
          const capped = ms < rules.crawlDelay * 1000 ? ` (asked for ${rules.crawlDelay} s; held to ${MAX_CRAWL_DELAY_MS / 1000} s)` : ''
          note(`note: ${rules.url} sets a Crawl-delay: ${host} gets one request at a time, ${ms / 1000} s apart${capped}`)
        }
      }),
    )
    for (const entry of queue) {
      if (robots.get(entry.origin)?.allowed(entry.url) === false)
        note(`note: robots.txt disallows ${entry.url} for alttext; read all the same, as it was named`)
    }
  }
  const allowed = (url: string, origin: string) => robots.get(origin)?.allowed(url) !== false

  /** Queues a page the audit found; false once --max-pages pages are known. */
  const offer = (url: string, origin: string, depth: number, from: string): 'queued' | 'seen' | 'skipped' | 'full' => {
    if (seen.has(url)) return 'seen'
    if (!allowed(url, origin)) {
      skip(url, `disallowed by robots.txt (found in ${from})`)
      return 'skipped'
    }
    if (known >= options.maxPages) return 'full'
    seen.add(url)
    known++
    queue.push({ kind: 'url', url, depth, origin, named: false })
    wake()
    return 'queued'
  }

  // Workers wait for work while the sitemaps are still being read or another worker may still find links.
  let waiting: (() => void)[] = []
  const wake = () => {
    const woken = waiting
    waiting = []
    for (const resolve of woken) resolve()
  }
  let producing = options.sitemap
  let busy = 0

  const readSitemaps = async () => {
    const visited = new Set<string>()
    const looped = new Set<string>()
    let files = 0
    try {
      for (const origin of origins) {
        const listed = robots.get(origin)?.sitemaps ?? []
        const stack = (listed.length > 0 ? listed : [`${origin}/sitemap.xml`])
          .map((url) => ({ url, depth: 0, from: listed.length > 0 ? `${origin}/robots.txt` : origin, ancestors: [] as string[] }))
          .reverse()
        while (stack.length > 0 && !signal?.aborted) {
          if (known >= options.maxPages) {
            outcome.sitemapsStopped = true
            return
          }
          const { url, depth, from, ancestors } = stack.pop()!
          const key = pageKey(url) ?? url
          const failed = (error: string) =>
            options.onPage({ source: { kind: 'url', url: key, depth: 0 }, name: key, base: new URL(key), bytes: null, error: `sitemap: ${error}` })
          // A sitemap its own index chain leads back to is a loop (said once); one merely listed twice is read once.
          if (ancestors.includes(key)) {
            if (!looped.has(key)) failed(`a sitemap loop: listed again by ${from}, which it leads to; not read twice`)
            looped.add(key)
            continue
          }
          if (visited.has(key)) continue
          visited.add(key)
          if (depth > MAX_SITEMAP_DEPTH) {
            failed(`sitemap indexes nested more than ${MAX_SITEMAP_DEPTH} deep (listed by ${from}); not read`)
            continue
          }
          if (++files > MAX_SITEMAP_FILES) {
            failed(`more than ${MAX_SITEMAP_FILES} sitemap files; the rest are not read`)
            return
          }
          const target = new URL(key)
          const error = await site.scheduler.run(
            target.host,
            async () => {
              const fetched = await fetchThrough(site.gate, target, {
                accept: 'application/xml,text/xml,*/*;q=0.1',
                maxRedirects: 5,
                timeoutMs: SITEMAP_TIMEOUT_MS,
                signal,
                ca: site.ca,
              })
              if (!fetched.ok) return fetched.error
              if (fetched.response.status !== 200) {
                await fetched.response.body?.cancel().catch(() => {})
                return `HTTP ${fetched.response.status}`
              }
              const entries = sitemapEntries(fetched.response.body, fetched.url)
              // An index's sitemaps are read in the order listed, after it (the stack takes them reversed).
              const children: string[] = []
              const listChildren = () => {
                for (const url of children.splice(0, MAX_SITEMAP_FILES).reverse())
                  stack.push({ url, depth: depth + 1, from: key, ancestors: [...ancestors, key] })
              }
              for (;;) {
                const next = await entries.next()
                if (next.done) {
                  listChildren()
                  return next.value
                }
                for (const item of next.value) {
                  if (item.kind === 'sitemap') {
                    if (children.length < MAX_SITEMAP_FILES) children.push(item.url)
                    continue
                  }
                  const page = pageKey(item.url)
                  if (page === null) continue
                  const pageOrigin = new URL(page).origin
                  if (!origins.includes(pageOrigin)) {
                    skip(page, `on another origin than the site audited (listed in ${key})`)
                    continue
                  }
                  if (options.exclude?.(page)) {
                    outcome.excluded++
                    continue
                  }
                  if (offer(page, pageOrigin, 0, key) === 'full') {
                    outcome.sitemapsStopped = true
                    await entries.return(null)
                    return null
                  }
                }
                if (signal?.aborted) {
                  await entries.return(null)
                  return null
                }
              }
            },
            signal,
          )
          if (outcome.sitemapsStopped) return
          if (error !== null) failed(error)
        }
      }
    } finally {
      producing = false
      wake()
    }
  }

  const handle = async (entry: Queued) => {
    const source: UrlSource = { kind: 'url', url: entry.url, depth: entry.depth }
    const page = await site.scheduler.run(
      new URL(entry.url).host,
      // A fetcher that throws (a browser that died) fails its page, not the run.
      () =>
        options.fetchPage(source, signal).catch(
          (error: unknown): LoadedPage => ({
            source,
            name: entry.url,
            base: new URL(entry.url),
            bytes: null,
            error: `cannot load: ${error instanceof Error ? error.message : String(error)}`,
          }),
        ),
      signal,
    )
    if (page.bytes !== null) {
      // A page whose address after redirects, or whose canonical URL, was already read is that page again.
      const final = pageKey(page.base.href)
      const canonical = canonicalOf(page.bytes, page.base)
      const canonicalKey = canonical !== null && new URL(canonical).origin === page.base.origin ? pageKey(canonical) : null
      const standsFor = [entry.url, final, canonicalKey].filter((key): key is string => key !== null)
      if (!entry.named && standsFor.some((key) => read.has(key))) {
        outcome.duplicates++
        return
      }
      for (const key of standsFor) {
        read.add(key)
        seen.add(key)
      }
    } else read.add(entry.url)
    const links = options.onPage(page)
    if (page.error !== null || entry.depth >= options.crawl) return
    for (const href of links) {
      const target = sameOriginPage(href, page.base, entry.origin)
      if (target === null) continue
      if (offer(target, entry.origin, entry.depth + 1, entry.url) === 'full') {
        seen.add(target)
        outcome.unfollowed++
      }
    }
  }

  const worker = async () => {
    for (;;) {
      if (signal?.aborted) return
      if (head < queue.length) {
        const entry = queue[head]!
        // Drops what was taken, now and then, so a long run does not keep every entry.
        queue[head++] = undefined as never
        if (head > 1024 && head * 2 > queue.length) {
          queue.splice(0, head)
          head = 0
        }
        busy++
        try {
          await handle(entry)
        } finally {
          busy--
          wake()
        }
        continue
      }
      if (!producing && busy === 0) return
      await new Promise<void>((resolve) => waiting.push(resolve))
    }
  }

  const abort = () => wake()
  signal?.addEventListener('abort', abort)
  try {
    await Promise.all([options.sitemap ? readSitemaps() : Promise.resolve(), ...Array.from({ length: PAGE_FETCHES_AT_ONCE }, worker)])
  } finally {
    signal?.removeEventListener('abort', abort)
  }
  if (outcome.sitemapsStopped) note(`note: the sitemaps were read until ${plural(options.maxPages, 'page')} were known (--max-pages); the rest were not read`)
  return outcome
}

/** A link worth crawling: http(s), same origin, not a file of another kind; without its fragment. */
function sameOriginPage(href: string, base: URL, origin: string): string | null {
  const key = pageKey(href, base)
  if (key === null) return null
  const url = new URL(key)
  if (url.origin !== origin || NOT_A_PAGE.test(url.pathname)) return null
  return key
}
