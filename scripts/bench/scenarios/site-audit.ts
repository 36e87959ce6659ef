// Scenario 23: `alttext audit --check` at site scale, run as CI runs it (the compiled binary, a process of
// its own per run), with the kernel's peak RSS of each process (lib/procs.ts runMeasured).
//
// (a) The Markdown of a checkout of the Rust book (about 480 files): a tree of the same shape made from a
// seed (lib/book-corpus.ts), or the real one with BENCH_RUST_BOOK=<a checkout, or its src/>. Beside it, in
// the same rounds and taking turns, markdownlint-cli2 (the dev dependency, on Node as npm users run it)
// with only MD045 (no-alt-text) on, over the same files. Figures: wall time and the ratio to
// markdownlint-cli2 per round, pages per second, peak RSS, CPU time. **Target: ≤ 2× markdownlint-cli2.**
// (b) A shelf of 20 EPUB books (20–40 chapters each, images): books per second and peak RSS.
// (c) The 1,000-page loopback site with --sitemap (scenarios/site-crawl.ts): pages per second, peak RSS.
// (d) --render with 2 Chromium pages (scenarios/site-render.ts): its rows as that file makes them.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { anomalies, BUN, type Fixtures, inRoundOrder, log, MiB, QUICK, ROUNDS } from '../lib/common'
import { MARKDOWN_CORPUS, writeMarkdownCorpus, writeShelf } from '../lib/book-corpus'
import { ensureCommands } from '../lib/debian'
import { type MeasuredRun, runMeasured } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, ratioFigure } from '../lib/stats'
import { measureSiteCrawl, SITE_CRAWL, type SiteCrawlResult } from './site-crawl'
import { measureSiteRender, type SiteRenderRound, siteRenderRows } from './site-render'

export const SITE_AUDIT = {
  /** alttext's time over markdownlint-cli2's (MD045 only), the median of the per-round ratios. */
  maxRatio: 2,
  /** No run of either tool may take longer than this (it is killed, and the round counts as failed). */
  timeoutMs: 300_000,
}

/** The dev dependency's folder: its command-line entry sits beside its main module (its exports do not list the bin). */
const MARKDOWNLINT_DIR = dirname(fileURLToPath(import.meta.resolve('markdownlint-cli2')))
const MARKDOWNLINT_BIN = join(MARKDOWNLINT_DIR, 'markdownlint-cli2-bin.mjs')
const MARKDOWN_FILE = /\.(?:md|markdown)$/iu

/** One run of a tool: what the kernel measured, and what the tool said it read and found. */
type ToolRun = MeasuredRun & { files: number; images?: number; flagged: number }
export type MarkdownRound = { alttext: ToolRun; markdownlint: ToolRun }
export type ShelfRound = MeasuredRun & { pages: number; images: number; flagged: number }

export type SiteAuditResult = {
  corpus: { label: string; source: 'generated' | 'BENCH_RUST_BOOK'; files: number; bytes: number; images: number | null }
  baseline: string
  markdown: MarkdownRound[]
  shelf: { books: number; chapters: number; bytes: number; rounds: ShelfRound[] }
  crawl: SiteCrawlResult[]
  render: SiteRenderRound[]
}

/** The Markdown files under `dir`, as both tools walk it (hidden folders and node_modules left out). */
function markdownFiles(dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...markdownFiles(path))
    else if (entry.isFile() && MARKDOWN_FILE.test(entry.name)) found.push(path)
  }
  return found
}

/**
 * The corpus in `dir`: generated, or the Markdown files of BENCH_RUST_BOOK copied with their paths, so
 * that both tools read exactly those files (a checkout also holds HTML that alttext would read, and
 * configuration that markdownlint-cli2 would pick up).
 */
function prepareCorpus(dir: string): SiteAuditResult['corpus'] {
  const book = process.env.BENCH_RUST_BOOK
  if (!book) {
    const written = writeMarkdownCorpus(dir)
    return {
      label: `${written.files.length} Markdown files shaped like the Rust book (generated, seed ${MARKDOWN_CORPUS.seed})`,
      source: 'generated',
      files: written.files.length,
      bytes: written.bytes,
      images: written.images,
    }
  }
  if (!existsSync(book) || !statSync(book).isDirectory()) throw new Error(`BENCH_RUST_BOOK=${book} is not a folder`)
  const files = markdownFiles(book)
  let bytes = 0
  for (const file of files) {
    const to = join(dir, relative(book, file))
    cpSync(file, to)
    bytes += statSync(file).size
  }
  return { label: `the Rust book's ${files.length} Markdown files (BENCH_RUST_BOOK)`, source: 'BENCH_RUST_BOOK', files: files.length, bytes, images: null }
}

