// `alttext audit --sitemap` and bad input, each reported where it happened while the audit goes on: a
// sitemap loop, a 10 GB sitemap (an endless generated stream, cut at 50 MB), a 5 MB robots.txt (read
// to 500 KiB), sitemaps that are no XML or missing, robots.txt answering 500; and usage errors for a
// bad --header, a bad --cookie-file, the crawl flags without a URL.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadPages } from '../../src/cli/audit/pages'
import { audit, readJson } from './audit-support'
import { generatedBody, page, sitemapIndex, startCrawlSite, urlset } from './audit-crawl-support'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-crawl-error-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const errorsOf = (file: string) => Object.fromEntries(readJson(join(dir, file)).pages.map((p: any) => [new URL(p.page).pathname, p.error]))

describe('sitemaps that cannot be read whole', () => {
  test('a sitemap loop (an index listing itself, A → B → A) is reported once; a sitemap merely listed twice is read once, no error', async () => {
    const site = await startCrawlSite()
    const o = site.origin
    site.set('/robots.txt', `Sitemap: ${o}/loop.xml\nSitemap: ${o}/pages.xml\n`)
    site.set('/loop.xml', sitemapIndex([`${o}/loop.xml`, `${o}/loop-b.xml`]))
    site.set('/loop-b.xml', sitemapIndex([`${o}/loop.xml`, `${o}/pages.xml`]))
    site.set('/pages.xml', urlset([`${o}/a.html`]))
    site.set('/', page('Home', '<img src="h.png">'))
    site.set('/a.html', page('A', '<img src="a.png">'))
    try {
      const res = await audit([`${o}/`, '--sitemap', '--dry-run', '--json', 'loop.json', '-o', 'loop.html'], site.env, dir)
      expect(res.code).toBe(1)
      const errors = errorsOf('loop.json')
      expect(errors['/']).toBeNull()
      expect(errors['/a.html']).toBeNull()
      expect(errors['/loop.xml']).toStartWith('sitemap: a sitemap loop: listed again by')
      expect(readJson(join(dir, 'loop.json')).pages.filter((p: any) => p.page.endsWith('/loop.xml'))).toHaveLength(1)
      expect(site.hits('/loop.xml')).toBe(1)
      expect(site.hits('/loop-b.xml')).toBe(1)
      expect(site.hits('/pages.xml')).toBe(1)
      expect(errors['/pages.xml']).toBeUndefined()
    } finally {
      await site.stop()
    }
  }, 30_000)

  test('a 10 GB sitemap, generated as it is sent, is cut at 50 MB; its URLs before the cut and the next sitemap are read', async () => {
    const site = await startCrawlSite()
    const o = site.origin
    let huge: ReturnType<typeof generatedBody> | undefined
    site.set('/robots.txt', `Sitemap: ${o}/huge.xml\nSitemap: ${o}/small.xml\n`)
    site.set('/huge.xml', () => {
      huge = generatedBody(
        `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${o}/early.html</loc></url>`,
        '<x:padding xmlns:x="urn:example:padding">all work and no play</x:padding>\n',
        10 * 1024 ** 3,
      )
      return new Response(huge.body, { headers: { 'content-type': 'application/xml' } })
    })
    site.set('/small.xml', urlset([`${o}/b.html`]))
    site.set('/', page('Home', '<img src="h.png">'))
    site.set('/early.html', page('Early', '<img src="e.png">'))
    site.set('/b.html', page('B', '<img src="b.png">'))
    try {
      const res = await audit([`${o}/`, '--sitemap', '--dry-run', '--json', 'huge.json', '-o', 'huge.html'], site.env, dir)
      const errors = errorsOf('huge.json')
      expect(errors).toMatchObject({ '/': null, '/early.html': null, '/b.html': null })
      expect(errors['/huge.xml']).toBe('sitemap: larger than 50 MB uncompressed (the sitemaps.org limit per file): cut there, the URLs before the cut are read')
      expect(res.code).toBe(1)
      // Read to the cap, then let go: what was sent is the cap and the connection's buffers, not 10 GB.
      expect(huge!.sent()).toBeGreaterThan(50 * 1024 * 1024)
      expect(huge!.sent()).toBeLessThan(80 * 1024 * 1024)
    } finally {
      await site.stop()
    }
  }, 60_000)

  test.each([
    ['no XML', 'this is { not xml', /^sitemap: (?:not well-formed XML|not a sitemap)/],
    ['another kind of XML', '<?xml version="1.0"?><rss version="2.0"><channel/></rss>', /^sitemap: not a sitemap: the root element is <rss>/],
    ['missing (404)', null, /^sitemap: HTTP 404$/],
  ])(
    'a sitemap that is %s is an error of that sitemap; the page named is read',
    async (_, body, message) => {
      const site = await startCrawlSite({ '/': page('Home', '<img src="h.png">') })
      if (body !== null) site.set('/sitemap.xml', body)
      try {
        const res = await audit([`${site.origin}/`, '--sitemap', '--dry-run', '--json', 'bad.json', '-o', 'bad.html'], site.env, dir)
        expect(res.code).toBe(1)
        const errors = errorsOf('bad.json')
        expect(errors['/']).toBeNull()
        expect(errors['/sitemap.xml']).toMatch(message)
      } finally {
        await site.stop()
      }
    },
    30_000,
  )
})

