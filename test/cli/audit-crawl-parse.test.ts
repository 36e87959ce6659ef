// The crawl's parts as pure functions: cookies.txt, --header, robots.txt, sitemaps streamed, the per-host
// scheduler on an injected clock, and the address gate over an injected resolver (nothing is sent).
import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'fflate'
import { UsageError } from '../../src/cli/shared/args'
import { cookieHeader, parseCookieFile } from '../../src/cli/audit/crawl/cookies'
import { createRequestGate } from '../../src/cli/audit/crawl/gate'
import { parseHeaderFlags } from '../../src/cli/audit/crawl/headers'
import { createHostScheduler, MAX_CRAWL_DELAY_MS, type Timer } from '../../src/cli/audit/crawl/politeness'
import { parseRobots } from '../../src/cli/audit/crawl/robots'
import { type SitemapItem, sitemapEntries } from '../../src/cli/audit/crawl/sitemap'
import { checkAllowPrivate } from '../../src/cli/audit/crawl/site'
import { pageKey } from '../../src/cli/audit/crawl/crawl'

const streamOf = (...chunks: (string | Uint8Array)[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk)
      controller.close()
    },
  })

async function readAll(body: ReadableStream<Uint8Array>, limits?: { maxBytes: number; maxUrls: number }) {
  const items: SitemapItem[] = []
  const entries = sitemapEntries(body, new URL('https://site.example/sitemap.xml'), limits)
  for (;;) {
    const next = await entries.next()
    if (next.done) return { items, error: next.value }
    items.push(...next.value)
  }
}

const SECRET = 's3cr3t-Value-42'

