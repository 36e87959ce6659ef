// `alttext audit` run against the real service with the fake model: the fixture site's
// findings and counts, the suggestions, --fix byte for byte, the JSON/CSV/HTML reports, page URLs from a
// loopback server with --crawl, and --overwrite.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { axeViolations, chromiumInstalled, launchChromium } from '../support/browser'
import { makeJpeg } from '../support/images'
import { attr, audit, MODEL, pageServer, REPLIES, readJson, siteCopy } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const chats = () => env.ollama.requests.filter((request) => request.path === '/api/chat')
const promptOf = (request: { rawBody: string }) => JSON.parse(request.rawBody).messages.at(-1).content as string

const byLine = (report: any, page: string) => {
  const found = report.pages.find((p: any) => p.page.endsWith(page))
  return Object.fromEntries(found.images.map((image: any) => [image.line, image]))
}

describe('the fixture site', () => {
  test('a count of one is singular: "1 page, 1 image: 1 needs alt text", in the output and the report', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.dir, 'one.html'), '<html lang="en"><body><img src="site/img/kite.jpg"></body></html>')
      const res = await audit(['one.html', '--dry-run', '-o', 'r.html'], {}, copy.dir)
      expect(res.code).toBe(0)
      expect(res.stderr).toMatch(/^read 1 page in \d+ ms \(parsing \d+ ms\): 1 image, 1 missing, /m)
      expect(res.stdout).toContain('1 page, 1 image: 1 needs alt text (1 missing, 0 empty, 0 poor), 0 good, 0 decorative')
      const html = readFileSync(join(copy.dir, 'r.html'), 'utf8')
      expect(html).toContain('<title>Alt text audit: 1 of 1 image needs alt text</title>')
      expect(html).toContain('1 page, 1 image: 1 needs alt text.')
    } finally {
      copy.cleanup()
    }
  })

  test('the HTML report lists only the pages with images (or an error), and says in one line how many had none', async () => {
    const copy = siteCopy()
    try {
      for (const n of [1, 2, 3]) writeFileSync(join(copy.site, `text-${n}.html`), `<html lang="en"><title>Chapter ${n}</title><p>Call me Ishmael.</p></html>`)
      const res = await audit(['--dry-run', 'site', '-o', 'r.html'], {}, copy.dir)
      expect(res.code).toBe(0)
      const html = readFileSync(join(copy.dir, 'r.html'), 'utf8')
      expect(html).not.toContain('No images.')
      expect(html).not.toContain('text-1.html')
      expect(html).toContain('<p>3 pages without images are not listed.</p>')
      expect(html.match(/<h3 id="page-\d+">/gu)).toHaveLength(3)
      for (const page of ['site/index.html', 'site/about.html', 'site/blog/post.html']) expect(html).toContain(`>${page}</a></h3>`)
    } finally {
      copy.cleanup()
    }
  })

  test('a dry run lists every finding with the right status, sends nothing and needs no key', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['--dry-run', 'site', '--json', 'report.json', '-o', 'report.html'], {}, copy.dir)
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('3 pages, 14 images: 10 need alt text (6 missing, 0 empty, 4 poor), 1 good, 3 decorative')
      expect(res.stderr).toMatch(/read 3 pages in \d+ ms/)
      expect(chats()).toHaveLength(0)
      const report = readJson(join(copy.dir, 'report.json'))
      expect(report.totals).toMatchObject({ pages: 3, images: 14, missing: 6, empty: 0, poor: 4, long: 0, ok: 1, decorative: 3, suggested: 0 })
      const index = byLine(report, 'index.html')
      expect(index[9]).toMatchObject({ status: 'missing', src: 'img/logo.png' })
      expect(index[10]).toMatchObject({ status: 'decorative', alt: '' }) // alt="" in a link with its own text
      expect(index[16]).toMatchObject({ status: 'poor', alt: 'IMG_2041.JPG', issues: ['looks like a file name'] })
      expect(index[19]).toMatchObject({ status: 'missing' })
      expect(index[20]).toMatchObject({ status: 'missing', src: 'img/divider.png' })
      expect(index[21]).toMatchObject({ status: 'ok' })
      expect(index[22]).toMatchObject({ status: 'decorative' }) // role=presentation
      const about = byLine(report, 'about.html')
      expect(about[7]).toMatchObject({ status: 'poor', alt: 'image of kite' })
      expect(about[7].issues[0]).toContain('redundant phrase')
      expect(about[8]).toMatchObject({ kind: 'role-img', attribute: 'aria-label', status: 'missing', src: 'img/team.jpg' })
      expect(about[9]).toMatchObject({ kind: 'input', status: 'missing' })
      expect(about[10]).toMatchObject({ status: 'poor', alt: 'logo.png' })
      const post = byLine(report, 'post.html')
      // alt="" outside a link: the markup for a decorative image (the address still resolves in the root).
      expect(post[7]).toMatchObject({ status: 'decorative', alt: '', resolved: join(copy.site, 'img', 'kite.jpg') }) // "/img/kite.jpg" in the root
      expect(post[8]).toMatchObject({ status: 'poor', alt: 'photo', resolved: join(copy.site, 'img', 'team.jpg') }) // "../img/team.jpg"
      expect(post[9]).toMatchObject({ status: 'missing', resolved: 'data: URL' })
      expect(post[9].src).toMatch(/^data:image\/png;base64,… \(\d+ characters\)$/)
    } finally {
      copy.cleanup()
    }
  })

  test('a run suggests alt text for each image that needs it, with its context, and --fix changes only those attributes', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['site', '--fix', 'fixed', '--json', 'report.json', '--csv', 'report.csv', '-o', 'report.html'], client, copy.dir)
      expect(res.stderr).toContain('10 done, 0 failed')
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('10 suggested (1 decorative), 0 failed')
      expect(res.stdout).toContain('fixed copies: fixed (10 attributes written)')

      const report = readJson(join(copy.dir, 'report.json'))
      expect(report.totals).toMatchObject({ pages: 3, images: 14, needing_alt: 10, suggested: 10, suggested_decorative: 1, failed: 0, written: 10 })
      const index = byLine(report, 'index.html')
      expect(index[9].suggestion).toMatchObject({ alt: REPLIES[64], decorative: false })
      expect(index[16].suggestion.alt).toBe(REPLIES[320])
      expect(index[20].suggestion).toMatchObject({ alt: '', decorative: true, decorative_reason: 'a thin divider line' })
      expect(index[20].written).toBe(true) // the decorative divider gets alt=
      expect(index[21].suggestion).toBeNull() // a good human alt is not even asked about

      // Context: the linked logo is described as its link's target; the kite by its caption.
      const prompts = chats().map(promptOf)
      expect(prompts.some((p) => p.includes('only content of a link to /:'))).toBe(true)
      expect(prompts.some((p) => p.includes('Caption: Our youngest members launch the red kite.'))).toBe(true)
      // Identical requests are sent once: 10 findings, 10 requests here (no two ask the same).
      expect(chats().length).toBe(10)
      // detect_decorative for all but the two link-only images and the role=img one.
      const decorativeAsked = chats().filter((request) => /purely decorative/.test(request.rawBody)).length
      expect(decorativeAsked).toBe(10 - 2 - 1)

      // --fix: each page byte for byte, except exactly the attributes written.
      const expectFixed = (page: string, replacements: [string, string][]) => {
        let expected = readFileSync(join(copy.site, page)).toString('latin1')
        for (const [from, to] of replacements) {
          expect(expected.split(from)).toHaveLength(2)
          expected = expected.replace(from, Buffer.from(to, 'utf8').toString('latin1'))
        }
        const fixed = readFileSync(join(copy.dir, 'fixed', page))
        expect(fixed.equals(Buffer.from(expected, 'latin1'))).toBe(true)
      }
      expectFixed('index.html', [
        ['<img src="img/logo.png" width="64" height="64">', `<img alt=${attr(REPLIES[64]!)} src="img/logo.png" width="64" height="64">`],
        ['alt="IMG_2041.JPG"', `alt=${attr(REPLIES[320]!)}`],
        ['<img src="img/team.jpg" loading=lazy>', `<img alt=${attr(REPLIES[360]!)} src="img/team.jpg" loading=lazy>`],
        ['<img class=rule src=img/divider.png>', '<img alt="" class=rule src=img/divider.png>'],
      ])
      expectFixed('about.html', [
        ['ALT="image of kite"', `ALT=${attr(REPLIES[320]!)}`],
        ['<div role="img"', `<div aria-label=${attr(REPLIES[360]!)} role="img"`],
        ['<input type="image"', `<input alt=${attr(REPLIES[64]!)} type="image"`],
        ["alt='logo.png'", `alt=${attr(REPLIES[64]!)}`],
      ])
      expectFixed('blog/post.html', [
        ['alt="photo"', `alt=${attr(REPLIES[360]!)}`],
        ['<img src="data:', `<img alt=${attr(REPLIES[16]!)} src="data:`],
      ])
      // The originals are untouched.
      expect(readFileSync(join(copy.site, 'index.html'), 'utf8')).toBe(readFileSync(join(import.meta.dir, '..', 'fixtures', 'site', 'index.html'), 'utf8'))

      // CSV: a header and one row per image.
      const csv = readFileSync(join(copy.dir, 'report.csv'), 'utf8').trimEnd().split('\r\n')
      expect(csv[0]).toBe('page,line,kind,src,status,issues,attribute,current_alt,suggested_alt,decorative,suggestion_issues,error,written,not_checked')
      expect(csv).toHaveLength(15)
      expect(csv.find((row) => row.startsWith('site/index.html,16,'))).toContain(`,poor,looks like a file name,alt,IMG_2041.JPG,${REPLIES[320]},false,,,true`)

      // The HTML report names every page and shows old and new alt text.
      const html = readFileSync(join(copy.dir, 'report.html'), 'utf8')
      expect(html).toContain('<title>Alt text audit: 10 of 14 images need alt text</title>')
      for (const page of ['site/index.html', 'site/about.html', 'site/blog/post.html']) expect(html).toContain(`>${page}</a></h3>`)
      expect(html).toContain('<q>IMG_2041.JPG</q>')
      expect(html).toContain('fish &amp; chips')
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test('a second run answers from the service cache: no model call, no credit', async () => {
    const copy = siteCopy()
    try {
      const first = await audit(['site', '-q', '-o', 'a.html'], client, copy.dir)
      expect(first.code).toBe(0)
      const before = (await env.service.api.get('/api/usage', env.key)).body.credits.remaining
      env.ollama.reset()
      const second = await audit(['site', '--json', 'b.json', '-o', 'b.html'], client, copy.dir)
      expect(second.code).toBe(0)
      expect(chats()).toHaveLength(0)
      expect((await env.service.api.get('/api/usage', env.key)).body.credits.remaining).toBe(before)
      expect(
        readJson(join(copy.dir, 'b.json'))
          .pages.flatMap((p: any) => p.images)
          .filter((i: any) => i.suggestion && !i.suggestion.local)
          .every((i: any) => i.suggestion.cached),
      ).toBe(true)
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test('--overwrite also replaces alt text that passes the lint; without it a good alt is kept', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['site/index.html', '--fix', 'fixed', '--overwrite', '--json', 'r.json', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(0)
      const fixed = readFileSync(join(copy.dir, 'fixed', 'index.html'), 'utf8')
      expect(fixed).not.toContain("The club's twelve members")
      expect(fixed).toContain(`<p><img src="img/team.jpg" alt=${attr(REPLIES[360]!)}></p>`)
      expect(byLine(readJson(join(copy.dir, 'r.json')), 'index.html')[21]).toMatchObject({ status: 'ok', written: true })
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test("a person's alt longer than --max-length is never replaced by --fix or proposed by --review without --overwrite", async () => {
    const copy = siteCopy()
    try {
      const expert = `Twelve club members on the north beach, left to right: ${'a member in a red jacket holding a diamond kite, '.repeat(10)}and the club's founder.`
      const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Team</title></head><body>\n<img src="img/team.jpg" alt="${expert}">\n<img src="img/kite.jpg">\n</body></html>\n`
      writeFileSync(join(copy.site, 'team.html'), page)
      const res = await audit(['site/team.html', '--fix', 'fixed', '--json', 'r.json', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('1 page, 2 images: 1 needs alt text (1 missing, 0 empty, 0 poor), 0 good, 1 long (kept), 0 decorative')
      // Only the missing alt was asked for and written: the long one is kept byte for byte.
      expect(chats()).toHaveLength(1)
      expect(readFileSync(join(copy.dir, 'fixed', 'team.html'), 'utf8')).toBe(
        page.replace('<img src="img/kite.jpg">', `<img alt=${attr(REPLIES[320]!)} src="img/kite.jpg">`),
      )
      const [long] = readJson(join(copy.dir, 'r.json')).pages[0].images
      expect(long).toMatchObject({ status: 'long', suggestion: null, written: null })
      expect(readFileSync(join(copy.dir, 'r.html'), 'utf8')).toContain('kept (replaced only with --overwrite)')

      const review = await audit(['site/team.html', '--review', 'review.csv', '-q', '-o', 'r2.html'], client, copy.dir)
      expect(review.code).toBe(0)
      expect(readFileSync(join(copy.dir, 'review.csv'), 'utf8')).not.toContain('north beach')

      // --overwrite replaces it like any kept alt.
      const over = await audit(['site/team.html', '--fix', 'over', '--overwrite', '-q', '-o', 'r3.html'], client, copy.dir)
      expect(over.code).toBe(0)
      expect(readFileSync(join(copy.dir, 'over', 'team.html'), 'utf8')).toContain(`<img src="img/team.jpg" alt=${attr(REPLIES[360]!)}>`)
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test.skipIf(!chromiumInstalled())(
    'the HTML report has no WCAG 2.2 A/AA violations (axe-core)',
    async () => {
      const copy = siteCopy()
      const browser = await launchChromium()
      try {
        const res = await audit(['site', '-q', '--fix', 'fixed', '-o', 'report.html'], client, copy.dir)
        expect(res.code).toBe(0)
        const page = await browser.newPage()
        await page.goto(`file://${join(copy.dir, 'report.html')}`)
        expect(await page.locator('h1').textContent()).toBe('Alt text audit')
        expect(await axeViolations(page)).toEqual([])
      } finally {
        await browser.close()
        copy.cleanup()
      }
    },
    60_000,
  )
})

describe('page URLs', () => {
  test('a page URL is fetched by the command; its images go to the service as image_url; --crawl follows same-origin links', async () => {
    const photo = env.serve(makeJpeg(320, 240, 70))
    const logo = env.serve(makeJpeg(64, 64, 70))
    const pages = pageServer({
      '/': `<html lang="en"><title>Home</title><a href="/news/">News</a><img src="${photo}"><a href="/shop"><img src="${logo}" alt="logo_final_v2"></a>`,
      '/news/': `<html><p>News</p><a href="/news/deep.html">more</a><img src="${logo}" alt="">`,
      '/shop': `<html><p>Shop</p><img src="${photo}" alt="A red kite on a windy beach."><a href="/">home</a>`,
      '/news/deep.html': `<html><img src="${photo}">`,
    })
    const copy = siteCopy()
    try {
      const once = await audit([`${pages.url}/`, '--json', 'one.json', '-o', 'one.html', '--fix', 'fixed'], client, copy.dir)
      expect(once.code).toBe(0)
      expect(pages.total()).toBe(1)
      const one = readJson(join(copy.dir, 'one.json'))
      expect(one.pages.map((p: any) => p.page)).toEqual([`${pages.url}/`])
      expect(one.pages[0].images.map((i: any) => [i.status, i.resolved])).toEqual([
        ['missing', photo],
        ['poor', logo],
      ])
      expect(one.totals).toMatchObject({ suggested: 2, written: 2 })
      // The copy of a page URL: OUTDIR/HOST/path, "/" as index.html.
      const host = new URL(pages.url).host.replace(':', '_')
      expect(readFileSync(join(copy.dir, 'fixed', host, 'index.html'), 'utf8')).toContain(`<img alt=${attr(REPLIES[320]!)} src="${photo}">`)

      const crawled = await audit([`${pages.url}/`, '--crawl', '1', '--json', 'two.json', '-o', 'two.html'], client, copy.dir)
      expect(crawled.code).toBe(0)
      const two = readJson(join(copy.dir, 'two.json'))
      expect(two.pages.map((p: any) => p.page)).toEqual([`${pages.url}/`, `${pages.url}/news/`, `${pages.url}/shop`])
      expect(pages.hits('/news/deep.html')).toBe(0) // two steps away
      expect(two.totals).toMatchObject({ pages: 3, images: 4, missing: 1, poor: 1, empty: 0, ok: 1, decorative: 1 })
    } finally {
      pages.stop()
      copy.cleanup()
    }
  }, 30_000)
})