describe('robots.txt that cannot be read whole', () => {
  test('a 5 MB robots.txt is obeyed to 500 KiB, said so; a rule past the cut is not', async () => {
    const padding = '# a long comment line, as a generator might write them by the thousand\n'.repeat(Math.ceil((5 * 1024 * 1024) / 73))
    const site = await startCrawlSite({
      '/robots.txt': `User-agent: alttext\nDisallow: /early.html\n${padding}Disallow: /late.html\n`,
      '/': page('Home', '<img src="h.png">'),
      '/early.html': page('Early', '<img src="e.png">'),
      '/late.html': page('Late', '<img src="l.png">'),
    })
    site.set('/sitemap.xml', urlset([`${site.origin}/early.html`, `${site.origin}/late.html`]))
    try {
      const res = await audit([`${site.origin}/`, '--sitemap', '--dry-run', '--json', 'robots.json', '-o', 'robots.html'], site.env, dir)
      expect(res.code).toBe(0)
      expect(res.stderr).toContain(`note: ${site.origin}/robots.txt is larger than 500 KiB: its first 500 KiB are obeyed, the rest ignored (as Google does)`)
      expect(Object.keys(errorsOf('robots.json'))).toEqual(['/', '/late.html'])
      expect(site.hits('/early.html')).toBe(0)
    } finally {
      await site.stop()
    }
  }, 30_000)

  test('robots.txt answering 500: nothing the audit finds is read (as Google does), the page named is', async () => {
    const site = await startCrawlSite({
      '/robots.txt': () => new Response('oops', { status: 500 }),
      '/': page('Home', '<a href="/a.html">a</a><img src="h.png">'),
      '/a.html': page('A', '<img src="a.png">'),
    })
    site.set('/sitemap.xml', urlset([`${site.origin}/a.html`]))
    try {
      const res = await audit([`${site.origin}/`, '--sitemap', '--crawl', '1', '--dry-run', '--json', 'r500.json', '-o', 'r500.html'], site.env, dir)
      expect(res.stderr).toContain(`note: ${site.origin}/robots.txt: HTTP 500; the pages it could disallow are not read`)
      expect(res.stderr).toContain(`note: robots.txt disallows ${site.origin}/ for alttext; read all the same, as it was named`)
      expect(Object.keys(errorsOf('r500.json'))).toEqual(['/'])
      expect(site.hits('/a.html')).toBe(0)
      expect(res.code).toBe(0)
    } finally {
      await site.stop()
    }
  }, 30_000)
})

