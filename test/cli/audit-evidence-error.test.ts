// `--evidence DIR` and `--diff FILE` refused before any page is read (a folder that is a file or cannot be
// written, a --diff file that is no summary), and a review log that cannot be read: the pack is written
// and says why (a key the service refuses, a role that may not read the activity log), never the key.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseCsv } from '../../src/cli/shared/csv'
import { startTestService, type TestService } from '../support/service'
import { audit, readJson, siteCopy } from './audit-support'

let service: TestService

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
})
afterAll(() => service.stop())

const usageError = (res: { code: number; stderr: string }, message: string) => {
  expect(res.stderr).toContain(message)
  expect(res.stderr).toContain('Run `alttext audit --help` for the options.')
  expect(res.code).toBe(2)
}

describe('--evidence DIR refused before anything is read', () => {
  test('a file where the folder should be, a folder under a file, an empty name; and --apply takes neither flag', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.dir, 'taken'), 'a file')
      usageError(await audit(['--check', 'site', '--evidence', 'taken', '-o', 'r.html'], {}, copy.dir), '--evidence taken is a file, not a folder')
      usageError(
        await audit(['--check', 'site', '--evidence', 'taken/pack', '-o', 'r.html'], {}, copy.dir),
        '--evidence taken/pack: cannot write there (ENOTDIR)',
      )
      usageError(await audit(['--check', 'site', '--evidence', ''], {}, copy.dir), '--evidence needs a folder name')
      usageError(await audit(['--check', 'site', '--diff', '-'], {}, copy.dir), '--diff needs a file name')
      usageError(await audit(['--apply', 'review.csv', '--in-place', '--evidence', 'pack'], {}, copy.dir), 'cannot go with --evidence')
      // Nothing was read, so no report either.
      expect(existsSync(join(copy.dir, 'r.html'))).toBe(false)
      expect(readFileSync(join(copy.dir, 'taken'), 'utf8')).toBe('a file')
    } finally {
      copy.cleanup()
    }
  })

  test.skipIf(process.getuid?.() === 0)('a folder without write permission', async () => {
    const copy = siteCopy()
    try {
      mkdirSync(join(copy.dir, 'locked'))
      chmodSync(join(copy.dir, 'locked'), 0o500)
      usageError(await audit(['--check', 'site', '--evidence', 'locked'], {}, copy.dir), '--evidence locked: cannot write there (EACCES)')
      chmodSync(join(copy.dir, 'locked'), 0o700)
    } finally {
      copy.cleanup()
    }
  })
})

describe('--diff FILE that is not a summary', () => {
  test('missing, not JSON, JSON of another kind, another version, a broken field: exit 2, nothing read', async () => {
    const copy = siteCopy()
    try {
      const good = join(copy.dir, 'good')
      const first = await audit(['--check', 'site', '--evidence', 'good', '-q'], {}, copy.dir)
      expect(first.code).toBe(1)
      const summary = readJson(join(good, 'summary.json'))
      const files: Record<string, string> = {
        'text.json': 'pages: 3',
        'report.json': JSON.stringify({ tool: 'alttext audit', totals: {}, pages: [] }),
        'v2.json': JSON.stringify({ ...summary, version: 2 }),
        'broken.json': JSON.stringify({ ...summary, totals: { ...summary.totals, images: -1 } }),
        'null.json': 'null',
      }
      for (const [name, text] of Object.entries(files)) writeFileSync(join(copy.dir, name), text)
      const cases: [string, string][] = [
        ['absent.json', '--diff absent.json: cannot read: ENOENT'],
        ['text.json', '--diff text.json: not JSON: give the summary.json of an earlier --evidence run'],
        ['report.json', '--diff report.json: not an alttext audit summary (no "format": "alttext-audit-summary")'],
        ['null.json', '--diff null.json: not an alttext audit summary'],
        ['v2.json', '--diff v2.json: summary version 2; this alttext reads version 1'],
        ['broken.json', '--diff broken.json: not a valid summary: totals.images:'],
        ['good', '--diff good: cannot read: EISDIR'],
      ]
      for (const [file, message] of cases) {
        const res = await audit(['--check', 'site', '--diff', file, '-o', 'r.html'], {}, copy.dir)
        usageError(res, message)
        expect(res.stdout).toBe('')
      }
      expect(existsSync(join(copy.dir, 'r.html'))).toBe(false)
    } finally {
      copy.cleanup()
    }
  })
})

