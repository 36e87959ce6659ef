// `alttext audit --evidence DIR`: every file of the pack written, in its documented shape, with counts
// that match the JSON report; the conformance rows with those counts; and the review log read from the
// real service's activity log of an organisation whose reviewers decided suggestions the audit queued.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { conformanceMarkdown, levelOf, tally } from '../../src/cli/audit/evidence/conformance'
import { groupOf } from '../../src/cli/audit/evidence/outcome'
import { SummarySchema, summaryOf } from '../../src/cli/audit/evidence/summary'
import { type Finding, type PageResult, type Report, totalsOf } from '../../src/cli/audit/report'
import { parseCsv } from '../../src/cli/shared/csv'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { runCli } from '../support/process'
import { MODEL, readJson, siteCopy } from './audit-support'

let env: AltTextEnv

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
})
afterAll(() => env.stop())

/** The audit's clock, so the pack's dates are known. */
const EVALUATED = Date.parse('2026-12-07T09:30:00.000Z')
const audit = (args: string[], cwd: string, vars: Record<string, string> = {}) => runCli(['audit', ...args], vars, { cwd, clock: () => EVALUATED })

const rowsOf = (path: string) => {
  const [header, ...rows] = parseCsv(readFileSync(path, 'utf8'))
  return rows.map((row) => Object.fromEntries(header!.map((name, index) => [name, row[index]!])))
}