describe('usage errors (exit 2, nothing fetched)', () => {
  const SECRET = 'n3ver-Shown-Value'
  test.each([
    ['a header without a colon', ['--header', `Authorization ${SECRET}`], /--header #1 is not 'Name: value'/],
    ['Host', ['--header', `Host: ${SECRET}`], /--header #1: Host is set by the HTTP client itself/],
    ['Content-Length', ['--header', 'X-A: 1', '--header', 'Content-Length: 3'], /--header #2: Content-Length is set by the HTTP client/],
    ['CRLF injection', ['--header', `X-A: ${SECRET}\r\nX-B: injected`], /--header #1: the value of X-A holds a line break/],
    ['a bad header name', ['--header', `X A: ${SECRET}`], /is not a header name/],
    ['a bad --allow-private', ['--allow-private', 'not a host!'], /--allow-private "not a host!" is not a host name, IP address or CIDR/],
  ])('%s', async (_, flags, message) => {
    const site = await startCrawlSite({ '/': page('Home', '') })
    try {
      const res = await audit([`${site.origin}/`, '--sitemap', '--dry-run', ...flags], site.env, dir)
      expect(res.code).toBe(2)
      expect(res.stderr).toMatch(message)
      expect(res.stderr + res.stdout).not.toContain(SECRET)
      expect(site.requests).toHaveLength(0)
    } finally {
      await site.stop()
    }
  })

  test.each([
    [
      'a wrong field count',
      `# Netscape HTTP Cookie File\n\nsite.example\tTRUE\t/\t${SECRET}\n`,
      /--cookie-file cookies-bad\.txt line 3: 4 tab-separated fields, not 7/,
    ],
    ['a bad secure flag', `site.example\tTRUE\t/\tmaybe\t0\tsid\t${SECRET}\n`, /line 1: the fourth field \(secure\) is neither TRUE nor FALSE/],
    ['a value with a semicolon', `# c\n# d\nsite.example\tTRUE\t/\tFALSE\t0\tsid\t${SECRET};x\n`, /line 3: the value of sid holds a character/],
    ['no cookies at all', '# Netscape HTTP Cookie File\n', /holds no cookies/],
  ])('a cookie file with %s: the line, never the value', async (_, text, message) => {
    writeFileSync(join(dir, 'cookies-bad.txt'), text)
    const res = await audit(['https://127.0.0.1:9/', '--cookie-file', 'cookies-bad.txt', '--dry-run'], {}, dir)
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(message)
    expect(res.stderr).not.toContain(SECRET)
  })

  test('a missing cookie file; the crawl flags without a page URL', async () => {
    const missing = await audit(['https://127.0.0.1:9/', '--cookie-file', 'nope.txt', '--dry-run'], {}, dir)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('--cookie-file nope.txt: cannot read it (ENOENT)')
    const noUrl = await audit(['.', '--sitemap', '--header', 'X-A: 1', '--dry-run'], {}, dir)
    expect(noUrl.code).toBe(2)
    expect(noUrl.stderr).toContain("--sitemap, --header are for page URLs: give the site's address")
  })
})

describe('a page fetcher that throws (the hook --render plugs a browser into)', () => {
  test('fails its page with the reason; the other pages are read', async () => {
    const seen: [string, string | null][] = []
    await loadPages(
      [
        { kind: 'url', url: 'https://127.0.0.1:9/a.html', depth: 0 },
        { kind: 'url', url: 'https://127.0.0.1:9/b.html', depth: 0 },
      ],
      {
        crawl: 0,
        maxPages: 10,
        cwd: dir,
        // No request is made: the fetcher is the test's.
        fetchPage: async (source) => {
          if (source.url.endsWith('/a.html')) throw new Error('the browser went away')
          return { source, name: source.url, base: new URL(source.url), bytes: new TextEncoder().encode('<p>b</p>'), error: null }
        },
        onPage: (loaded) => {
          seen.push([loaded.name, loaded.error])
          return []
        },
      },
    )
    expect(seen.sort()).toEqual([
      ['https://127.0.0.1:9/a.html', 'cannot load: the browser went away'],
      ['https://127.0.0.1:9/b.html', null],
    ])
  })
})
