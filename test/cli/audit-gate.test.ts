// `alttext audit --check` and `--sarif`, the CI gate: exit codes 0/1, nothing sent
// to the service (no model call, no credit, no request at all) and no service needed; SARIF 2.1.0 that
// validates against the official schema, with each image's line and column right on a multi-line page.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Ajv from 'ajv-draft-04'
import addFormats from 'ajv-formats'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { REPO_ROOT } from '../support/process'
import { audit, MODEL, readJson, siteCopy } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

/** The OASIS SARIF 2.1.0 schema (errata 01, the OASIS Standard's), draft-04 JSON Schema. */
const sarifSchema = readJson(join(REPO_ROOT, 'test', 'fixtures', 'sarif', 'sarif-schema-2.1.0.json'))
const ajv = new Ajv({ allErrors: true, strict: false })
addFormats(ajv)
const validateSarif = ajv.compile(sarifSchema)

/** A loopback server that stands in for the service and counts every request it gets. */
function countingService() {
  let count = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      count++
      return Response.json({ error: { code: 'not_found', message: 'no', docs: '' } }, { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, count: () => count, stop: () => server.stop(true) }
}

const CLEAN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Clean</title></head>
<body>
<img src="kite.jpg" alt="Two children launch a red kite on a windy beach.">
<img src="rule.png" alt="" role="presentation">
</body></html>
`

describe('--check', () => {
  test('exit 1 when images need work, with a line per image and a summary; nothing reaches the service; no fixed copy, no report unless asked', async () => {
    const copy = siteCopy()
    const counting = countingService()
    try {
      const usage = async () => (await env.service.api.get('/api/usage', env.key)).body
      const calm = [await usage(), await usage()]
      const step = calm[1].api_calls_today - calm[0].api_calls_today
      const before = await usage()

      // Against the real service (URL and key set, as in CI with secrets) ...
      const real = await audit(['--check', 'site'], client, copy.dir)
      // ... and against a counting stand-in: not one request of any kind.
      const counted = await audit(['--check', 'site'], { ALTTEXT_URL: counting.url, ALTTEXT_API_KEY: 'alt_unused' }, copy.dir)

      const after = await usage()
      expect(env.ollama.chatRequests()).toHaveLength(0)
      expect(after.credits.used).toBe(before.credits.used)
      expect(after.api_calls_today - before.api_calls_today).toBe(step)
      expect(counting.count()).toBe(0)

      for (const res of [real, counted]) {
        expect(res.code).toBe(1)
        expect(res.stdout).toContain('site/index.html:9:15: missing: no alt attribute (img/logo.png)')
        expect(res.stdout).toContain('site/about.html:7:1: poor: starts with a redundant phrase ("image of") (img/kite.jpg)')
        expect(res.stdout).toContain('3 pages, 14 images: 10 need alt text (6 missing, 0 empty, 4 poor), 1 good, 3 decorative')
        expect(res.stdout.trimEnd().split('\n').at(-1)).toBe('check failed: 10 images need alt text or fixing')
        expect(res.stdout).not.toContain('suggested')
      }
      // No HTML report unless --report, no copies: the checkout is left as it was.
      expect(readdirSync(copy.dir)).toEqual(['site'])
    } finally {
      counting.stop()
      copy.cleanup()
    }
  }, 30_000)

  test('exit 0 when no image needs work, with no service at all and no key', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.dir, 'clean.html'), CLEAN_PAGE)
      // Port 9 (discard) on loopback: nothing listens; the gate never tries.
      const res = await audit(['--check', 'clean.html'], { ALTTEXT_URL: 'http://127.0.0.1:9' }, copy.dir)
      expect(res.stderr).not.toContain('alttext audit:')
      expect(res.code).toBe(0)
      expect(res.stdout.trimEnd().split('\n').at(-1)).toBe('check passed: no image needs alt text (2 images on 1 page)')
      const dirty = await audit(['--check', '-q', 'site/blog/post.html'], {}, copy.dir)
      expect(dirty.code).toBe(1)
      // -q: only the summary lines.
      expect(dirty.stdout).not.toContain('post.html:8:1')
      expect(dirty.stdout).toContain('check failed: 2 images need alt text or fixing')
    } finally {
      copy.cleanup()
    }
  })

  test('alt="" passes the gate (decorative, as axe and html-validate take it) unless a link or button is left without a name; a named role=img\'s children pass', async () => {
    const copy = siteCopy()
    try {
      // The WAI tutorial's decorative images, and a complex graphic named by aria-labelledby (w3c/wcag working examples).
      writeFileSync(
        join(copy.dir, 'decorative.html'),
        [
          '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Decorative</title></head><body>',
          '<p><img src="dove.png" alt="">Dove of peace, and the text beside it says so.</p>',
          '<a href="/"><img src="home.png" alt=""> Home</a>',
          '<div role="img" aria-labelledby="chart-desc">',
          '  <img src="bar-1.png" alt="">',
          '  <img src="bar-2.png" alt="">',
          '</div>',
          '<p id="chart-desc">Sales rose each quarter.</p>',
          '</body></html>',
        ].join('\n'),
      )
      const pass = await audit(['--check', 'decorative.html', '--sarif', 'pass.sarif'], {}, copy.dir)
      expect(pass.code).toBe(0)
      expect(pass.stdout).toContain('1 page, 4 images: 0 need alt text (0 missing, 0 empty, 0 poor), 0 good, 4 decorative')
      expect(readJson(join(copy.dir, 'pass.sarif')).runs[0].results).toEqual([])

      writeFileSync(
        join(copy.dir, 'unnamed.html'),
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>U</title></head><body>\n<a href="/"><img src="home.png" alt=""></a>\n<button type="submit"><img src="search.png" alt=""></button>\n</body></html>\n',
      )
      const fail = await audit(['--check', 'unnamed.html', '--sarif', 'fail.sarif'], {}, copy.dir)
      expect(fail.code).toBe(1)
      expect(fail.stdout).toContain('unnamed.html:2:13: empty: empty alt on the only content of a link: the link has no name (home.png)')
      expect(fail.stdout).toContain('unnamed.html:3:23: empty: empty alt on the only content of a button: the button has no name (search.png)')
      const log = readJson(join(copy.dir, 'fail.sarif'))
      expect(validateSarif(log)).toBe(true)
      expect(log.runs[0].results.map((result: any) => [result.ruleId, result.level])).toEqual([
        ['alt-empty', 'warning'],
        ['alt-empty', 'warning'],
      ])
    } finally {
      copy.cleanup()
    }
  })

  test('a person\'s alt longer than --max-length is "long": kept, reported as a SARIF note, and no gate failure', async () => {
    const copy = siteCopy()
    try {
      const expert =
        `A line chart of the harbour's water level over one day. ${'It rises from 1.2 m at midnight to 4.8 m at noon, then falls again. '.repeat(8)}`.trim()
      writeFileSync(
        join(copy.dir, 'long.html'),
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tides</title></head><body>\n<img src="tide.png" alt="${expert}">\n</body></html>\n`,
      )
      const res = await audit(
        ['--check', 'long.html', '--sarif', 'long.sarif', '--json', 'long.json', '--csv', 'long.csv', '-o', 'long-report.html'],
        {},
        copy.dir,
      )
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('1 page, 1 image: 0 need alt text (0 missing, 0 empty, 0 poor), 0 good, 1 long (kept), 0 decorative')
      expect(res.stdout.trimEnd().split('\n').at(-1)).toBe(
        'check passed: no image needs alt text (1 image on 1 page); 1 alt text over --max-length kept (see the report)',
      )
      const log = readJson(join(copy.dir, 'long.sarif'))
      expect(validateSarif(log)).toBe(true)
      expect(log.runs[0].results).toHaveLength(1)
      expect(log.runs[0].results[0]).toMatchObject({ ruleId: 'alt-long', level: 'note' })
      expect(log.runs[0].results[0].message.text).toContain(`${[...expert].length} characters, over --max-length 125: kept; a long description may suit it`)
      expect(readJson(join(copy.dir, 'long.json')).totals).toMatchObject({ long: 1, poor: 0, needing_alt: 0 })
      expect(readFileSync(join(copy.dir, 'long.csv'), 'utf8')).toContain(',long,')
      const report = readFileSync(join(copy.dir, 'long-report.html'), 'utf8')
      expect(report).toContain('<span class="status s-long">Long alt</span>')
      expect(report).toContain('<li class="s-long"><span class="count">1</span> long alt</li>')
    } finally {
      copy.cleanup()
    }
  })

  test('a page that cannot be read fails the gate: unchecked is not passed', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.dir, 'clean.html'), CLEAN_PAGE)
      const res = await audit(['--check', 'clean.html', 'http://127.0.0.1:9/page.html'], {}, copy.dir)
      expect(res.code).toBe(1)
      expect(res.stdout).toMatch(/^http:\/\/127\.0\.0\.1:9\/page\.html: cannot be checked: cannot fetch/m)
      expect(res.stdout).toContain('check failed: 0 images need alt text or fixing; 1 page could not be read')
      // In SARIF: no result for it, but a notification, and the run not successful.
      const sarif = await audit(['--check', '-q', 'clean.html', 'http://127.0.0.1:9/page.html', '--sarif', 'r.sarif'], {}, copy.dir)
      expect(sarif.code).toBe(1)
      const log = readJson(join(copy.dir, 'r.sarif'))
      expect(validateSarif(log)).toBe(true)
      expect(log.runs[0].results).toEqual([])
      expect(log.runs[0].invocations[0].executionSuccessful).toBe(false)
      expect(log.runs[0].invocations[0].toolExecutionNotifications[0]).toMatchObject({
        level: 'error',
        message: { text: expect.stringMatching(/^http:\/\/127\.0\.0\.1:9\/page\.html could not be checked: cannot fetch/) },
        locations: [{ physicalLocation: { artifactLocation: { uri: 'http://127.0.0.1:9/page.html' } } }],
      })
    } finally {
      copy.cleanup()
    }
  })

  test('with --report, --json and --sarif those are still written', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['--check', 'site', '-o', 'r.html', '--json', 'r.json', '--sarif', 'r.sarif'], {}, copy.dir)
      expect(res.code).toBe(1)
      expect(readFileSync(join(copy.dir, 'r.html'), 'utf8')).toContain('<title>Alt text audit: 10 of 14 images need alt text</title>')
      expect(readJson(join(copy.dir, 'r.json')).totals).toMatchObject({ needing_alt: 10, suggested: 0 })
      expect(readJson(join(copy.dir, 'r.sarif')).runs[0].results).toHaveLength(10)
      expect(existsSync(join(copy.dir, 'alttext-audit.html'))).toBe(false)
    } finally {
      copy.cleanup()
    }
  })

  const refusals: [string, string[], RegExp][] = [
    ['--fix', ['--fix', 'out'], /--check sends nothing and writes no copy: it cannot go with --fix/],
    ['--fix and --overwrite', ['--fix', 'out', '--overwrite'], /cannot go with --fix, --overwrite/],
    ['--review', ['--review', 'r.csv'], /cannot go with --review/],
  ]
  for (const [name, args, message] of refusals) {
    test(`--check with ${name} is a usage error (exit 2), nothing sent`, async () => {
      const copy = siteCopy()
      try {
        const res = await audit(['--check', 'site', ...args], client, copy.dir)
        expect(res.code).toBe(2)
        expect(res.stderr).toMatch(message)
        expect(env.ollama.chatRequests()).toHaveLength(0)
        expect(existsSync(join(copy.dir, 'out'))).toBe(false)
      } finally {
        copy.cleanup()
      }
    })
  }
})

describe('--sarif', () => {
  test('the fixture site: valid SARIF 2.1.0, a rule per kind, a result per image that needs work', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['--check', 'site', '--sarif', 'out/audit.sarif'], {}, copy.dir)
      expect(res.code).toBe(1)
      const log = readJson(join(copy.dir, 'out', 'audit.sarif'))
      const valid = validateSarif(log)
      expect(validateSarif.errors ?? []).toEqual([])
      expect(valid).toBe(true)
      expect(log.version).toBe('2.1.0')
      expect(log.runs).toHaveLength(1)
      const run = log.runs[0]
      expect(run.tool.driver).toMatchObject({ name: 'alttext audit', version: expect.stringMatching(/^\d+\.\d+\.\d+/) })
      const ruleIds = run.tool.driver.rules.map((rule: any) => rule.id)
      expect(ruleIds).toEqual([
        'alt-missing',
        'alt-empty',
        'alt-poor',
        'alt-judged-needs-fix',
        'alt-judged-keyword-stuffed',
        'alt-judged-decorative',
        'alt-long',
      ])
      // GitHub Advanced Security wants help on every rule (the SARIF Multitool's GH2012).
      for (const rule of run.tool.driver.rules) {
        expect(rule.help.text).toStartWith(rule.fullDescription.text)
        expect(rule.help.markdown).toContain('**How to fix:**')
        expect(rule.helpUri).toStartWith('https://www.w3.org/WAI/WCAG22/')
      }
      expect(run.columnKind).toBe('utf16CodeUnits')
      expect(run.invocations).toEqual([{ executionSuccessful: true }])
      const count = (id: string) => run.results.filter((result: any) => result.ruleId === id).length
      expect([count('alt-missing'), count('alt-empty'), count('alt-poor')]).toEqual([6, 0, 4])
      for (const result of run.results) {
        expect(ruleIds[result.ruleIndex]).toBe(result.ruleId)
        expect(result.partialFingerprints['alttextImage/v1']).toMatch(/^[0-9a-f]{32}$/)
      }
      // Every result has its own fingerprint.
      const fingerprints = run.results.map((result: any) => result.partialFingerprints['alttextImage/v1'])
      expect(new Set(fingerprints).size).toBe(fingerprints.length)
      const logo = run.results.find(
        (result: any) =>
          result.locations[0].physicalLocation.artifactLocation.uri === 'site/index.html' && result.locations[0].physicalLocation.region.startLine === 9,
      )
      expect(logo).toMatchObject({
        level: 'error',
        message: { text: 'The image img/logo.png has no alt.' },
        locations: [{ physicalLocation: { artifactLocation: { uri: 'site/index.html' }, region: { startLine: 9, startColumn: 15 } } }],
      })
      expect(run.results.map((result: any) => result.locations[0].physicalLocation.artifactLocation.uri)).toContain('site/blog/post.html')
    } finally {
      copy.cleanup()
    }
  })

  test('lines and columns on a multi-line page: UTF-16 columns after non-ASCII text, two tags on a line, CRLF; paths URI-encoded', async () => {
    const copy = siteCopy()
    try {
      mkdirSync(join(copy.dir, 'docs', 'a page'), { recursive: true })
      const page = [
        '<!doctype html>',
        '<html lang="de"><head><meta charset="utf-8"><title>Köln</title></head><body>\r',
        '<p>Café ☕ 😀 <img src="a.png"> und <img src="b.png" alt="IMG_0001.JPG"></p>',
        '',
        '\t<figure>',
        '\t\t<img',
        '\t\t  src="c.png">',
        '</figure></body></html>',
      ].join('\n')
      writeFileSync(join(copy.dir, 'docs', 'a page', 'ü#1.html'), page)
      const res = await audit(['--check', 'docs', '--sarif', '-'], {}, copy.dir)
      expect(res.code).toBe(1)
      const log = JSON.parse(res.stdout)
      expect(validateSarif(log)).toBe(true)
      const places = log.runs[0].results.map((result: any) => {
        const { artifactLocation, region } = result.locations[0].physicalLocation
        return [artifactLocation.uri, region.startLine, region.startColumn, result.ruleId]
      })
      // "<p>Café ☕ 😀 " is 13 UTF-16 code units ("😀" is two): the first <img> starts at column 14.
      const prefix = '<p>Café ☕ 😀 '
      const second = `${prefix}<img src="a.png"> und `
      expect(places).toEqual([
        ['docs/a%20page/%C3%BC%231.html', 3, prefix.length + 1, 'alt-missing'],
        ['docs/a%20page/%C3%BC%231.html', 3, second.length + 1, 'alt-poor'],
        ['docs/a%20page/%C3%BC%231.html', 6, 3, 'alt-missing'],
      ])
      expect(prefix.length).toBe(13)
      // The summary went to stderr: stdout is the SARIF alone.
      expect(res.stderr).toContain('check failed: 3 images need alt text or fixing')
    } finally {
      copy.cleanup()
    }
  })

  test('a run with suggestions puts them in the messages; fingerprints stay when lines move', async () => {
    const copy = siteCopy()
    try {
      const first = await audit(['site/index.html', '-q', '-o', 'r.html', '--sarif', 'one.sarif'], client, copy.dir)
      expect(first.code).toBe(0)
      const one = readJson(join(copy.dir, 'one.sarif'))
      expect(validateSarif(one)).toBe(true)
      expect(one.runs[0].tool.driver.informationUri).toBe('https://github.com/alttext/alttext/blob/main/docs/audit.md')
      const kite = one.runs[0].results.find((result: any) => result.ruleId === 'alt-poor')
      expect(kite.message.text).toBe(
        'The image img/kite.jpg has a poor alt "IMG_2041.JPG": looks like a file name. Suggested: "Two children launch a red kite on a windy beach.".',
      )

      // Three lines added at the top: every line moves, no fingerprint changes.
      const path = join(copy.site, 'index.html')
      writeFileSync(path, `<!-- a -->\n<!-- b -->\n<!-- c -->\n${readFileSync(path, 'utf8')}`)
      const second = await audit(['--check', 'site/index.html', '--sarif', 'two.sarif'], {}, copy.dir)
      expect(second.code).toBe(1)
      const two = readJson(join(copy.dir, 'two.sarif'))
      const prints = (log: any) => log.runs[0].results.map((result: any) => result.partialFingerprints['alttextImage/v1'])
      expect(prints(two)).toEqual(prints(one))
      const lines = (log: any) => log.runs[0].results.map((result: any) => result.locations[0].physicalLocation.region.startLine)
      expect(lines(two)).toEqual(lines(one).map((line: number) => line + 3))
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test("a page author's [text](https://…) in an alt is escaped in the message: SARIF reads it as an embedded link otherwise", async () => {
    const copy = siteCopy()
    try {
      writeFileSync(
        join(copy.dir, 'link.html'),
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>L</title></head><body>\n<img src="a.png" alt="image of [the team](https://evil.example/) \\ here">\n</body></html>\n',
      )
      const res = await audit(['--check', 'link.html', '--sarif', '-'], {}, copy.dir)
      expect(res.code).toBe(1)
      const log = JSON.parse(res.stdout)
      expect(validateSarif(log)).toBe(true)
      const text: string = log.runs[0].results[0].message.text
      expect(text).toContain('"image of \\[the team\\](https://evil.example/) \\\\ here"')
      // No "[" or "]" (nor "\\") is left unescaped: a viewer renders no link.
      expect(text.replace(/\\[\\[\]]/gu, '')).not.toMatch(/[[\]\\]/u)
    } finally {
      copy.cleanup()
    }
  })

  test('a file outside the working directory is a file: URI; two outputs on stdout are refused', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['--check', join(copy.site, 'about.html'), '--sarif', join(copy.dir, 'a.sarif')], {}, REPO_ROOT)
      expect(res.code).toBe(1)
      const log = readJson(join(copy.dir, 'a.sarif'))
      expect(validateSarif(log)).toBe(true)
      expect(log.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri).toBe(`file://${join(copy.site, 'about.html')}`)
      const both = await audit(['--check', 'site', '--sarif', '-', '--json', '-'], {}, copy.dir)
      expect(both.code).toBe(2)
      expect(both.stderr).toContain('only one of --report, --json, --csv and --sarif can write to stdout (-)')
    } finally {
      copy.cleanup()
    }
  })
})