describe('--evidence DIR', () => {
  test('writes the pack: report, summary, findings, conformance text; counts match the JSON report; no key: the pack says why there is no review log', async () => {
    const copy = siteCopy()
    try {
      for (const n of [1, 2]) writeFileSync(join(copy.site, `text-${n}.html`), `<html lang="en"><title>Text ${n}</title><p>Call me Ishmael.</p></html>`)
      const res = await audit(['--check', 'site', '--evidence', 'pack', '--json', 'report.json'], copy.dir)
      expect(res.code).toBe(1)
      expect(res.stdout).toContain('evidence: pack (report.html, summary.json, findings.csv, review-log.json, conformance.md)')
      expect(res.stdout).toContain('review log: not included: no key was given (--key or ALTTEXT_API_KEY)')
      const pack = join(copy.dir, 'pack')
      for (const name of ['report.html', 'summary.json', 'findings.csv', 'review-log.json', 'conformance.md']) expect(existsSync(join(pack, name))).toBe(true)
      expect(existsSync(join(pack, 'review-log.csv'))).toBe(false)

      const report = readJson(join(copy.dir, 'report.json'))
      const summary = SummarySchema.parse(readJson(join(pack, 'summary.json')))
      expect(summary).toMatchObject({ format: 'alttext-audit-summary', version: 1, tool: report.tool, created_at: '2026-12-07T09:30:00.000Z' })
      expect(summary.run).toMatchObject({ inputs: ['site'], dry_run: true, check: true, service: null })
      expect(summary.totals).toEqual({
        pages: 5,
        pages_with_images: 3,
        pages_unread: 0,
        pages_failing: 3,
        images: report.totals.images,
        findings: { missing: 6, empty: 0, poor: 4, long: 0, ok: 1, decorative: 3, not_checked: 0, ignored: 0 },
        outcomes: { needs_work: 10, good: 1, decorative: 3, not_checked: 0, ignored: 0 },
        acceptable: 4,
        coverage: 0.2857,
      })
      for (const kind of ['missing', 'empty', 'poor', 'long', 'ok', 'decorative']) expect(summary.totals.findings[kind]).toBe(report.totals[kind])
      // Pages without images are counted, not listed; each listed page's counts add up to the totals.
      expect(summary.pages.map((page) => page.page)).toEqual(['site/about.html', 'site/blog/post.html', 'site/index.html'])
      expect(summary.pages.map((page) => page.group)).toEqual(['site', 'site/blog', 'site'])
      expect(summary.pages.reduce((sum, page) => sum + (page.findings.missing ?? 0), 0)).toBe(6)
      for (const page of summary.pages) expect(page.images).toBe(report.pages.find((p: { page: string }) => p.page === page.page).images.length)
      expect(summary.review_log).toEqual({ included: false, reason: expect.stringContaining('no key was given'), organisation: null, entries: 0 })

      // findings.csv: one row per image, columns in their documented order, the same statuses as the JSON.
      const findings = rowsOf(join(pack, 'findings.csv'))
      expect(readFileSync(join(pack, 'findings.csv'), 'utf8').split('\r\n')[0]).toBe(
        'group,page,line,column,element,src,finding,outcome,issues,attribute,current_alt,suggested_alt,error',
      )
      expect(findings).toHaveLength(report.totals.images)
      const statuses = report.pages.flatMap((page: { page: string; images: { status: string; line: number }[] }) =>
        page.images.map((image) => `${page.page}:${image.line}:${image.status}`),
      )
      expect(findings.map((row) => `${row.page}:${row.line}:${row.finding}`).sort()).toEqual(statuses.sort())
      expect(findings.filter((row) => row.outcome === 'needs-work')).toHaveLength(10)

      const log = readJson(join(pack, 'review-log.json'))
      expect(log).toMatchObject({ format: 'alttext-review-log', version: 1, included: false, entries: [] })
      expect(log.reason).toContain('no key was given')

      // The conformance text: ACR rows with the counts, and the limits said.
      const text = readFileSync(join(pack, 'conformance.md'), 'utf8')
      expect(text).toContain('| Criteria | Conformance Level | Remarks and Explanations |')
      expect(text).toMatch(
        /\| 1\.1\.1 Non-text Content \(Level A\) \| Does Not Support \| Automated audit of 5 pages: 14 images, 4 with an acceptable text alternative/u,
      )
      expect(text).toContain('10 images on 3 pages lack one: 6 without alt text, 4 with alt text that is a file name')
      expect(text).toMatch(/\| 9\.1\.1\.1 Non-text content \(web pages: WCAG 2\.1 SC 1\.1\.1\) \| Does Not Support \|/u)
      expect(text).toContain('10.1.1.1 Non-text content (non-web documents): no EPUB book or notebook was audited')
      expect(text).toMatch(/\| 1\.1\.1 Non-text Content \(Level A\)\. Revised Section 508: E205\.4 \(electronic content\)[^|]*\| Does Not Support \|/u)
      expect(text).toContain('they cannot show that it serves the equivalent purpose')
      expect(text).toContain('Automated checks cannot show that alt text is *equivalent*')
      expect(text).toContain('this content is not compliant, owing to the non-accessible content listed below')
      expect(text).toContain('This statement was prepared on 2026-12-07.')
      expect(text).toContain('Human review: no review log is included: no key was given')

      // report.html is the report: grouped, pages without images only counted.
      const html = readFileSync(join(pack, 'report.html'), 'utf8')
      expect(html).toContain('<p>2 pages without images are not listed.</p>')
      expect(html).toContain('<h2 id="group-1">site</h2>')
      expect(html).toContain('<h2 id="group-2">site/blog</h2>')
    } finally {
      copy.cleanup()
    }
  })

  test('a site whose every image has a good or decorative alt: Supports, fully compliant, coverage 1', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(
        join(copy.dir, 'good.html'),
        '<html lang="en"><body><img src="a.png" alt="A red kite over the beach."><img src="rule.png" alt=""></body></html>',
      )
      const res = await audit(['--check', 'good.html', '--evidence', 'pack'], copy.dir)
      expect(res.code).toBe(0)
      const summary = readJson(join(copy.dir, 'pack', 'summary.json'))
      expect(summary.totals).toMatchObject({ images: 2, acceptable: 2, coverage: 1, pages_failing: 0 })
      const text = readFileSync(join(copy.dir, 'pack', 'conformance.md'), 'utf8')
      expect(text).toMatch(/\| 1\.1\.1 Non-text Content \(Level A\) \| Supports \|/u)
      expect(text).toContain('this content is fully compliant.')
      expect(text).toContain('No image without an acceptable text alternative was found.')
    } finally {
      copy.cleanup()
    }
  })

  test("an organisation's key: review-log.csv/.json hold the decisions on suggestions for these pages, and only those", async () => {
    const copy = siteCopy()
    try {
      const made = await env.service.api.post('/api/orgs', { name: 'Docs team' }, env.key)
      expect(made.status).toBe(201)
      const orgId = made.body.id as string
      const orgKey = (await env.service.api.post('/api/keys', { org_id: orgId, label: 'ci' }, env.key)).body.api_key as string
      const service = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: orgKey }
      const inputs = ['site/index.html', 'site/blog/post.html', '--root', 'site', '-q', '-o', 'r.html']
      const queued = await audit([...inputs, '--review', '--queue'], copy.dir, service)
      expect(queued.code).toBe(0)
      const listed = (await env.service.api.get('/api/suggestions?status=pending&target_kind=file&limit=100', orgKey)).body.suggestions as {
        id: string
        target: { ref: string }
      }[]
      expect(listed.length).toBeGreaterThan(2)
      const [edited, rejected, ...rest] = listed
      expect((await env.service.api.post(`/api/suggestions/${edited!.id}/accept`, { alt_text: 'A red kite, edited by a person.' }, orgKey)).status).toBe(200)
      expect((await env.service.api.post(`/api/suggestions/${rejected!.id}/reject`, { reason: 'wrong image' }, orgKey)).status).toBe(200)
      expect((await env.service.api.post('/api/suggestions/accept', { ids: rest.map((s) => s.id) }, orgKey)).status).toBe(200)
      // A decision for a page this audit does not cover stays out of its log.
      const elsewhere = await env.service.api.post(
        '/api/suggestions',
        {
          image_base64: readFileSync(join(copy.site, 'img', 'logo.png')).toString('base64'),
          target: { kind: 'file', ref: 'other/page.html:1:1', site: 'other' },
          proposed_alt: 'A logo elsewhere.',
        },
        orgKey,
      )
      expect(elsewhere.status).toBe(201)
      expect((await env.service.api.post(`/api/suggestions/${elsewhere.body.id}/accept`, {}, orgKey)).status).toBe(200)

      const res = await audit(
        ['--check', 'site/index.html', 'site/blog/post.html', 'site/about.html', '--root', 'site', '--evidence', 'pack'],
        copy.dir,
        service,
      )
      expect(res.code).toBe(1)
      expect(res.stdout).toContain('evidence: pack (report.html, summary.json, findings.csv, review-log.csv/.json, conformance.md)')
      expect(res.stdout).toContain(`of ${orgId} for these pages`)
      expect(res.stdout + res.stderr).not.toContain(orgKey)

      const rows = rowsOf(join(copy.dir, 'pack', 'review-log.csv'))
      const ids = new Set(listed.map((s) => s.id))
      expect(rows.every((row) => ids.has(row.suggestion!))).toBe(true)
      expect(rows.some((row) => row.suggestion === elsewhere.body.id)).toBe(false)
      // Each queued suggestion: created, then decided; in the order things happened.
      expect(rows).toHaveLength(listed.length * 2)
      expect(rows.map((row) => Number(row.seq))).toEqual(rows.map((row) => Number(row.seq)).sort((a, b) => a - b))
      const decisions = rows.filter((row) => row.action !== 'created')
      const byId = new Map(decisions.map((row) => [row.suggestion, row]))
      expect(byId.get(edited!.id)).toMatchObject({
        action: 'edited',
        final_alt: 'A red kite, edited by a person.',
        target_kind: 'file',
        target_ref: edited!.target.ref,
      })
      expect(byId.get(rejected!.id)).toMatchObject({ action: 'rejected', reason: 'wrong image', final_alt: '' })
      expect(decisions.filter((row) => row.action === 'accepted')).toHaveLength(rest.length)
      for (const row of rows) expect(['site/index.html', 'site/blog/post.html']).toContain(row.page!)

      const log = readJson(join(copy.dir, 'pack', 'review-log.json'))
      expect(log).toMatchObject({ included: true, organisation: orgId, service: env.service.url, read_at: '2026-12-07T09:30:00.000Z', truncated: false })
      expect(log.entries).toHaveLength(rows.length)
      const summary = readJson(join(copy.dir, 'pack', 'summary.json'))
      expect(summary.review_log).toEqual({ included: true, reason: null, organisation: orgId, entries: rows.length })

      const pages = new Set(decisions.map((row) => row.page)).size
      const text = readFileSync(join(copy.dir, 'pack', 'conformance.md'), 'utf8')
      expect(text).toContain(
        `the organisation's review log holds ${listed.length} decisions on suggested text alternatives for ${pages} pages of this audit (${rest.length} accepted, 1 edited, 1 rejected; see review-log.csv)`,
      )
      expect(text).toContain(`Human review: ${listed.length} decisions for ${pages} pages in review-log.csv.`)
      expect(text).toContain(`with human review of ${listed.length} suggested text alternatives recorded in the organisation's review log`)
    } finally {
      copy.cleanup()
    }
  }, 60_000)
})