const logText = (path: string) => [path, `${path}.err`].map((p) => (existsSync(p) ? readFileSync(p, 'utf8') : '')).join('\n')

/** `476 pages, 36 images: 2 need alt text (…)`: the summary line of `alttext audit`. */
function alttextSummary(text: string): { pages: number; images: number; flagged: number } {
  const match = text.match(/^(\d+) pages?, (\d+) images?: (\d+) needs? alt text/mu)
  if (!match) return { pages: Number.NaN, images: Number.NaN, flagged: Number.NaN }
  return { pages: Number(match[1]), images: Number(match[2]), flagged: Number(match[3]) }
}

async function runAlttext(fx: Fixtures, gnuTime: string, inputs: string[], cwd: string, logPath: string): Promise<MeasuredRun & { text: string }> {
  const run = await runMeasured('alttext audit --check', [fx.binary, 'audit', '--check', ...inputs], { gnuTime, logPath, cwd, timeoutMs: SITE_AUDIT.timeoutMs })
  return { ...run, text: logText(logPath) }
}

async function runMarkdownlint(node: string, gnuTime: string, config: string, cwd: string, logPath: string): Promise<ToolRun> {
  const run = await runMeasured('markdownlint-cli2', [node, MARKDOWNLINT_BIN, '--config', config, '**/*.{md,markdown}'], {
    gnuTime,
    logPath,
    cwd,
    timeoutMs: SITE_AUDIT.timeoutMs,
  })
  const text = logText(logPath)
  return {
    ...run,
    files: Number(text.match(/^Linting: (\d+) file/mu)?.[1] ?? Number.NaN),
    flagged: Number(text.match(/^Summary: (\d+) issue/mu)?.[1] ?? Number.NaN),
  }
}

/** A --check exits 0 (passed) or 1 (something needs alt text); anything else is a failed run. */
const ranToEnd = (run: MeasuredRun) => !run.timedOut && (run.exitCode === 0 || run.exitCode === 1)

