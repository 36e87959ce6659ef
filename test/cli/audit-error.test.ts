// `alttext audit` when things go wrong: usage errors (exit 2, nothing sent), a refused key or an
// unreachable service (exit 2), a page or an image that cannot be read (exit 1, said in the report), and
// the run stopping when credits run out.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { audit, MODEL, pageServer, readJson, siteCopy } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const chats = () => env.ollama.requests.filter((request) => request.path === '/api/chat')

describe('usage errors exit 2 and send nothing', () => {
  const cases: [string, string[], RegExp][] = [
    ['no arguments', [], /give at least one file \(HTML, Markdown, EPUB\), directory or page URL/],
    ['an unknown option', ['site', '--frobnicate'], /unknown option '--frobnicate'/],
    ['a bad --crawl', ['site', '--crawl', 'deep'], /--crawl must be a whole number/],
    ['a bad --max-length', ['site', '--max-length', '5'], /--max-length must be at least 20/],
    ['a bad --language', ['site', '--language', 'klingon'], /--language unknown language "klingon"|--language is not a well-formed BCP 47/],
    ['--overwrite without --fix', ['site', '--overwrite'], /--overwrite only matters with --fix or --review/],
    ['two reports on stdout', ['site', '--json', '-', '--csv', '-'], /only one of --report, --json, --csv and --sarif/],
    ['a missing path', ['no-such-site'], /no such file or directory: no-such-site/],
    ['a folder without HTML', ['empty'], /no HTML, Markdown or EPUB files found in empty/],
    ['--fix into the site itself', ['site', '--fix', 'site'], /the site's own folder: the copies would replace the originals/],
  ]
  for (const [name, args, message] of cases) {
    test(name, async () => {
      const copy = siteCopy()
      mkdirSync(join(copy.dir, 'empty'))
      try {
        const res = await audit(args, client, copy.dir)
        expect(res.stderr).toMatch(message)
        expect(res.code).toBe(2)
        expect(res.stderr).toContain('alttext audit --help')
        expect(chats()).toHaveLength(0)
        expect(existsSync(join(copy.dir, 'alttext-audit.html'))).toBe(false)
      } finally {
        copy.cleanup()
      }
    })
  }

  test('--help exits 0 and lists the options', async () => {
    const res = await audit(['--help'])
    expect(res.code).toBe(0)
    for (const flag of ['--fix OUTDIR', '--overwrite', '--dry-run', '--crawl DEPTH', '--max-pages N', '--json FILE', '--csv FILE', 'ALTTEXT_API_KEY']) {
      expect(res.stdout).toContain(flag)
    }
  })
})

describe('the service', () => {
  test('no key: exit 2 before anything is read or sent', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['site'], { ALTTEXT_URL: env.service.url }, copy.dir)
      expect(res.code).toBe(2)
      expect(res.stderr).toContain('ALTTEXT_API_KEY')
    } finally {
      copy.cleanup()
    }
  })

  test('a refused key: exit 2, nothing sent', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['site'], { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: 'sk_live_not_a_real_key_000000000000' }, copy.dir)
      expect(res.code).toBe(2)
      expect(res.stderr).toMatch(/answered 401/)
      expect(res.stderr).toContain('Nothing was sent')
      expect(chats()).toHaveLength(0)
    } finally {
      copy.cleanup()
    }
  })

  test('an unreachable service: exit 2', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['site'], { ALTTEXT_URL: 'http://127.0.0.1:9', ALTTEXT_API_KEY: env.key }, copy.dir)
      expect(res.code).toBe(2)
      expect(res.stderr).toContain('cannot reach http://127.0.0.1:9')
    } finally {
      copy.cleanup()
    }
  })
})

describe('pages and images that fail', () => {
  test('an image file that does not exist is not checked (listed, no failure, not sent); an image without src: the others still done, the report says why', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.site, 'broken.html'), '<html><img src="img/kite.jpg"><img src="img/gone.png"><img alt=""></html>')
      const res = await audit(['site/broken.html', '--json', 'r.json', '--fix', 'fixed', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(0)
      const images = readJson(join(copy.dir, 'r.json')).pages[0].images
      expect(images[0]).toMatchObject({ status: 'missing', error: null, not_checked: null, written: true })
      expect(images[1]).toMatchObject({ status: 'missing', error: null, not_checked: 'site/img/gone.png does not exist', written: null })
      expect(images[2]).toMatchObject({ status: 'decorative', error: null }) // alt="": nothing to ask, src or not
      expect(res.stdout).toContain('; 1 not checked')
      expect(res.stdout).toContain('1 suggested (0 decorative), 0 failed')
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test('a page URL that answers 404 or is no HTML: exit 1, the page marked in the report, the rest done', async () => {
    const pages = pageServer({ '/ok': '<html><p>fine</p></html>', '/data': () => Response.json({ not: 'html' }) })
    const copy = siteCopy()
    try {
      const res = await audit([`${pages.url}/ok`, `${pages.url}/gone`, `${pages.url}/data`, '--json', 'r.json', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(1)
      const report = readJson(join(copy.dir, 'r.json'))
      const errors = Object.fromEntries(report.pages.map((p: any) => [new URL(p.page).pathname, p.error]))
      expect(errors).toEqual({ '/ok': null, '/gone': 'HTTP 404', '/data': 'not an HTML page (application/json)' })
      expect(report.totals.pages_failed).toBe(2)
    } finally {
      pages.stop()
      copy.cleanup()
    }
  })

  test('credits running out stop the run: the rest is marked not asked, exit 1, the report still written', async () => {
    const poor = await startAltTextEnv({ ollama: MODEL, env: { ALTTEXT_FREE_CREDITS: '2' } })
    const copy = siteCopy()
    try {
      const res = await audit(['site', '--json', 'r.json', '-o', 'r.html', '-c', '1'], { ALTTEXT_URL: poor.service.url, ALTTEXT_API_KEY: poor.key }, copy.dir)
      expect(res.code).toBe(1)
      expect(res.stderr).toContain('stopping: no credit left this period')
      const report = readJson(join(copy.dir, 'r.json'))
      expect(report.totals.suggested).toBe(2)
      const errors = report.pages
        .flatMap((p: any) => p.images)
        .map((i: any) => i.error)
        .filter(Boolean)
      expect(errors.some((e: string) => e.startsWith('quota_exceeded'))).toBe(true)
      expect(errors.filter((e: string) => e === 'not asked: no credit left this period').length).toBeGreaterThan(0)
      expect(existsSync(join(copy.dir, 'r.html'))).toBe(true)
    } finally {
      copy.cleanup()
      await poor.stop()
    }
  }, 30_000)
})