describe('--evidence with a personal key', () => {
  test("a personal key reads its personal organisation's log: included, with no entry for pages it never queued", async () => {
    const copy = siteCopy()
    try {
      const personal = (await env.service.api.get('/api/orgs', env.key)).body.orgs.find((org: { personal: boolean }) => org.personal).id
      const res = await audit(['--check', 'site', '--evidence', 'pack', '-q'], copy.dir, { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key })
      expect(res.code).toBe(1)
      expect(res.stdout).toContain(`review log: 0 entries of ${personal} for these pages`)
      expect(readJson(join(copy.dir, 'pack', 'review-log.json'))).toMatchObject({ included: true, organisation: personal, entries: [] })
      expect(readFileSync(join(copy.dir, 'pack', 'review-log.csv'), 'utf8')).toBe(
        'seq,at,actor,action,suggestion,page,target_kind,target_ref,final_alt,reason\r\n',
      )
      expect(readFileSync(join(copy.dir, 'pack', 'conformance.md'), 'utf8')).toContain(
        "Human review: the organisation's review log holds no decision on suggestions for these pages",
      )
    } finally {
      copy.cleanup()
    }
  })
})

describe('the report at scale', () => {
  test('140 pages without images are one line; 1,000 pages with 5 images each stay under 4 MB, every image listed', async () => {
    const copy = siteCopy()
    try {
      const book = join(copy.dir, 'big')
      for (const n of Array.from({ length: 140 }, (_, i) => i + 1)) {
        mkdirSync(join(book, 'chapters'), { recursive: true })
        writeFileSync(join(book, 'chapters', `ch${n}.html`), `<html lang="en"><title>Chapter ${n}</title><p>Call me Ishmael.</p></html>`)
      }
      for (let n = 1; n <= 1000; n++) {
        const folder = join(book, `part-${Math.ceil(n / 100)}`)
        mkdirSync(folder, { recursive: true })
        const images = [
          '<img src="/img/a.png">',
          '<img src="/img/b.png" alt="IMG_0001.JPG">',
          `<img src="/img/c.png" alt="The harbour on day ${n}.">`,
          '<img src="/img/d.png" alt="">',
          `<img src="/img/e.png" alt="A kite, number ${n}.">`,
        ]
        writeFileSync(join(folder, `page-${n}.html`), `<html lang="en"><body>${images.join('\n')}</body></html>`)
      }
      const res = await audit(['--check', 'big', '--max-pages', '2000', '--evidence', 'pack', '-q'], copy.dir)
      expect(res.stderr).toBe('')
      expect(res.code).toBe(1)
      const path = join(copy.dir, 'pack', 'report.html')
      const html = readFileSync(path, 'utf8')
      expect(html).toContain('<p>140 pages without images are not listed.</p>')
      expect(html).not.toContain('ch1.html')
      expect(html.match(/<tr data-o=/gu)).toHaveLength(5000)
      expect(html.match(/<h2 id="group-\d+">/gu)).toHaveLength(10)
      expect(statSync(path).size).toBeLessThan(4_000_000)
      const summary = readJson(join(copy.dir, 'pack', 'summary.json'))
      expect(summary.totals).toMatchObject({ pages: 1140, pages_with_images: 1000, images: 5000, pages_failing: 1000, coverage: 0.6 })
      expect(summary.pages).toHaveLength(1000)
    } finally {
      copy.cleanup()
    }
  }, 60_000)

  test('groups: a book by its file, a URL by its host, a file by its folder', () => {
    expect(groupOf({ page: 'books/moby.epub!OEBPS/ch1.xhtml', address: '/x/books/moby.epub' })).toBe('books/moby.epub')
    expect(groupOf({ page: 'https://docs.example.org/guide/a.html', address: 'https://docs.example.org/guide/a.html' })).toBe('docs.example.org')
    expect(groupOf({ page: 'site/blog/post.html', address: '/x/site/blog/post.html' })).toBe('site/blog')
    expect(groupOf({ page: 'index.html', address: '/x/index.html' })).toBe('.')
  })
})

