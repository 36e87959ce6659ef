// `alttext audit --render` over a loopback site: an index page linking SITE_RENDER.pages pages, each of
// which inserts its images with a script (half at once, half after a fetch of its own JSON), crawled one
// step with --dry-run. The binary runs as a user runs it, Chromium found on the PATH, two pages (tabs) at
// once. Figures: pages per second of the read phase (its JSON report's read_ms: load, settle, serialise,
// scan), and the command's own peak RSS (Chromium's processes are not counted).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { anomalies, type Fixtures, log, QUICK, ROUNDS } from '../lib/common'
import { memoryOf, spawnChild } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure } from '../lib/stats'

export const SITE_RENDER = { pages: 50, imagesPerPage: 12 }

export type SiteRenderRound = { readMs: number; wallMs: number; pages: number; images: number; peakRssMiB: number; exitCode: number }

/** A 1×1 PNG, the same for every image. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

function page(i: number): string {
  const half = SITE_RENDER.imagesPerPage / 2
  return `<!doctype html><html lang="en"><head><title>Page ${i}</title></head><body><h1>Page ${i}</h1><main></main>
<script>
  const main = document.querySelector('main')
  const add = (src, alt) => { const img = document.createElement('img'); img.src = src; if (alt !== null) img.alt = alt; main.append(img) }
  for (let n = 0; n < ${half}; n++) add('/img/' + ${i} + '-' + n + '.png', n % 3 === 0 ? null : 'A kite, picture ' + n)
  fetch('/data/${i}.json').then((r) => r.json()).then((data) => data.images.forEach((src, n) => add(src, n % 2 ? 'IMG_' + n + '.JPG' : null)))
</script></body></html>`
}

/** The loopback site: /, /page-N, /data/N.json, /img/*.png. */
export function startRenderSite(pages = SITE_RENDER.pages) {
  const half = SITE_RENDER.imagesPerPage / 2
  const index = `<!doctype html><html lang="en"><body><ul>${Array.from({ length: pages }, (_, i) => `<li><a href="/page-${i}">Page ${i}</a></li>`).join('')}</ul></body></html>`
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname
      if (path === '/') return new Response(index, { headers: { 'content-type': 'text/html; charset=utf-8' } })
      const pageMatch = /^\/page-(\d+)$/.exec(path)
      if (pageMatch) return new Response(page(Number(pageMatch[1])), { headers: { 'content-type': 'text/html; charset=utf-8' } })
      const dataMatch = /^\/data\/(\d+)\.json$/.exec(path)
      if (dataMatch) return Response.json({ images: Array.from({ length: half }, (_, n) => `/img/${dataMatch[1]}-late-${n}.png`) })
      if (path.startsWith('/img/')) return new Response(PNG, { headers: { 'content-type': 'image/png' } })
      return new Response('not found', { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/`, stop: () => server.stop(true) }
}

/** Rounds of `alttext audit --render --crawl 1` over the site (`pages` + the index). */
export async function measureSiteRender(fx: Fixtures, pages = SITE_RENDER.pages): Promise<SiteRenderRound[]> {
  const site = startRenderSite(pages)
  log(`site-render: ${pages} pages of ${SITE_RENDER.imagesPerPage} script-inserted images, --render --crawl 1 --dry-run, ${ROUNDS} rounds`)
  const rounds: SiteRenderRound[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const report = join(fx.dir, `site-render-${round}.json`)
      const started = performance.now()
      const proc = spawnChild(
        'alttext audit --render',
        [
          fx.binary,
          'audit',
          '--render',
          site.url,
          '--crawl',
          '1',
          '--max-pages',
          String(pages + 1),
          '--dry-run',
          '--quiet',
          '--json',
          report,
          '-o',
          join(fx.dir, `site-render-${round}.html`),
        ],
        {},
        join(fx.logDir, `site-render-${round}.cli.log`),
      )
      let peak = 0
      const sampler = setInterval(() => {
        try {
          const { hwm } = memoryOf(proc.pid)
          if (Number.isFinite(hwm)) peak = Math.max(peak, hwm)
        } catch {
          // exited between two samples
        }
      }, 100)
      const exitCode = await proc.exited
      clearInterval(sampler)
      const wallMs = performance.now() - started
      const parsed = JSON.parse(readFileSync(report, 'utf8')) as { timings: { read_ms: number }; totals: { pages: number; images: number } }
      if (exitCode !== 0) anomalies.push(`site-render round ${round + 1}: exit ${exitCode}`)
      if (parsed.totals.pages !== pages + 1) anomalies.push(`site-render round ${round + 1}: ${parsed.totals.pages} pages read, not ${pages + 1}`)
      if (parsed.totals.images !== pages * SITE_RENDER.imagesPerPage)
        anomalies.push(`site-render round ${round + 1}: ${parsed.totals.images} images found, not ${pages * SITE_RENDER.imagesPerPage}`)
      rounds.push({
        readMs: parsed.timings.read_ms,
        wallMs,
        pages: parsed.totals.pages,
        images: parsed.totals.images,
        peakRssMiB: peak / 1024 / 1024,
        exitCode,
      })
      log(
        `site-render round ${round + 1}: ${parsed.totals.pages} pages, ${parsed.totals.images} images rendered and read in ${parsed.timings.read_ms} ms; whole run ${wallMs.toFixed(0)} ms`,
      )
    }
  } finally {
    site.stop()
  }
  if (QUICK) anomalies.push('site-render: quick run, one round')
  return rounds
}

export function siteRenderRows(rounds: SiteRenderRound[]): Row[] {
  const scenario = 'site-render'
  return [
    {
      scenario,
      figure: `--render pages per second, 2 Chromium pages at once (${SITE_RENDER.pages} pages + index, script-inserted images)`,
      unit: 'per-s',
      value: figure(rounds.map((r) => (r.pages / r.readMs) * 1000)),
      met: null,
    },
    { scenario, figure: 'whole run (Chromium started and closed, reports written)', unit: 'ms', value: figure(rounds.map((r) => r.wallMs)), met: null },
    { scenario, figure: "the command's peak RSS (Chromium not counted)", unit: 'MiB', value: figure(rounds.map((r) => r.peakRssMiB)), met: null },
  ]
}