export async function measureSiteAudit(fx: Fixtures): Promise<SiteAuditResult> {
  const gnuTime = (await ensureCommands({ time: 'time' })).time!
  const dir = join(fx.dir, 'site-audit')
  const corpusDir = join(dir, 'markdown')
  mkdirSync(corpusDir, { recursive: true })
  const corpus = prepareCorpus(corpusDir)
  // Every rule off but MD045; a file outside the corpus, so no tool finds it as configuration of its own.
  const config = join(dir, 'md045.markdownlint-cli2.jsonc')
  writeFileSync(config, JSON.stringify({ config: { default: false, MD045: true } }))
  const node = Bun.which('node')
  const runtime = node
    ? `Node ${(Bun.spawnSync([node, '--version']).stdout.toString().trim() || '?').replace(/^v/u, '')}`
    : `Bun ${Bun.version} (no node on PATH)`
  const { version } = JSON.parse(readFileSync(join(MARKDOWNLINT_DIR, 'package.json'), 'utf8')) as { version: string }
  const baseline = `markdownlint-cli2 ${version}, MD045 only, on ${runtime}`
  log(`scenario 23 (site-audit): --check over ${corpus.label}, ${(corpus.bytes / MiB).toFixed(2)} MiB, beside ${baseline}; ${ROUNDS} round(s)`)

  const markdown: MarkdownRound[] = []
  const tools = ['alttext', 'markdownlint'] as const
  // One unmeasured run of each first: the files in the page cache, both binaries loaded once.
  if (!QUICK) {
    await runAlttext(fx, gnuTime, ['.'], corpusDir, join(fx.logDir, 'site-audit-warm.alttext.log'))
    await runMarkdownlint(node ?? BUN, gnuTime, config, corpusDir, join(fx.logDir, 'site-audit-warm.markdownlint.log'))
  }
  for (let round = 0; round < ROUNDS; round++) {
    const runs: Partial<MarkdownRound> = {}
    for (const tool of inRoundOrder([...tools], round)) {
      const logPath = join(fx.logDir, `site-audit-${round}.${tool}.log`)
      if (tool === 'alttext') {
        const { text, ...run } = await runAlttext(fx, gnuTime, ['.'], corpusDir, logPath)
        const summary = alttextSummary(text)
        runs.alttext = { ...run, files: summary.pages, images: summary.images, flagged: summary.flagged }
      } else runs.markdownlint = await runMarkdownlint(node ?? BUN, gnuTime, config, corpusDir, logPath)
    }
    const { alttext, markdownlint } = runs as MarkdownRound
    for (const [tool, run] of Object.entries({ alttext, markdownlint })) {
      if (!ranToEnd(run)) anomalies.push(`site-audit round ${round + 1}: ${tool} ${run.timedOut ? 'timed out' : `exited ${run.exitCode}`}`)
      if (run.files !== corpus.files) anomalies.push(`site-audit round ${round + 1}: ${tool} read ${run.files} files, not ${corpus.files}`)
    }
    if (corpus.images !== null && alttext.images !== corpus.images)
      anomalies.push(`site-audit round ${round + 1}: alttext found ${alttext.images} images, the corpus has ${corpus.images}`)
    markdown.push({ alttext, markdownlint })
    log(
      `site-audit round ${round + 1}: alttext ${alttext.wallMs.toFixed(0)} ms (${(alttext.peakRssBytes / MiB).toFixed(0)} MiB, ${alttext.flagged} flagged), ` +
        `markdownlint-cli2 ${markdownlint.wallMs.toFixed(0)} ms (${(markdownlint.peakRssBytes / MiB).toFixed(0)} MiB, ${markdownlint.flagged} issues): ${(alttext.wallMs / markdownlint.wallMs).toFixed(2)}×`,
    )
  }

  // (b) The shelf.
  const shelfDir = join(dir, 'shelf')
  const shelf = writeShelf(shelfDir)
  log(`site-audit shelf: ${shelf.books.length} EPUB books, ${shelf.chapters} chapters, ${(shelf.bytes / MiB).toFixed(1)} MiB`)
  const shelfRounds: ShelfRound[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const { text, ...run } = await runAlttext(fx, gnuTime, ['.'], shelfDir, join(fx.logDir, `site-audit-shelf-${round}.log`))
    const summary = alttextSummary(text)
    if (!ranToEnd(run)) anomalies.push(`site-audit shelf round ${round + 1}: ${run.timedOut ? 'timed out' : `exited ${run.exitCode}`}`)
    // Each chapter is a page of the report (the navigation document is not one).
    if (summary.pages !== shelf.chapters)
      anomalies.push(`site-audit shelf round ${round + 1}: ${summary.pages} documents read, ${shelf.chapters} chapters on the shelf`)
    shelfRounds.push({ ...run, ...summary })
    log(
      `site-audit shelf round ${round + 1}: ${run.wallMs.toFixed(0)} ms, ${summary.pages} documents, ${summary.images} images, peak RSS ${(run.peakRssBytes / MiB).toFixed(0)} MiB`,
    )
  }

  // (c) The loopback site with --sitemap (site-crawl.ts: its own server in this process, its own RSS sampling).
  const crawl: SiteCrawlResult[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const crawlDir = join(dir, `crawl-${round}`)
    mkdirSync(crawlDir, { recursive: true })
    const run = await measureSiteCrawl({ command: [fx.binary], dir: crawlDir, logDir: fx.logDir })
    if (run.exitCode !== 0) anomalies.push(`site-audit crawl round ${round + 1}: exit ${run.exitCode}`)
    if (run.pages !== SITE_CRAWL.pages) anomalies.push(`site-audit crawl round ${round + 1}: ${run.pages} pages read, not ${SITE_CRAWL.pages}`)
    crawl.push(run)
    log(
      `site-audit crawl round ${round + 1}: ${run.pages} pages in ${run.wallMs.toFixed(0)} ms, ${run.pagesPerSecond.toFixed(1)} pages/s, peak RSS ${run.peakRssMiB.toFixed(0)} MiB`,
    )
  }

  // (d) --render with 2 Chromium pages (site-render.ts: its own site, rounds and RSS sampling).
  const render = await measureSiteRender(fx)

  if (QUICK) anomalies.push('site-audit: quick run, one round, no warm-up')
  return {
    corpus,
    baseline,
    markdown,
    shelf: { books: shelf.books.length, chapters: shelf.chapters, bytes: shelf.bytes, rounds: shelfRounds },
    crawl,
    render,
  }
}