describe('a review log that cannot be read', () => {
  test('a key the service does not know: the pack is written and says the key was refused; the key is nowhere in it', async () => {
    const copy = siteCopy()
    try {
      const key = `alt_${'0f'.repeat(32)}`
      const res = await audit(['--check', 'site', '--evidence', 'pack'], { ALTTEXT_URL: service.url, ALTTEXT_API_KEY: key }, copy.dir)
      // The gate's verdict is the lint's: the review log is evidence, not a condition of the gate.
      expect(res.code).toBe(1)
      expect(res.stdout).toContain('review log: not included: the service refused the key (401 ')
      const pack = join(copy.dir, 'pack')
      expect(readdirSync(pack).sort()).toEqual(['conformance.md', 'findings.csv', 'report.html', 'review-log.json', 'summary.json'])
      const log = readJson(join(pack, 'review-log.json'))
      expect(log).toMatchObject({ included: false, entries: [] })
      expect(log.reason).toMatch(/^the service refused the key \(401 /u)
      expect(readJson(join(pack, 'summary.json')).review_log.included).toBe(false)
      expect(readFileSync(join(pack, 'conformance.md'), 'utf8')).toContain('Human review: no review log is included: the service refused the key')
      for (const name of readdirSync(pack)) expect(readFileSync(join(pack, name), 'utf8')).not.toContain(key)
      expect(res.stdout + res.stderr).not.toContain(key)
    } finally {
      copy.cleanup()
    }
  })

  test('a key whose role may not read the activity log (403), and a service that answers no JSON: said in the pack', async () => {
    // A loopback stand-in for the service: the key names an organisation, the log is refused to its role.
    const answers: Record<string, () => Response> = {
      '/api/keys': () => Response.json({ keys: [{ prefix: 'alt_0123abcd', org_id: 'org_0123456789abcdef01234567' }] }),
      '/api/orgs/org_0123456789abcdef01234567/activity': () =>
        Response.json({ error: { code: 'forbidden_for_role', message: 'needs admin' } }, { status: 403 }),
    }
    const stand = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (request) => (answers[new URL(request.url).pathname] ?? (() => new Response('<html>not here</html>', { status: 200 })))(),
    })
    const copy = siteCopy()
    try {
      const key = `alt_0123abcd${'9'.repeat(56)}`
      const url = `http://127.0.0.1:${stand.port}`
      const res = await audit(['--check', 'site', '--evidence', 'pack', '-q'], { ALTTEXT_URL: url, ALTTEXT_API_KEY: key }, copy.dir)
      expect(res.code).toBe(1)
      expect(res.stdout).toContain(
        "review log: not included: the key's role cannot read the organisation's activity log: admins and owners only (403 forbidden_for_role)",
      )

      answers['/api/keys'] = () => new Response('<html>a proxy page</html>')
      const again = await audit(['--check', 'site', '--evidence', 'pack2', '-q'], { ALTTEXT_URL: url, ALTTEXT_API_KEY: key }, copy.dir)
      expect(again.code).toBe(1)
      expect(again.stdout).toContain(`review log: not included: ${url}/api/keys answered with no JSON`)
      expect(readFileSync(join(copy.dir, 'pack2', 'conformance.md'), 'utf8')).not.toContain(key)
    } finally {
      stand.stop(true)
      copy.cleanup()
    }
  })
})

describe('hostile text in the pack', () => {
  test('an alt text that a spreadsheet would run as a formula is made inert in findings.csv; markup is escaped in the report', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(
        join(copy.dir, 'evil.html'),
        '<html lang="en"><body><img src="a.png" alt="=HYPERLINK(&quot;https://x.test&quot;,&quot;click&quot;)"><img src="b.png" alt="</td><script>alert(1)</script>"></body></html>',
      )
      const res = await audit(['--check', 'evil.html', '--evidence', 'pack', '-q'], {}, copy.dir)
      expect(res.code).toBeLessThan(2)
      const csv = readFileSync(join(copy.dir, 'pack', 'findings.csv'), 'utf8')
      const [header, ...rows] = parseCsv(csv)
      const alts = rows.map((row) => row[header!.indexOf('current_alt')])
      expect(alts).toContain(`'=HYPERLINK("https://x.test","click")`)
      const html = readFileSync(join(copy.dir, 'pack', 'report.html'), 'utf8')
      expect(html).not.toContain('<script>alert(1)</script>')
      expect(html).toContain('&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;')
    } finally {
      copy.cleanup()
    }
  })
})
