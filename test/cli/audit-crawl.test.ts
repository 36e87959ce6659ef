// `alttext audit URL --sitemap` against the tests' own loopback HTTPS site: robots.txt (a group for
// alttext with Disallow and Crawl-delay, Sitemap: lines), a sitemap index of two sitemaps (one gzipped),
// canonical URLs read once, private pages behind a cookie and a header, --crawl on top, --max-pages,
// and a 100,000-URL sitemap of which only --max-pages pages are read.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { httpPageFetcher } from '../../src/cli/audit/crawl/page'
import { createSiteAccess } from '../../src/cli/audit/crawl/site'
import type { Timer } from '../../src/cli/audit/crawl/politeness'
import { loadPages } from '../../src/cli/audit/pages'
import { audit, readJson } from './audit-support'
import { type CrawlSite, type generatedBody, gzip, page, sitemapIndex, startCrawlSite, urlset } from './audit-crawl-support'

const COOKIE_SECRET = 'c00kie-Secret-Value'
const HEADER_SECRET = 'Bearer header-Secret-Token'

let site: CrawlSite
let dir: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-crawl-'))
  site = await startCrawlSite()
  const o = site.origin
  site.set(
    '/robots.txt',
    ['User-agent: *', 'Disallow: /', '', 'User-agent: alttext', 'Disallow: /nope.html', 'Crawl-delay: 0.01', '', `Sitemap: ${o}/sitemap-index.xml`, ''].join(
      '\n',
    ),
  )
  site.set('/sitemap-index.xml', sitemapIndex([`${o}/sitemap-pages.xml`, `${o}/sitemap-more.xml.gz`]))
  site.set('/sitemap-pages.xml', urlset([`${o}/`, `${o}/a.html`, `${o}/nope.html`, `${o}/dup.html`, `${o}/members/cookie.html`, `${o}/members/header.html`]))
  site.set('/sitemap-more.xml.gz', gzip(urlset([`${o}/b.html`, `${o}/a.html#section`, 'https://elsewhere.example/x.html'])))
  site.set('/', page('Home', '<a href="/c.html">C</a><img src="/img/home.png">'))
  site.set('/a.html', page('A', '<img src="/img/a.png" alt="">'))
  site.set('/b.html', page('B', '<img src="/img/b.png" alt="A kite over the harbour.">'))
  site.set('/c.html', page('C', '<img src="/img/c.png">'))
  site.set('/nope.html', page('Nope', '<img src="/img/nope.png">'))
  site.set('/dup.html', page('A again', '<img src="/img/a.png" alt="">', `<link rel="canonical" href="${o}/a.html">`))
  site.set('/members/cookie.html', (request) =>
    (request.headers.get('cookie') ?? '').includes(`sid=${COOKIE_SECRET}`)
      ? new Response(page('Members', '<img src="/img/members.png">'), { headers: { 'content-type': 'text/html' } })
      : new Response('sign in first', { status: 401 }),
  )
  site.set('/members/header.html', (request) =>
    request.headers.get('authorization') === HEADER_SECRET
      ? new Response(page('Staff', '<img src="/img/staff.png">'), { headers: { 'content-type': 'text/html' } })
      : new Response('forbidden', { status: 403 }),
  )
  writeFileSync(join(dir, 'cookies.txt'), `# Netscape HTTP Cookie File\n#HttpOnly_127.0.0.1\tFALSE\t/members\tTRUE\t0\tsid\t${COOKIE_SECRET}\n`)
})
afterAll(async () => {
  await site.stop()
  rmSync(dir, { recursive: true, force: true })
})

const pathsOf = (report: any) => report.pages.map((p: any) => new URL(p.page).pathname)