describe('cookies.txt', () => {
  const file = [
    '# Netscape HTTP Cookie File',
    '',
    `.site.example\tTRUE\t/\tTRUE\t0\tsession\t${SECRET}`,
    `#HttpOnly_site.example\tFALSE\t/private\tFALSE\t4102444800\tpriv\tp1`,
    `other.example\tFALSE\t/\tFALSE\t0\tnot_here\tx`,
    `site.example\tFALSE\t/\tFALSE\t1000\told\texpired`,
    `site.example\tFALSE\t/\tFALSE\t0\tempty\t`,
  ].join('\n')

  test('fields, #HttpOnly_ lines, comments; matched by domain, subdomains, path, secure and expiry', () => {
    const cookies = parseCookieFile(file, 'c.txt')
    expect(cookies.map((cookie) => cookie.name)).toEqual(['session', 'priv', 'not_here', 'old', 'empty'])
    const now = Date.UTC(2026, 11, 7)
    expect(cookieHeader(cookies, new URL('https://site.example/private/a'), now)).toBe(`priv=p1; session=${SECRET}; empty=`)
    expect(cookieHeader(cookies, new URL('https://www.site.example/'), now)).toBe(`session=${SECRET}`)
    // Not secure: the secure cookie stays; /privately is not under /private.
    expect(cookieHeader(cookies, new URL('http://site.example/privately'), now)).toBe('empty=')
    expect(cookieHeader(cookies, new URL('https://elsewhere.example/'), now)).toBeNull()
  })

  test.each([
    ['eight fields', `site.example\tTRUE\t/\tFALSE\t0\tn\t${SECRET}\textra`, /line 1: 8 tab-separated fields/],
    ['a bad flag', `site.example\tyes\t/\tFALSE\t0\tn\t${SECRET}`, /line 1: the second field/],
    ['a bad path', `site.example\tTRUE\tnope\tFALSE\t0\tn\t${SECRET}`, /line 1: the path/],
    ['a bad expiry', `site.example\tTRUE\t/\tFALSE\tsoon\tn\t${SECRET}`, /line 1: the expiry/],
    ['a bad name', `site.example\tTRUE\t/\tFALSE\t0\tn;x\t${SECRET}`, /line 1: the cookie name/],
    ['a semicolon in the value', `site.example\tTRUE\t/\tFALSE\t0\tn\t${SECRET};x=1`, /line 1: the value of n/],
    ['too few fields', `site.example ${SECRET}`, /line 1: 1 tab-separated fields/],
  ])('%s is a usage error with the line number, never the value', (_, line, message) => {
    let error: unknown
    try {
      parseCookieFile(`# comment\n${line}`, 'c.txt')
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(UsageError)
    expect((error as Error).message).toStartWith('--cookie-file c.txt line 2: ')
    expect((error as Error).message).toMatch(new RegExp(message.source.replace('line 1', 'line 2')))
    expect((error as Error).message).not.toContain(SECRET)
  })
})

describe('--header', () => {
  test('Name: value pairs, lower-case names, repeated names joined', () => {
    expect(parseHeaderFlags(['Authorization: Bearer abc', 'X-Team:  kites ', 'x-team: boats'])).toEqual({
      authorization: 'Bearer abc',
      'x-team': 'kites, boats',
    })
  })
  test.each([
    ['no colon', `Authorization ${SECRET}`, /no colon/],
    ['a bad name', `Bad Name: ${SECRET}`, /not a header name/],
    ['Host', `Host: ${SECRET}`, /Host is set by the HTTP client/],
    ['Content-Length', 'Content-Length: 5', /Content-Length is set by the HTTP client/],
    ['Transfer-Encoding', 'transfer-encoding: chunked', /set by the HTTP client/],
    ['CRLF injection', `X-A: ${SECRET}\r\nX-Injected: 1`, /line break/],
    ['a bare LF', `X-A: ${SECRET}\nHost: evil`, /line break/],
    ['an empty value', 'X-A:   ', /empty value/],
  ])('%s is refused, the value never shown', (_, flag, message) => {
    let error: unknown
    try {
      parseHeaderFlags([flag])
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(UsageError)
    expect((error as Error).message).toMatch(message)
    expect((error as Error).message).not.toContain(SECRET)
  })
})

describe('robots.txt', () => {
  const rules = parseRobots(
    'https://site.example/robots.txt',
    [
      'User-agent: *',
      'Disallow: /',
      '',
      'User-agent: alttext',
      'Disallow: /private/',
      'Allow: /private/open.html',
      'Disallow: /*.php$',
      'Crawl-delay: 2.5',
      '',
      'Sitemap: https://site.example/sitemap-index.xml',
      'Sitemap: /relative.xml',
    ].join('\n'),
  )
  test("the alttext group, not *'s: longest match wins, wildcards and $", () => {
    expect(rules.allowed('https://site.example/')).toBe(true)
    expect(rules.allowed('https://site.example/private/secret.html')).toBe(false)
    expect(rules.allowed('https://site.example/private/open.html')).toBe(true)
    expect(rules.allowed('https://site.example/a.php')).toBe(false)
    expect(rules.allowed('https://site.example/a.php?x=1')).toBe(true)
  })
  test('Crawl-delay and Sitemap: lines (made absolute)', () => {
    expect(rules.crawlDelay).toBe(2.5)
    expect(rules.sitemaps).toEqual(['https://site.example/sitemap-index.xml', 'https://site.example/relative.xml'])
  })
  test('an agent group for others leaves alttext to *', () => {
    const other = parseRobots('https://site.example/robots.txt', 'User-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp/\n')
    expect(other.allowed('https://site.example/a')).toBe(true)
    expect(other.allowed('https://site.example/tmp/a')).toBe(false)
    expect(other.crawlDelay).toBeNull()
  })
})

describe('sitemaps, streamed', () => {
  const urlset = (paths: string[]) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">${paths
      .map(
        (path) => `<url><loc>${path}</loc><image:image><image:loc>https://site.example/photo.jpg</image:loc></image:image><lastmod>2026-01-01</lastmod></url>`,
      )
      .join('')}</urlset>`

  test('<urlset> gives pages (image:loc is no page), split across chunks anywhere', async () => {
    const xml = urlset(['https://site.example/a', '/b', '  https://site.example/c?x=1&amp;y=2  '])
    const chunks = Array.from({ length: Math.ceil(xml.length / 7) }, (_, index) => xml.slice(index * 7, index * 7 + 7))
    const { items, error } = await readAll(streamOf(...chunks))
    expect(error).toBeNull()
    expect(items).toEqual([
      { kind: 'page', url: 'https://site.example/a' },
      { kind: 'page', url: 'https://site.example/b' },
      { kind: 'page', url: 'https://site.example/c?x=1&y=2' },
    ])
  })

  test('<sitemapindex> gives sitemaps; gzip is inflated (by its bytes, whatever the name)', async () => {
    const index =
      '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://site.example/one.xml</loc></sitemap><sitemap><loc>https://site.example/two.xml.gz</loc></sitemap></sitemapindex>'
    const { items } = await readAll(streamOf(gzipSync(new TextEncoder().encode(index))))
    expect(items).toEqual([
      { kind: 'sitemap', url: 'https://site.example/one.xml' },
      { kind: 'sitemap', url: 'https://site.example/two.xml.gz' },
    ])
  })

  test('cut at the byte cap: the URLs before it are kept, the stream is cancelled', async () => {
    let pulled = 0
    let cancelled = false
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++
        controller.enqueue(
          new TextEncoder().encode(pulled === 1 ? '<urlset><url><loc>/first</loc></url>' : '<x:pad xmlns:x="urn:x">padding padding</x:pad>'.repeat(100)),
        )
      },
      cancel() {
        cancelled = true
      },
    })
    const { items, error } = await readAll(endless, { maxBytes: 1024 * 1024, maxUrls: 50_000 })
    expect(items).toEqual([{ kind: 'page', url: 'https://site.example/first' }])
    expect(error).toContain('larger than 1 MB uncompressed')
    expect(cancelled).toBe(true)
    expect(pulled).toBeLessThan(300)
  })

  test('a gzip bomb stops at the byte cap of inflated bytes', async () => {
    const inflated = new TextEncoder().encode(`<urlset>${' '.repeat(20 * 1024 * 1024)}</urlset>`)
    const { error } = await readAll(streamOf(gzipSync(inflated)), { maxBytes: 1024 * 1024, maxUrls: 50_000 })
    expect(error).toContain('larger than 1 MB uncompressed')
  })

  test('the URL cap per file', async () => {
    const { items, error } = await readAll(streamOf(urlset(Array.from({ length: 12 }, (_, i) => `/p${i}`))), { maxBytes: 1024 * 1024, maxUrls: 10 })
    expect(items).toHaveLength(10)
    expect(error).toContain('more than 10 URLs')
  })

  test.each([
    ['not XML', 'this is not xml <', /not well-formed XML|not a sitemap/],
    ['another root', '<rss><channel/></rss>', /not a sitemap: the root element is <rss>/],
    ['unclosed', '<urlset><url><loc>/a</loc></url>', /not well-formed XML/],
    ['broken gzip', new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), /gzip|not well-formed|not a sitemap/],
  ])('%s is an error for that sitemap, not a crash', async (_, body, message) => {
    const { error } = await readAll(streamOf(body))
    expect(error).toMatch(message)
  })
})

describe('per-host politeness on an injected clock', () => {
  const fakeTimer = () => {
    let now = 0
    const sleeps: number[] = []
    const timer: Timer = {
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms)
        now += ms
      },
    }
    return { timer, sleeps, now: () => now }
  }

  test('a Crawl-delay spaces the starts on that host, one at a time; capped at 30 s; other hosts unaffected', async () => {
    const { timer, now } = fakeTimer()
    const scheduler = createHostScheduler(timer, { perHost: 2, delayMs: 10 })
    expect(scheduler.setCrawlDelay('slow.example', 120)).toBe(MAX_CRAWL_DELAY_MS)
    const starts: Record<string, number[]> = { 'slow.example': [], 'fast.example': [] }
    let inFlight = 0
    let most = 0
    const task = (host: string) => async () => {
      starts[host]!.push(now())
      inFlight++
      most = Math.max(most, inFlight)
      await Promise.resolve()
      inFlight--
    }
    await Promise.all([1, 2, 3].map(() => scheduler.run('slow.example', task('slow.example'))))
    expect(starts['slow.example']).toEqual([0, 30_000, 60_000])
    expect(most).toBe(1)
    await Promise.all([1, 2, 3].map(() => scheduler.run('fast.example', task('fast.example'))))
    const fast = starts['fast.example']!
    expect(fast[1]! - fast[0]!).toBe(10)
    expect(fast[2]! - fast[1]!).toBe(10)
  })

  test('a small Crawl-delay is taken as given', async () => {
    const { timer, sleeps } = fakeTimer()
    const scheduler = createHostScheduler(timer, { delayMs: 0 })
    scheduler.setCrawlDelay('h', 2.5)
    await scheduler.run('h', async () => {})
    await scheduler.run('h', async () => {})
    expect(sleeps).toEqual([2500])
  })

  test('at most perHost tasks run at once on a host', async () => {
    const { timer } = fakeTimer()
    const scheduler = createHostScheduler(timer, { perHost: 2, delayMs: 0 })
    let inFlight = 0
    let most = 0
    const gates: (() => void)[] = []
    const runs = Array.from({ length: 5 }, () =>
      scheduler.run('h', async () => {
        inFlight++
        most = Math.max(most, inFlight)
        await new Promise<void>((resolve) => gates.push(resolve))
        inFlight--
      }),
    )
    let finished = 0
    for (const run of runs) void run.then(() => finished++)
    while (finished < runs.length) {
      await Bun.sleep(0)
      for (const open of gates.splice(0)) open()
    }
    expect(most).toBe(2)
  })
})

describe('the address gate (no connection is made: the resolver is a table)', () => {
  const table: Record<string, string[]> = { 'cdn.example': ['93.184.216.34'], 'inside.example': ['10.1.2.3'], 'sneaky.example': ['93.184.216.34', '127.0.0.1'] }
  const resolved: string[] = []
  const gate = createRequestGate({
    auditedOrigins: ['https://127.0.0.1:8443', 'http://intranet.local'],
    allowPrivate: checkAllowPrivate(['wiki.internal', '192.168.7.0/24']),
    headers: { authorization: `Bearer ${SECRET}` },
    cookies: parseCookieFile(`127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\t${SECRET}`, 'c.txt'),
    now: () => 0,
    resolve: async (host) => {
      resolved.push(host)
      const answers = table[host]
      if (!answers) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
      return answers.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))
    },
  })

  test('the audited origins may be anywhere, and nothing is looked up for them', async () => {
    expect(await gate.check(new URL('https://127.0.0.1:8443/private/page'))).toBeNull()
    expect(await gate.check(new URL('http://intranet.local/'))).toBeNull()
    expect(resolved).toEqual([])
  })

  test('another origin must be public: a redirect to 10.0.0.1 or to loopback on another port is refused before any connection', async () => {
    expect(await gate.check(new URL('https://10.0.0.1/secret'))).toContain('10.0.0.1 → 10.0.0.1 (private) is not a public address')
    expect(await gate.check(new URL('https://127.0.0.1:9999/'))).toContain('(loopback)')
    expect(await gate.check(new URL('http://[::1]/'))).toContain('(loopback)')
    expect(await gate.check(new URL('http://169.254.169.254/latest/meta-data/'))).toContain('(link-local)')
    expect(await gate.check(new URL('https://inside.example/'))).toContain('inside.example → 10.1.2.3 (private)')
    // One private answer among public ones is enough to refuse.
    expect(await gate.check(new URL('https://sneaky.example/'))).toContain('(loopback)')
    expect(await gate.check(new URL('https://nowhere.example/'))).toBe('cannot resolve nowhere.example')
    expect(await gate.check(new URL('https://cdn.example/a.png'))).toBeNull()
  })

  test('--allow-private names hosts and ranges as ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS does', async () => {
    table['wiki.internal'] = ['10.9.9.9']
    expect(await gate.check(new URL('https://wiki.internal/page'))).toBeNull()
    expect(await gate.check(new URL('https://192.168.7.20/'))).toBeNull()
    expect(await gate.check(new URL('https://192.168.8.20/'))).toContain('(private)')
    expect(() => checkAllowPrivate(['not a host!'])).toThrow(UsageError)
    expect(() => checkAllowPrivate(['10.0.0.0/99'])).toThrow(UsageError)
  })

  test('a host is resolved once per run: its checked answer is kept', async () => {
    const before = resolved.filter((host) => host === 'cdn.example').length
    await gate.check(new URL('https://cdn.example/b.png'))
    await gate.check(new URL('https://cdn.example/c.png'))
    expect(resolved.filter((host) => host === 'cdn.example').length).toBe(before)
  })

  test('schemes: data:, blob: reach no network; file:, ftp: are refused', async () => {
    expect(await gate.check(new URL('data:image/png;base64,AAAA'))).toBeNull()
    expect(await gate.check(new URL('file:///etc/passwd'))).toContain('file: address is not fetched')
    expect(await gate.check(new URL('ftp://cdn.example/'))).toContain('not fetched')
  })

  test('headers and cookies only for the audited origins, never another origin, not the same host on another port', () => {
    expect(gate.headersFor(new URL('https://127.0.0.1:8443/x'))).toEqual({ authorization: `Bearer ${SECRET}`, cookie: `sid=${SECRET}` })
    expect(gate.headersFor(new URL('https://127.0.0.1:9443/x'))).toEqual({})
    expect(gate.headersFor(new URL('http://127.0.0.1:8443/x'))).toEqual({})
    expect(gate.headersFor(new URL('https://cdn.example/a.png'))).toEqual({})
    // intranet.local is audited, but no cookie of the file is for it.
    expect(gate.headersFor(new URL('http://intranet.local/'))).toEqual({ authorization: `Bearer ${SECRET}` })
  })
})

describe('page addresses', () => {
  test('fragments dropped, default ports and host case normalised; index.html and trailing slashes kept', () => {
    expect(pageKey('HTTPS://Site.Example:443/a#top')).toBe('https://site.example/a')
    expect(pageKey('/b/../c/', 'http://site.example:80/x')).toBe('http://site.example/c/')
    expect(pageKey('https://site.example/index.html')).toBe('https://site.example/index.html')
    expect(pageKey('mailto:a@site.example')).toBeNull()
  })
})