const finding = (status: string, line = 1): Finding =>
  ({
    line,
    column: 1,
    kind: 'img',
    src: 'a.png',
    resolved: null,
    attribute: 'alt',
    alt: null,
    status,
    not_checked: status === 'not_checked' ? 'the service could not read it' : null,
    issues: [],
    suggestion: null,
    error: null,
    written: null,
  }) as unknown as Finding
const pageOf = (name: string, statuses: string[], error: string | null = null): PageResult => ({
  page: name,
  address: name,
  error,
  language: 'en',
  fixed_copy: null,
  ignored: 0,
  images: statuses.map((status, index) => finding(status, index + 1)),
})
const reportOf = (pages: PageResult[]): Report => ({
  tool: 'alttext audit test',
  created_at: '2026-12-07T09:30:00.000Z',
  service: null,
  dry_run: true,
  overwrite: false,
  timings: { read_ms: 1, parse_ms: 1 },
  totals: totalsOf(pages),
  pages,
})

describe('conformance levels', () => {
  test('the rule: Supports, Partially Supports (a failure, an unchecked image, an unread page), Does Not Support, Not Evaluated, Not Applicable', () => {
    const level = (...pages: PageResult[]) => levelOf(tally(pages))
    expect(level(pageOf('a.html', ['ok', 'decorative', 'long']))).toBe('Supports')
    expect(level(pageOf('a.html', ['ok', 'ok', 'missing']))).toBe('Partially Supports')
    // A status this code does not know (an image the service could not read) is not checked, never a pass.
    expect(level(pageOf('a.html', ['ok', 'not_checked']))).toBe('Partially Supports')
    expect(level(pageOf('a.html', ['ok']), pageOf('b.html', [], 'cannot fetch: HTTP 500'))).toBe('Partially Supports')
    expect(level(pageOf('a.html', ['ok', 'poor', 'empty']))).toBe('Does Not Support')
    expect(level(pageOf('a.html', ['ok', 'missing']))).toBe('Partially Supports')
    expect(level(pageOf('a.html', ['not_checked']))).toBe('Not Evaluated')
    expect(level(pageOf('a.html', [], 'cannot fetch: HTTP 500'))).toBe('Not Evaluated')
    expect(level(pageOf('a.html', []))).toBe('Not Applicable')
    expect(level()).toBe('Not Applicable')
  })

  test('a book is a non-web document: 10.1.1.1 has its own row and counts; Not Evaluated says VPAT allows it only for AAA', () => {
    const text = conformanceMarkdown(
      reportOf([
        pageOf('site/a.html', ['ok', 'ok']),
        pageOf('books/moby.epub!OEBPS/ch1.xhtml', ['missing', 'ok', 'ok']),
        pageOf('notes/n.ipynb', ['not_checked']),
      ]),
      { inputs: ['site', 'books/moby.epub'], reviewLog: { included: false, reason: 'no key was given' } },
    )
    expect(text).toMatch(/\| 9\.1\.1\.1 Non-text content \(web pages: WCAG 2\.1 SC 1\.1\.1\) \| Supports \| Automated audit of 1 web page: 2 images, 2 with/u)
    expect(text).toMatch(
      /\| 10\.1\.1\.1 Non-text content \(non-web documents: EPUB books, notebooks\) \| Partially Supports \| Automated audit of 2 non-web documents: 4 images, 2 with an acceptable text alternative[^|]*1 image on 1 page lacks one: 1 without alt text\. 1 image could not be checked\./u,
    )
    expect(text).toContain('EN 301 549 V3.2.1 clause 9.1.1.1 and 10.1.1.1), this content is partially compliant')
    const unevaluated = conformanceMarkdown(reportOf([pageOf('a.html', ['not_checked'])]), { inputs: [], reviewLog: { included: false, reason: 'x' } })
    expect(unevaluated).toContain('| Not Evaluated |')
    expect(unevaluated).toContain('VPAT 2.5 allows Not Evaluated only for Level AAA criteria: this row needs a manual evaluation.')
  })

  test('summary: coverage counts good and decorative among the images not ignored; ignored images the report only counts stay out of it', () => {
    const report = reportOf([pageOf('a.html', ['ok', 'decorative', 'missing', 'ignored'])])
    const summary = summaryOf(
      report,
      { inputs: ['https://user:secret@docs.example.org/'], check: true },
      { included: false, reason: 'x', organisation: null, entries: 0 },
    )
    expect(summary.totals).toMatchObject({ images: 4, acceptable: 2, coverage: 0.6667 })
    expect(summary.totals.findings).toMatchObject({ ok: 1, decorative: 1, missing: 1, ignored: 1 })
    expect(summary.run.inputs).toEqual(['https://docs.example.org/'])
    const counted = reportOf([pageOf('a.html', ['ok', 'missing'])])
    ;(counted.totals as Record<string, number>).ignored = 7
    const withIgnored = summaryOf(counted, { inputs: [], check: true }, { included: false, reason: 'x', organisation: null, entries: 0 })
    expect(withIgnored.totals).toMatchObject({ images: 2, coverage: 0.5 })
    expect(withIgnored.totals.findings.ignored).toBe(7)
  })
})