const perSecond = (count: number, ms: number) => (count * 1000) / ms

export function siteAuditRows(result: SiteAuditResult): Row[] {
  const scenario = '23 site-audit'
  const { corpus, markdown, shelf } = result
  const alttext = markdown.map((round) => round.alttext)
  const lint = markdown.map((round) => round.markdownlint)
  const ratio = ratioFigure(
    alttext.map((run) => run.wallMs),
    lint.map((run) => run.wallMs),
  )
  const clean = markdown.every((round) => ranToEnd(round.alttext) && ranToEnd(round.markdownlint) && round.alttext.files === corpus.files)
  const baseline = (value: number[], unit?: Row['unit']) => ({ label: result.baseline, value: figure(value), ...(unit && { unit }) })
  const rows: Row[] = [
    {
      scenario,
      figure: `--check over ${corpus.label}`,
      unit: 'ms',
      value: figure(alttext.map((run) => run.wallMs)),
      baseline: baseline(lint.map((run) => run.wallMs)),
      ratio: { kind: 'x', value: ratio },
      target: `≤ ${SITE_AUDIT.maxRatio}× markdownlint-cli2`,
      met: clean && ratio.median <= SITE_AUDIT.maxRatio,
    },
    {
      scenario,
      figure: 'pages per second (files of the corpus over the process’s wall time)',
      unit: 'per-s',
      value: figure(alttext.map((run) => perSecond(corpus.files, run.wallMs))),
      baseline: baseline(lint.map((run) => perSecond(corpus.files, run.wallMs))),
      met: null,
    },
    {
      scenario,
      figure: 'peak RSS of the --check process (ru_maxrss)',
      unit: 'MiB',
      value: figure(alttext.map((run) => run.peakRssBytes / MiB)),
      baseline: baseline(lint.map((run) => run.peakRssBytes / MiB)),
      met: null,
    },
    {
      scenario,
      figure: 'CPU time of the --check process (user + system)',
      unit: 'ms',
      value: figure(alttext.map((run) => run.cpuMs)),
      baseline: baseline(lint.map((run) => run.cpuMs)),
      ratio: {
        kind: 'x',
        value: ratioFigure(
          alttext.map((run) => run.cpuMs),
          lint.map((run) => run.cpuMs),
        ),
      },
      met: null,
    },
  ]
  const books = shelf.rounds
  rows.push(
    {
      scenario,
      figure: `--check over a shelf of ${shelf.books} EPUB books (${shelf.chapters} chapters, ${(shelf.bytes / MiB).toFixed(1)} MiB)`,
      unit: 'ms',
      value: figure(books.map((run) => run.wallMs)),
      met: null,
    },
    { scenario, figure: 'books per second', unit: 'per-s', value: figure(books.map((run) => perSecond(shelf.books, run.wallMs))), met: null },
    {
      scenario,
      figure: 'content documents per second (the shelf)',
      unit: 'per-s',
      value: figure(books.map((run) => perSecond(run.pages, run.wallMs))),
      met: null,
    },
    { scenario, figure: 'peak RSS of the --check process (the shelf)', unit: 'MiB', value: figure(books.map((run) => run.peakRssBytes / MiB)), met: null },
  )
  const { crawl } = result
  rows.push(
    {
      scenario,
      figure: `--sitemap over a ${SITE_CRAWL.pages}-page loopback site (--dry-run): pages per second, start to exit`,
      unit: 'per-s',
      value: figure(crawl.map((run) => run.pagesPerSecond)),
      met: null,
    },
    { scenario, figure: 'whole run of the crawl', unit: 'ms', value: figure(crawl.map((run) => run.wallMs)), met: null },
    {
      scenario,
      figure: 'peak RSS of the crawling process (VmHWM, polled every 20 ms)',
      unit: 'MiB',
      value: figure(crawl.map((run) => run.peakRssMiB)),
      met: null,
    },
  )
  rows.push(...siteRenderRows(result.render).map((row) => ({ ...row, scenario })))
  return rows
}
