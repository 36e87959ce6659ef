// Scenario 14: `alttext audit` reading a site of 1,000 HTML pages of typical size (about 30 KB each, the
// median HTML document of the web: a head with a style and a script block, navigation, a dozen images
// with every kind of alt, paragraphs, a footer), with --dry-run: read, parse and classify, no generation.
// The command runs as a user runs it (the compiled binary). Figures: the read-and-parse phase as the
// command measures it (its JSON report's timings), and the whole run from start to exit.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { anomalies, type Fixtures, log, QUICK, ROUNDS } from '../lib/common'
import { spawnChild } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure } from '../lib/stats'

export const AUDIT = { pages: 1000, pageKiB: 30, limitMs: 2000 }

export type AuditRound = { readMs: number; parseMs: number; wallMs: number; pages: number; images: number; bytes: number; exitCode: number }

const WORDS =
  'harbour kite club beach wind summer members boats pier north south morning evening festival launch line string colour red blue green tide sand gull lighthouse crowd children family picnic weather forecast knots'.split(
    ' ',
  )

/** Deterministic words for page `page`, paragraph `n`. */
function sentence(page: number, n: number, words: number): string {
  const out: string[] = []
  for (let i = 0; i < words; i++) out.push(WORDS[(page * 7 + n * 13 + i * 5 + ((i * i) % 11)) % WORDS.length]!)
  return `${out.join(' ')}.`
}

const ALTS = [
  (i: number) => `alt="${sentence(i, 1, 9)}"`, // good
  () => '', // missing
  () => 'alt=""', // empty
  (i: number) => `alt="IMG_${1000 + i}.JPG"`, // file name
  () => 'alt="image of a kite"', // redundant opening
  () => 'alt="" role="presentation"', // decorative
]

function page(i: number): string {
  const style = `<style>\n${Array.from({ length: 40 }, (_, n) => `.c${n} { margin: ${n}px; padding: ${n % 7}px; color: #${(n * 4513).toString(16).padStart(6, '0').slice(0, 6)}; }`).join('\n')}\n</style>`
  const script = `<script>\n${Array.from({ length: 40 }, (_, n) => `window.track${n} = function (e) { if (e && e.target) { return "<img src=x" + ${n} + ">"; } return null; };`).join('\n')}\n</script>`
  const nav = `<nav><ul>${Array.from({ length: 20 }, (_, n) => `<li><a href="/section-${n}/page-${(i + n) % AUDIT.pages}.html" class="c${n}">${WORDS[n % WORDS.length]}</a></li>`).join('')}</ul></nav>`
  const body: string[] = []
  for (let n = 0; n < 12; n++) {
    body.push(`<h2 class="c${n}">${sentence(i, n, 5)}</h2>`)
    body.push(`<p class="c${n}">${sentence(i, n, 140)} <a href="/more/${n}.html">more</a> ${sentence(i, n + 1, 95)}</p>`)
    const image = `<img src="/img/photo-${(i * 12 + n) % 500}.jpg" ${ALTS[(i + n) % ALTS.length]!(i + n)} width="640" height="480" loading="lazy">`
    body.push(
      n % 4 === 0 ? `<figure>${image}<figcaption>${sentence(i, n, 8)}</figcaption></figure>` : n % 4 === 1 ? `<a href="/p/${n}.html">${image}</a>` : image,
    )
  }
  const footer = `<footer><p>${sentence(i, 99, 30)}</p>${Array.from({ length: 10 }, (_, n) => `<a href="/f/${n}.html">${WORDS[(n + 3) % WORDS.length]}</a>`).join(' ')}</footer>`
  return `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${sentence(i, 0, 6)}</title>\n<meta name="viewport" content="width=device-width, initial-scale=1">\n${style}\n${script}\n</head>\n<body>\n<header>${nav}</header>\n<main>\n<h1>${sentence(i, 0, 7)}</h1>\n${body.join('\n')}\n</main>\n${footer}\n</body>\n</html>\n`
}

/** The site: 1,000 pages in 10 folders; returns its size in bytes. */
function writeSite(dir: string): number {
  let bytes = 0
  for (let i = 0; i < AUDIT.pages; i++) {
    const folder = join(dir, `section-${i % 10}`)
    mkdirSync(folder, { recursive: true })
    const html = page(i)
    bytes += Buffer.byteLength(html)
    writeFileSync(join(folder, `page-${i}.html`), html)
  }
  return bytes
}

export async function measureAudit(fx: Fixtures): Promise<AuditRound[]> {
  const site = join(fx.dir, 'audit-site')
  const bytes = writeSite(site)
  log(`scenario 14 (audit): ${AUDIT.pages} pages, ${(bytes / AUDIT.pages / 1024).toFixed(1)} KiB each on average, --dry-run, ${ROUNDS} rounds`)
  if (Math.abs(bytes / AUDIT.pages / 1024 - AUDIT.pageKiB) > AUDIT.pageKiB * 0.25)
    anomalies.push(`audit: pages average ${(bytes / AUDIT.pages / 1024).toFixed(1)} KiB, not ~${AUDIT.pageKiB}`)
  const rounds: AuditRound[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const report = join(fx.dir, `audit-${round}.json`)
    const started = performance.now()
    const proc = spawnChild(
      'alttext audit',
      [fx.binary, 'audit', site, '--dry-run', '--quiet', '--json', report, '-o', join(fx.dir, `audit-${round}.html`)],
      {},
      join(fx.logDir, `audit-${round}.cli.log`),
    )
    const exitCode = await proc.exited
    const wallMs = performance.now() - started
    const parsed = JSON.parse(readFileSync(report, 'utf8')) as { timings: { read_ms: number; parse_ms: number }; totals: { pages: number; images: number } }
    if (exitCode !== 0) anomalies.push(`audit round ${round + 1}: exit ${exitCode}`)
    if (parsed.totals.pages !== AUDIT.pages) anomalies.push(`audit round ${round + 1}: ${parsed.totals.pages} pages read, not ${AUDIT.pages}`)
    rounds.push({
      readMs: parsed.timings.read_ms,
      parseMs: parsed.timings.parse_ms,
      wallMs,
      pages: parsed.totals.pages,
      images: parsed.totals.images,
      bytes,
      exitCode,
    })
    log(
      `audit round ${round + 1}: ${parsed.totals.pages} pages, ${parsed.totals.images} images read in ${parsed.timings.read_ms} ms (parsing ${parsed.timings.parse_ms} ms); whole run ${wallMs.toFixed(0)} ms`,
    )
  }
  if (QUICK) anomalies.push('audit: quick run, one round')
  return rounds
}

export function auditRows(rounds: AuditRound[]): Row[] {
  const scenario = '14 audit'
  const read = figure(rounds.map((r) => r.readMs))
  return [
    {
      scenario,
      figure: `read, parse and classify ${AUDIT.pages} pages of ~${AUDIT.pageKiB} KiB (--dry-run)`,
      unit: 'ms',
      value: read,
      target: `≤ ${AUDIT.limitMs} ms`,
      met: read.max <= AUDIT.limitMs && rounds.every((r) => r.exitCode === 0 && r.pages === AUDIT.pages),
    },
    { scenario, figure: 'of which HTMLRewriter parsing and classification', unit: 'ms', value: figure(rounds.map((r) => r.parseMs)), met: null },
    { scenario, figure: 'whole run (start to exit, reports written)', unit: 'ms', value: figure(rounds.map((r) => r.wallMs)), met: null },
  ]
}
