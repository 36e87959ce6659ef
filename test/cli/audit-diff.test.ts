// `--diff OLD-summary.json`: what got worse since an older run (findings by kind, pages newly failing or
// with more images needing work, coverage down); with --check the gate fails on regressions only, so a
// nightly audit passes on the findings a team already knows and fails on a new one.
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { diffSummaries, regressionLines } from '../../src/cli/audit/evidence/diff'
import type { Summary } from '../../src/cli/audit/evidence/summary'
import { audit, readJson, siteCopy } from './audit-support'

describe('--check --diff', () => {
  test('passes on known findings, fails on new ones with what got worse, passes again once fixed', async () => {
    const copy = siteCopy()
    try {
      const first = await audit(['--check', 'site', '--evidence', 'last', '-q'], {}, copy.dir)
      expect(first.code).toBe(1)

      // The same site: 10 images still need work, but none is new.
      const same = await audit(['--check', 'site', '--diff', 'last/summary.json', '-q'], {}, copy.dir)
      expect(same.stdout).toContain('check failed: 10 images need alt text or fixing')
      expect(same.stdout).toContain('diff: nothing got worse since last/summary.json')
      expect(same.stdout).toContain('gate (--check --diff): passed: nothing got worse')
      expect(same.stdout).not.toContain('regression:')
      expect(same.code).toBe(0)

      // Worse: a new page with an image without alt, and one more on the home page.
      writeFileSync(join(copy.site, 'new.html'), '<html lang="en"><body><img src="img/kite.jpg"></body></html>')
      const index = join(copy.site, 'index.html')
      const original = readFileSync(index, 'utf8')
      writeFileSync(index, original.replace('</body>', '<img src="img/logo.png" alt="logo.png"></body>'))
      const worse = await audit(['--check', 'site', '--diff', 'last/summary.json', '--evidence', 'now', '-q'], {}, copy.dir)
      expect(worse.code).toBe(1)
      const before = readJson(join(copy.dir, 'last', 'summary.json'))
      const now = readJson(join(copy.dir, 'now', 'summary.json'))
      const wasIndex = before.pages.find((page: { page: string }) => page.page === 'site/index.html').findings
      const lines = worse.stdout.split('\n').filter((line) => line.startsWith('regression:'))
      expect(lines).toEqual([
        'regression: missing: 6 → 7 (+1)',
        'regression: poor: 4 → 5 (+1)',
        'regression: site/index.html: 4 → 5 images need work',
        'regression: site/new.html: new page, 1 image needs work',
        'regression: coverage 28.57% → 25%',
      ])
      expect((wasIndex.missing ?? 0) + (wasIndex.poor ?? 0) + (wasIndex.empty ?? 0)).toBe(4)
      expect([before.totals.coverage, now.totals.coverage]).toEqual([0.2857, 0.25])
      expect(worse.stdout).toContain('diff: 5 regressions since last/summary.json')
      expect(worse.stdout).toContain('gate (--check --diff): failed: something got worse')

      // Fixed: the new page and the home page's extra image gone, and the about page's kite given a good alt.
      writeFileSync(index, original)
      writeFileSync(join(copy.site, 'new.html'), '<html lang="en"><body><p>No images now.</p></body></html>')
      const about = join(copy.site, 'about.html')
      writeFileSync(about, readFileSync(about, 'utf8').replace('ALT="image of kite"', 'ALT="A red kite over the beach."'))
      const better = await audit(['--check', 'site', '--diff', 'now/summary.json', '-q'], {}, copy.dir)
      expect(better.stdout).not.toContain('regression:')
      expect(better.stdout).toContain('diff: nothing got worse since now/summary.json (missing: 7 → 6; poor: 5 → 3; 1 page no longer failing)')
      expect(better.code).toBe(0)
    } finally {
      copy.cleanup()
    }
  })

  test('without --check, --diff lists what got worse and the exit code is the run’s own', async () => {
    const copy = siteCopy()
    try {
      expect((await audit(['--dry-run', 'site', '--evidence', 'last', '-q', '-o', 'r.html'], {}, copy.dir)).code).toBe(0)
      writeFileSync(join(copy.site, 'new.html'), '<html lang="en"><body><img src="img/kite.jpg"></body></html>')
      const res = await audit(['--dry-run', 'site', '--diff', 'last/summary.json', '-q', '-o', 'r.html'], {}, copy.dir)
      expect(res.stdout).toContain('regression: site/new.html: new page, 1 image needs work')
      expect(res.stdout).not.toContain('gate (--check --diff)')
      expect(res.code).toBe(0)
    } finally {
      copy.cleanup()
    }
  })
})

const summary = (pages: Summary['pages'], findings: Record<string, number>, coverage: number | null): Summary => ({
  format: 'alttext-audit-summary',
  version: 1,
  tool: 'alttext audit test',
  created_at: '2026-12-07T00:00:00.000Z',
  run: { inputs: ['site'], dry_run: true, check: true, service: null, read_ms: 1 },
  totals: {
    pages: pages.length,
    pages_with_images: pages.length,
    pages_unread: pages.filter((page) => page.error !== null).length,
    pages_failing: pages.filter((page) => page.failing).length,
    images: 0,
    findings,
    outcomes: {},
    acceptable: 0,
    coverage,
  },
  pages,
  review_log: { included: false, reason: 'test', organisation: null, entries: 0 },
})

const page = (name: string, findings: Record<string, number>, error: string | null = null) => ({
  page: name,
  group: 'site',
  images: Object.values(findings).reduce((a, b) => a + b, 0),
  findings,
  failing: error !== null || (findings.missing ?? 0) + (findings.empty ?? 0) + (findings.poor ?? 0) > 0,
  error,
})

describe('diffSummaries', () => {
  test('a page newly unreadable is a regression; more images not checked is only a note; a page gone is no regression', () => {
    const before = summary(
      [page('a.html', { ok: 2 }), page('b.html', { missing: 1 }), page('gone.html', { missing: 3 })],
      { missing: 4, ok: 2, not_checked: 0 },
      0.3333,
    )
    const after = summary(
      [page('a.html', {}, 'cannot fetch: HTTP 500'), page('b.html', { missing: 1, not_checked: 2 })],
      { missing: 1, not_checked: 2 },
      0.3333,
    )
    const diff = diffSummaries(before, after)
    expect(regressionLines(diff)).toEqual(['regression: a.html: cannot be checked: cannot fetch: HTTP 500'])
    expect(diff.notes).toEqual(['missing: 4 → 1', 'not checked: 0 → 2 (never a regression: the service could not read them)', '1 page no longer failing'])
  })

  test('coverage down with the same counts per kind (an acceptable image removed) is a regression; a null coverage is none', () => {
    const pages = [page('a.html', { missing: 1 })]
    expect(regressionLines(diffSummaries(summary(pages, { missing: 1 }, 0.5), summary(pages, { missing: 1 }, 0.25)))).toEqual([
      'regression: coverage 50% → 25%',
    ])
    expect(regressionLines(diffSummaries(summary(pages, { missing: 1 }, null), summary(pages, { missing: 1 }, 0)))).toEqual([])
  })
})