describe('--sitemap', () => {
  test('robots.txt, a sitemap index of a plain and a gzipped sitemap, Disallow for alttext, canonical URLs, private pages, --crawl', async () => {
    const before = site.requests.length
    const res = await audit(
      [
        `${site.origin}/`,
        '--sitemap',
        '--crawl',
        '1',
        '--dry-run',
        '--cookie-file',
        'cookies.txt',
        '--header',
        `Authorization: ${HEADER_SECRET}`,
        '--json',
        'r.json',
        '-o',
        'r.html',
        '--evidence',
        'evidence',
      ],
      site.env,
      dir,
    )
    expect(res.stderr).not.toContain('could not be read')
    expect(res.code).toBe(0)
    const report = readJson(join(dir, 'r.json'))
    // Sitemap pages are one step from nothing, as the start page: the report lists them first; /c.html is a link of /.
    expect(pathsOf(report)).toEqual(['/', '/a.html', '/b.html', '/members/cookie.html', '/members/header.html', '/c.html'])
    expect(report.pages.every((p: any) => p.error === null)).toBe(true)
    expect(report.totals).toMatchObject({ pages: 6, images: 6, missing: 4, decorative: 1, ok: 1 })
    // Disallowed for alttext: never fetched; the page whose canonical is /a.html fetched once, not reported.
    expect(site.hits('/nope.html')).toBe(0)
    expect(site.hits('/dup.html')).toBe(1)
    expect(site.hits('/a.html')).toBe(1)
    for (const path of ['/robots.txt', '/sitemap-index.xml', '/sitemap-pages.xml', '/sitemap-more.xml.gz']) expect(site.hits(path)).toBeGreaterThanOrEqual(1)
    expect(res.stderr).toContain('2 pages skipped (robots.txt or another origin)')
    expect(res.stderr).toContain(`skipped: ${site.origin}/nope.html: disallowed by robots.txt (found in ${site.origin}/sitemap-pages.xml)`)
    expect(res.stderr).toContain('skipped: https://elsewhere.example/x.html: on another origin than the site audited')
    expect(res.stderr).toContain('1 page already read under another address (canonical or redirect)')
    expect(res.stderr).toContain('sets a Crawl-delay: 127.0.0.1:')
    // The report and the evidence say which pages the crawl found and left unread, and why.
    expect(report.crawl).toEqual({
      skipped: [
        { url: `${site.origin}/nope.html`, reason: `disallowed by robots.txt (found in ${site.origin}/sitemap-pages.xml)` },
        { url: 'https://elsewhere.example/x.html', reason: expect.stringContaining('on another origin than the site audited') },
      ],
      skipped_count: 2,
      duplicates: 1,
      unfollowed: 0,
    })
    expect(readJson(join(dir, 'evidence', 'summary.json')).run.pages_skipped).toBe(2)
    expect(await Bun.file(join(dir, 'evidence', 'conformance.md')).text()).toContain('2 pages the crawl found were not read (robots.txt disallows them')
    // The private fields went to the audited origin only, and no secret is printed.
    const ours = site.requests.slice(before)
    expect(ours.find((r) => r.path === '/members/header.html')?.headers.get('authorization')).toBe(HEADER_SECRET)
    // The cookie is for the pages under /members only (its path).
    expect(ours.filter((r) => (r.headers.get('cookie') ?? '') !== '').map((r) => r.path)).toEqual(['/members/cookie.html', '/members/header.html'])
    for (const text of [res.stdout, res.stderr, await Bun.file(join(dir, 'r.json')).text(), await Bun.file(join(dir, 'r.html')).text()]) {
      expect(text).not.toContain(COOKIE_SECRET)
      expect(text).not.toContain('header-Secret-Token')
    }
  }, 30_000)

  test('without the cookie and header the private pages are per-page errors; the others are read', async () => {
    const res = await audit([`${site.origin}/`, '--sitemap', '--dry-run', '--json', 'p.json', '-o', 'p.html'], site.env, dir)
    expect(res.code).toBe(1)
    const report = readJson(join(dir, 'p.json'))
    const errors = Object.fromEntries(report.pages.map((p: any) => [new URL(p.page).pathname, p.error]))
    expect(errors).toMatchObject({ '/': null, '/a.html': null, '/b.html': null, '/members/cookie.html': 'HTTP 401', '/members/header.html': 'HTTP 403' })
  }, 30_000)

  test('--max-pages holds the sitemap pages too: the named page and the first listed ones, the rest of the sitemaps unread', async () => {
    const res = await audit([`${site.origin}/`, '--sitemap', '--max-pages', '2', '--dry-run', '--json', 'm.json', '-o', 'm.html'], site.env, dir)
    const report = readJson(join(dir, 'm.json'))
    expect(pathsOf(report)).toEqual(['/', '/a.html'])
    expect(res.stderr).toContain('the sitemaps were read until 2 pages were known (--max-pages)')
  }, 30_000)

  test('no Sitemap: line, so /sitemap.xml; robots.txt answering 404 holds nothing back', async () => {
    const other = await startCrawlSite({
      '/sitemap.xml': urlset(['/one.html', '/two.html']),
      '/one.html': page('One', '<img src="a.png">'),
      '/two.html': page('Two', '<img src="b.png" alt="">'),
    })
    try {
      const res = await audit([`${other.origin}/one.html`, '--sitemap', '--dry-run', '--json', 'n.json', '-o', 'n.html'], other.env, dir)
      expect(res.code).toBe(0)
      expect(pathsOf(readJson(join(dir, 'n.json')))).toEqual(['/one.html', '/two.html'])
      expect(other.hits('/robots.txt')).toBe(1)
      expect(other.hits('/one.html')).toBe(1)
    } finally {
      await other.stop()
    }
  }, 30_000)
})

