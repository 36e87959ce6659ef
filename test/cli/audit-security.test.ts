// `alttext audit` and hostile or careless input: a crawl never leaves its origin or the page limit, page
// text cannot inject markup into the report, spreadsheets do not run CSV cells, the key is never
// printed or written, and --fix writes nowhere but OUTDIR.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makeJpeg } from '../support/images'
import { audit, MODEL, pageServer, readJson, siteCopy } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

describe('crawling', () => {
  test('links to another origin are never fetched, whatever the depth; --max-pages caps what crawling adds', async () => {
    const other = pageServer({ '/': '<html><p>other origin</p></html>' })
    const chain: Record<string, string> = {}
    for (let i = 0; i < 10; i++)
      chain[`/p${i}.html`] =
        `<html><a href="/p${i + 1}.html">next</a><a href="${other.url}/">away</a><a href="//${new URL(other.url).host}/">away too</a></html>`
    const site = pageServer({
      '/': `<html><a href="${other.url}/">other</a><a href="/p0.html">chain</a><a href="mailto:a@example.org">mail</a><a href="/photo.jpg">photo</a></html>`,
      ...chain,
    })
    const copy = siteCopy()
    try {
      const res = await audit([`${site.url}/`, '--crawl', '20', '--max-pages', '5', '--dry-run', '--json', 'r.json', '-o', 'r.html'], {}, copy.dir)
      expect(res.code).toBe(0)
      expect(other.total()).toBe(0)
      expect(site.hits('/photo.jpg')).toBe(0)
      const pages = readJson(join(copy.dir, 'r.json')).pages.map((p: any) => new URL(p.page).pathname)
      expect(pages).toEqual(['/', '/p0.html', '/p1.html', '/p2.html', '/p3.html'])
      expect(res.stderr).toContain('links not followed (--max-pages)')
    } finally {
      other.stop()
      site.stop()
      copy.cleanup()
    }
  })
})

describe('hostile pages', () => {
  test('page text and attributes are escaped in the HTML report; CSV cells cannot start a formula', async () => {
    const photo = env.serve(makeJpeg(320, 240, 70))
    const pages = pageServer({
      '/': [
        '<html><title></title><script>alert(1)</script></title>',
        `<img src="${photo}" alt="&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;">`,
        `<img src="${photo}" alt="=HYPERLINK(&quot;http://evil.example/&quot;,&quot;x&quot;)">`,
        '<img src="javascript:alert(3)">',
        '<img src="x.png&quot; onerror=&quot;alert(4)" alt="+cmd">',
      ].join(''),
    })
    const copy = siteCopy()
    try {
      const res = await audit([`${pages.url}/`, '--csv', 'r.csv', '-o', 'r.html'], client, copy.dir)
      const html = readFileSync(join(copy.dir, 'r.html'), 'utf8')
      expect(html).not.toContain('<script')
      expect(html).not.toMatch(/onerror="/)
      expect(html).not.toContain('href="javascript:')
      expect(html).not.toContain('src="javascript:')
      expect(html).toContain('&lt;script&gt;alert(2)&lt;/script&gt;')
      const csv = readFileSync(join(copy.dir, 'r.csv'), 'utf8')
      expect(csv).toContain(`"'=HYPERLINK(""http://evil.example/"",""x"")"`)
      expect(csv).toContain(",'+cmd,")
      expect(csv).not.toMatch(/,=HYPERLINK/)
      // The javascript: image cannot be sent: a failure in the report, not a request.
      expect(res.code).toBe(1)
      expect(csv).toContain('cannot send a javascript: image')
    } finally {
      pages.stop()
      copy.cleanup()
    }
  }, 30_000)

  test('the API key appears in no output and no report', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['site', '--json', 'r.json', '--csv', 'r.csv', '-o', 'r.html', '--fix', 'fixed'], client, copy.dir)
      expect(res.code).toBe(0)
      expect(res.stdout + res.stderr).not.toContain(env.key)
      for (const file of ['r.json', 'r.csv', 'r.html']) expect(readFileSync(join(copy.dir, file), 'utf8')).not.toContain(env.key)
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test('--fix writes under OUTDIR only, even for page URLs with dot segments', async () => {
    const pages = pageServer({ '/a/b.html': '<html><p>x</p></html>', '/escape.html': '<html><p>x</p></html>' })
    const copy = siteCopy()
    try {
      const res = await audit(
        [`${pages.url}/a/%2e%2e/%2e%2e/escape.html`, `${pages.url}/a/..%2fb.html`, '--dry-run', '--fix', 'out/fixed', '-o', 'out/r.html'],
        {},
        copy.dir,
      )
      const outside = readdirSync(copy.dir).sort()
      expect(outside).toEqual(['out', 'site'])
      expect(readdirSync(join(copy.dir, 'out')).sort()).toEqual(['fixed', 'r.html'])
      expect([0, 1]).toContain(res.code)
    } finally {
      pages.stop()
      copy.cleanup()
    }
  })
})
