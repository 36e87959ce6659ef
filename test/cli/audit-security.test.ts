// `alttext audit` and hostile or careless input: a crawl never leaves its origin or the page limit, page
// text cannot inject markup into the report, spreadsheets do not run CSV cells, the key is never
// printed or written, and --fix writes nowhere but OUTDIR.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makeJpeg, makePng } from '../support/images'
import { audit, MODEL, pageServer, REPLIES, readJson, recordingProxy, siteCopy } from './audit-support'

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
      expect(res.stderr).toContain('; 1 link not followed (--max-pages)')
    } finally {
      other.stop()
      site.stop()
      copy.cleanup()
    }
  })
})

describe('local images stay inside the site root', () => {
  test('encoded ../, plain ../ and symbolic links out of the root are refused and said so; nothing outside is read or sent', async () => {
    const copy = siteCopy()
    const proxy = recordingProxy(env.service.url)
    try {
      // A picture beside the site, not in it: no src on a page of the site may send it.
      const secret = makePng(123, 45)
      mkdirSync(join(copy.dir, 'secret'))
      writeFileSync(join(copy.dir, 'secret', 'secret.png'), secret)
      symlinkSync(join(copy.dir, 'secret', 'secret.png'), join(copy.site, 'img', 'linked.png'))
      symlinkSync(join(copy.dir, 'secret'), join(copy.site, 'shared'))
      // A link that stays inside the root is followed.
      symlinkSync(join(copy.site, 'img', 'kite.jpg'), join(copy.site, 'img', 'alias.jpg'))
      const up = '%2e%2e%2f'.repeat(12)
      writeFileSync(
        join(copy.site, 'leak.html'),
        [
          '<html lang="en"><body>',
          '<img src="/%2e%2e%2f%2e%2e%2fetc%2fpasswd">',
          `<img src="/${up}etc%2fpasswd">`,
          '<img src="/%2e%2e%2fsecret%2fsecret.png">',
          '<img src="..%2Fsecret%2Fsecret.png">',
          '<img src="../../../secret/secret.png">',
          '<img src="img/linked.png">',
          '<img src="/shared/secret.png">',
          '<img src="img/alias.jpg">',
          '</body></html>',
        ].join('\n'),
      )
      const res = await audit(['site/leak.html', '--json', 'r.json', '-o', 'r.html'], { ALTTEXT_URL: proxy.url, ALTTEXT_API_KEY: env.key }, copy.dir)
      expect(res.code).toBe(1)

      expect(proxy.sent(secret)).toBe(false)
      expect(proxy.sent(readFileSync('/etc/passwd').subarray(0, 64))).toBe(false)
      expect(env.ollama.requests.flatMap((r) => r.images).some((image) => image.width === 123)).toBe(false)

      const images = readJson(join(copy.dir, 'r.json')).pages[0].images
      const refused = (index: number) => images[index].error as string | null
      for (const index of [0, 1, 2, 3]) {
        expect(refused(index)).toMatch(/outside the site root/)
        expect(images[index].suggestion).toBeNull()
      }
      // The URL's own dot segments stop at the root: this one names a file in the site, which is not there.
      expect(refused(4)).not.toBeNull()
      expect(images[4].suggestion).toBeNull()
      for (const index of [5, 6]) {
        expect(refused(index)).toMatch(/symbolic link .*outside the site root/)
        expect(images[index].suggestion).toBeNull()
      }
      expect(images[7]).toMatchObject({ error: null, suggestion: { alt: REPLIES[320] } })
      // The report says why, where a person reads it.
      expect(readFileSync(join(copy.dir, 'r.html'), 'utf8')).toContain('outside the site root')
    } finally {
      proxy.stop()
      copy.cleanup()
    }
  }, 30_000)
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