describe('a sitemap of 100,000 URLs', () => {
  test('is read only until --max-pages pages are queued: that many pages fetched, the rest of the sitemap never sent', async () => {
    const total = 100_000
    // As real sitemaps write them (about 200 bytes an entry: 20 MB in all).
    const entry = (i: number) =>
      `<url><loc>/p/${i}.html</loc><lastmod>2026-12-01T10:00:00+00:00</lastmod><changefreq>weekly</changefreq><priority>0.5</priority><!-- section ${'x'.repeat(40)} --></url>\n`
    let generated: ReturnType<typeof generatedBody> | undefined
    const big = await startCrawlSite({
      '/sitemap.xml': () => {
        // Every entry its own number: generated as read, the whole file never built.
        let i = 0
        const encoder = new TextEncoder()
        let sent = 0
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (i === 0) controller.enqueue(encoder.encode('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'))
            if (i >= total) {
              controller.enqueue(encoder.encode('</urlset>\n'))
              return controller.close()
            }
            let text = ''
            for (const end = Math.min(total, i + 500); i < end; i++) text += entry(i)
            const bytes = encoder.encode(text)
            sent += bytes.byteLength
            controller.enqueue(bytes)
          },
        })
        generated = { body, sent: () => sent }
        return new Response(body, { headers: { 'content-type': 'application/xml' } })
      },
    })
    for (let i = 0; i < 60; i++) big.set(`/p/${i}.html`, page(`P${i}`, `<img src="/i/${i}.png">`))
    try {
      const res = await audit([`${big.origin}/p/0.html`, '--sitemap', '--max-pages', '50', '--dry-run', '--json', 'big.json', '-o', 'big.html'], big.env, dir)
      expect(res.code).toBe(0)
      const report = readJson(join(dir, 'big.json'))
      expect(report.totals.pages).toBe(50)
      expect(big.hits('/sitemap.xml')).toBe(1)
      expect(big.hits('/p/50.html')).toBe(0)
      // The reader stopped and cancelled: what was generated is what the connection buffers hold, a fraction of the file.
      const fullSize = Array.from({ length: total }, (_, i) => entry(i).length).reduce((a, b) => a + b, 0)
      expect(generated!.sent()).toBeLessThan(fullSize / 2)
    } finally {
      await big.stop()
    }
  }, 60_000)
})

describe('Crawl-delay, on a clock the test moves', () => {
  test("robots.txt's Crawl-delay spaces the site's requests (held to 30 s), one at a time: the waits are asked of the timer, none taken", async () => {
    const slow = await startCrawlSite({
      '/robots.txt': 'User-agent: alttext\nCrawl-delay: 120\n',
      '/': page('Home', '<a href="/1.html">1</a><a href="/2.html">2</a><a href="/3.html">3</a>'),
      '/1.html': page('1', ''),
      '/2.html': page('2', ''),
      '/3.html': page('3', ''),
    })
    let now = 0
    const sleeps: number[] = []
    const starts: [string, number][] = []
    const timer: Timer = {
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms)
        now += ms
      },
    }
    const notes: string[] = []
    try {
      const ca = [...(await import('node:tls')).rootCertificates, slow.server.caPem]
      const site = createSiteAccess({ auditedOrigins: [slow.origin], timer, ca })
      await loadPages([{ kind: 'url', url: `${slow.origin}/`, depth: 0 }], {
        crawl: 1,
        maxPages: 10,
        cwd: dir,
        site,
        // The real HTTP fetcher, noting the (test's) time each page request starts.
        fetchPage: (source, signal) => {
          starts.push([new URL(source.url).pathname, now])
          return httpPageFetcher(site)(source, signal)
        },
        onNote: (line) => notes.push(line),
        onPage: (loaded) => {
          return loaded.bytes ? [...new TextDecoder().decode(loaded.bytes).matchAll(/href="([^"]+)"/gu)].map((m) => m[1]!) : []
        },
      })
      // robots.txt first (10 ms default spacing), then the page and its three links each 30 s after the last.
      expect(starts).toEqual([
        ['/', 10],
        ['/1.html', 30_010],
        ['/2.html', 60_010],
        ['/3.html', 90_010],
      ])
      expect(sleeps).toEqual([10, 30_000, 30_000, 30_000])
      expect(notes.join('\n')).toContain('gets one request at a time, 30 s apart (asked for 120 s; held to 30 s)')
    } finally {
      await slow.stop()
    }
  }, 30_000)
})
