// `alttext audit URL --sitemap` over a 1,000-page loopback site: robots.txt with a Sitemap: line, a
// sitemap index of two sitemaps (one gzipped), pages of ~12 KB with a dozen images each. The command
// runs as a user runs it (a child process: the compiled binary, or the source through Bun), --dry-run so
// nothing is sent. Figures: pages per second from start to exit, and the audit process's peak RSS
// (VmHWM, read from /proc while it runs). For scenario 23 ("site audit", site-audit.ts) to wire in.
// The per-host politeness (crawl/politeness.ts: 2 requests at once, 10 ms between starts) bounds one
// host at about 100 pages a second: the figure is what a user gets from one site, not a parser's speed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'fflate'
import { memoryOf, spawnChild } from '../lib/procs'

export const SITE_CRAWL = { pages: 1000 }

export type SiteCrawlResult = { pagesPerSecond: number; peakRssMiB: number; pages: number; wallMs: number; exitCode: number }

const WORDS = 'harbour kite club beach wind summer members boats pier north south morning evening festival launch line string colour red blue'.split(' ')
const sentence = (page: number, n: number, words: number) =>
  `${Array.from({ length: words }, (_, i) => WORDS[(page * 7 + n * 13 + i * 5) % WORDS.length]).join(' ')}.`
const ALTS = ['alt="A kite over the harbour at dawn."', '', 'alt=""', 'alt="IMG_2041.JPG"', 'alt="image of a kite"']

/** Page `i` of the site: a heading, paragraphs, 12 images with every kind of alt, links to five other pages. */
export function sitePage(i: number, pages = SITE_CRAWL.pages): string {
  const body: string[] = []
  for (let n = 0; n < 12; n++) {
    body.push(`<h2>${sentence(i, n, 5)}</h2><p>${sentence(i, n, 120)}</p>`)
    body.push(`<img src="/img/photo-${(i * 12 + n) % 400}.jpg" ${ALTS[(i + n) % ALTS.length]} width="640" height="480">`)
  }
  const links = Array.from({ length: 5 }, (_, n) => `<a href="/p/${(i * 31 + n * 97) % pages}.html">${WORDS[n]}</a>`).join(' ')
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${sentence(i, 0, 6)}</title></head><body><nav>${links}</nav><main>${body.join('\n')}</main></body></html>\n`
}

const urlset = (origin: string, from: number, to: number) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${Array.from(
    { length: to - from },
    (_, k) => `<url><loc>${origin}/p/${from + k}.html</loc><lastmod>2026-12-01</lastmod></url>`,
  ).join('\n')}\n</urlset>\n`

/** A loopback HTTP server of the site; pages generated per request (never written to disk). */
export function startSite(pages = SITE_CRAWL.pages) {
  let served = 0
  let origin = ''
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request): Response {
      const path = new URL(request.url).pathname
      const half = Math.ceil(pages / 2)
      const xml = { headers: { 'content-type': 'application/xml' } }
      if (path === '/robots.txt') return new Response(`User-agent: *\nDisallow: /private/\nSitemap: ${origin}/sitemap-index.xml\n`)
      if (path === '/sitemap-index.xml')
        return new Response(
          `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/sitemap-1.xml</loc></sitemap><sitemap><loc>${origin}/sitemap-2.xml.gz</loc></sitemap></sitemapindex>`,
          xml,
        )
      if (path === '/sitemap-1.xml') return new Response(urlset(origin, 0, half), xml)
      if (path === '/sitemap-2.xml.gz')
        return new Response(gzipSync(new TextEncoder().encode(urlset(origin, half, pages))), { headers: { 'content-type': 'application/gzip' } })
      const match = /^\/p\/(\d+)\.html$/u.exec(path)
      if (match && Number(match[1]) < pages) {
        served++
        return new Response(sitePage(Number(match[1]), pages), { headers: { 'content-type': 'text/html; charset=utf-8' } })
      }
      return new Response('not found', { status: 404 })
    },
  })
  origin = `http://127.0.0.1:${server.port}`
  return { origin, served: () => served, stop: () => server.stop(true) }
}

/**
 * One run of `command audit ORIGIN/p/0.html --sitemap --max-pages N --dry-run` against the site; `command`
 * is the binary (`[binary]`) or `[bun, src/main.ts]`. Peak RSS is the process's VmHWM, polled every 20 ms.
 */
export async function measureSiteCrawl(options: {
  command: string[]
  dir?: string
  logDir?: string
  /** Pages the site has (its sitemaps list them all). */
  pages?: number
  /** --max-pages (default: all of them). */
  maxPages?: number
}): Promise<SiteCrawlResult> {
  const pages = options.pages ?? SITE_CRAWL.pages
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'alttext-site-crawl-'))
  const site = startSite(pages)
  try {
    const report = join(dir, 'site-crawl.json')
    const started = performance.now()
    const proc = spawnChild(
      'alttext audit --sitemap',
      [
        ...options.command,
        'audit',
        `${site.origin}/p/0.html`,
        '--sitemap',
        '--max-pages',
        String(options.maxPages ?? pages),
        '--dry-run',
        '--quiet',
        '--json',
        report,
        '-o',
        join(dir, 'site-crawl.html'),
      ],
      {},
      join(options.logDir ?? dir, 'site-crawl.cli.log'),
    )
    let peak = 0
    const poll = setInterval(() => {
      try {
        const { hwm } = memoryOf(proc.pid)
        if (Number.isFinite(hwm)) peak = Math.max(peak, hwm)
      } catch {
        // The process has just exited.
      }
    }, 20)
    const exitCode = await proc.exited
    clearInterval(poll)
    const wallMs = performance.now() - started
    const read = JSON.parse(readFileSync(report, 'utf8')) as { totals: { pages: number } }
    return { pagesPerSecond: (read.totals.pages / wallMs) * 1000, peakRssMiB: peak / 1024 / 1024, pages: read.totals.pages, wallMs, exitCode }
  } finally {
    site.stop()
    if (options.dir === undefined) rmSync(dir, { recursive: true, force: true })
  }
}

// bun scripts/bench/scenarios/site-crawl.ts [BINARY]: the 1,000-page site, then 100 pages of a 100,000-URL site, printed.
if (import.meta.main) {
  const binary = process.argv[2]
  const command = binary ? [binary] : [process.execPath, join(import.meta.dir, '..', '..', '..', 'src', 'main.ts')]
  for (const run of [{}, { pages: 100_000, maxPages: 100 }]) {
    const result = await measureSiteCrawl({ command, ...run })
    console.log(
      `site of ${run.pages ?? SITE_CRAWL.pages} pages: ${result.pages} read in ${result.wallMs.toFixed(0)} ms, ${result.pagesPerSecond.toFixed(1)} pages/s, peak RSS ${result.peakRssMiB.toFixed(0)} MiB (exit ${result.exitCode})`,
    )
  }
}
