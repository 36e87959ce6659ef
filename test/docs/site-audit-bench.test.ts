// test lane: system
// Scenario 23 of the benchmark (scripts/bench/scenarios/site-audit.ts): the generated Markdown tree has
// the Rust book's shape and the same bytes from the same seed, the gate's row is judged as the README
// says, and runMeasured's peak RSS is each command's own (Bun's resourceUsage() of a child was not).
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { MARKDOWN_CORPUS, writeMarkdownCorpus } from '../../scripts/bench/lib/book-corpus'
import { type MeasuredRun, runMeasured } from '../../scripts/bench/lib/procs'
import { type SiteAuditResult, siteAuditRows } from '../../scripts/bench/scenarios/site-audit'

const scratch = mkdtempSync(join(tmpdir(), 'alttext-site-audit-bench-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const quantile = (sorted: number[], q: number) => sorted[Math.round((sorted.length - 1) * q)]!

describe('the generated Markdown tree', () => {
  const first = writeMarkdownCorpus(join(scratch, 'a'))
  const second = writeMarkdownCorpus(join(scratch, 'b'))

  test('is the same bytes from the same seed', () => {
    expect(second.files.map((file) => relative(join(scratch, 'b'), file.path))).toEqual(first.files.map((file) => relative(join(scratch, 'a'), file.path)))
    for (const [index, file] of first.files.entries()) expect(readFileSync(second.files[index]!.path).equals(readFileSync(file.path))).toBe(true)
  })

  test('has the checkout’s shape: ~480 files in nested folders, its size distribution, images in some chapters', () => {
    expect(first.files.length).toBe(MARKDOWN_CORPUS.files)
    expect(first.files.length).toBeGreaterThan(450)
    // rust-lang/book (2026-12-07): 478 files, 2.76 MB; median 459 B, p90 15.8 KB, largest 105 KB.
    expect(first.bytes).toBeGreaterThan(2_400_000)
    expect(first.bytes).toBeLessThan(3_100_000)
    const sizes = first.files.map((file) => file.bytes).sort((a, b) => a - b)
    expect(quantile(sizes, 0.5)).toBeGreaterThan(380)
    expect(quantile(sizes, 0.5)).toBeLessThan(600)
    expect(quantile(sizes, 0.9)).toBeGreaterThan(10_000)
    expect(quantile(sizes, 0.9)).toBeLessThan(25_000)
    expect(sizes.at(-1)!).toBeGreaterThan(60_000)
    const depths = new Set(first.files.map((file) => relative(join(scratch, 'a'), file.path).split('/').length))
    expect([...depths].sort()).toEqual([1, 2, 3, 5])
    expect(first.files.filter((file) => file.images > 0).length).toBeGreaterThan(10)
    expect(first.flawed).toBeGreaterThan(0)
    const chapter = readFileSync(first.files.find((file) => file.bytes > 20_000)!.path, 'utf8')
    for (const mark of [/^## /m, /^```rust/m, /\]\(ch\d+/, /^\[[^\]]+\]: /m, /^- /m]) expect(chapter).toMatch(mark)
  })
})

const run = (wallMs: number, extra: Partial<MeasuredRun> = {}): MeasuredRun => ({
  exitCode: 1,
  wallMs,
  peakRssBytes: 200 * 2 ** 20,
  cpuMs: wallMs,
  timedOut: false,
  ...extra,
})

function result(pairs: [alttext: number, markdownlint: number][], alttextRun: Partial<MeasuredRun> = {}): SiteAuditResult {
  return {
    corpus: { label: '476 files', source: 'generated', files: 476, bytes: 1, images: 36 },
    baseline: 'markdownlint-cli2',
    markdown: pairs.map(([a, m]) => ({
      alttext: { ...run(a, alttextRun), files: 476, images: 36, flagged: 2 },
      markdownlint: { ...run(m), files: 476, flagged: 4 },
    })),
    shelf: { books: 20, chapters: 564, bytes: 1, rounds: [{ ...run(500), pages: 564, images: 1581, flagged: 248 }] },
    crawl: [{ pagesPerSecond: 95, peakRssMiB: 170, pages: 1000, wallMs: 10_500, exitCode: 0 }],
    render: [{ readMs: 45_000, wallMs: 47_000, pages: 51, images: 600, peakRssMiB: 170, exitCode: 0 }],
  }
}

describe('the row of the target', () => {
  const gate = (r: SiteAuditResult) => siteAuditRows(r).find((row) => row.target !== undefined)!

  test('is met at ≤ 2× markdownlint-cli2 by the median of the per-round ratios, and not above', () => {
    expect(
      gate(
        result([
          [3000, 4000],
          [9000, 4000],
          [7000, 4000],
        ]),
      ).met,
    ).toBe(true) // ratios 0.75, 2.25, 1.75
    expect(
      gate(
        result([
          [9000, 4000],
          [3000, 4000],
          [8100, 4000],
        ]),
      ).met,
    ).toBe(false) // 2.25, 0.75, 2.025
  })

  test('is not met when a run of alttext timed out or ended otherwise than 0 or 1', () => {
    expect(gate(result([[3000, 4000]], { timedOut: true })).met).toBe(false)
    expect(gate(result([[3000, 4000]], { exitCode: 2 })).met).toBe(false)
  })
})

describe('runMeasured', () => {
  test('gives each command its own peak RSS: a small one after a large one is small', async () => {
    const gnuTime = Bun.which('time')
    if (!gnuTime) throw new Error('GNU time (Debian: time) is needed; the bench installs it')
    const alloc = (mib: number) => [process.execPath, '-e', `const b = new Uint8Array(${mib} * 2 ** 20); b.fill(1); console.log(b[7])`]
    const measure = (command: string[], name: string) => runMeasured(name, command, { gnuTime, logPath: join(scratch, `${name}.log`), timeoutMs: 60_000 })
    const large = await measure(alloc(300), 'large')
    const small = await measure(alloc(1), 'small')
    expect(large.exitCode).toBe(0)
    expect(small.exitCode).toBe(0)
    expect(large.peakRssBytes).toBeGreaterThan(300 * 2 ** 20)
    expect(small.peakRssBytes).toBeLessThan(large.peakRssBytes - 200 * 2 ** 20)
    expect(small.cpuMs).toBeGreaterThanOrEqual(0)
  })

  test('kills a command at its time limit and reports no peak rather than zero', async () => {
    const gnuTime = Bun.which('time')!
    const stuck = await runMeasured('stuck', [process.execPath, '-e', 'setInterval(() => {}, 1000)'], {
      gnuTime,
      logPath: join(scratch, 'stuck.log'),
      timeoutMs: 500,
    })
    expect(stuck.timedOut).toBe(true)
    expect(stuck.exitCode).not.toBe(0)
    expect(Number.isNaN(stuck.peakRssBytes)).toBe(true)
  })
})
