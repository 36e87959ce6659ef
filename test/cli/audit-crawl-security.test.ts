// The crawl's address rule and its secrets. The origins named on the command line may be anywhere (here,
// loopback); every other address must pass the service's address rules unless --allow-private names it:
// a redirect to 10.0.0.1 is refused by the classifier before any connection (nothing is sent: the
// refusal is checked, no private address is ever dialled), and a Sitemap: line on another loopback
// origin is refused until --allow-private allows it. --header and --cookie-file reach the audited origin
// only: not a redirect target elsewhere, not a sitemap host elsewhere, not the alt-text service; and no
// secret is printed or written.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { audit, readJson } from './audit-support'
import { type CrawlSite, page, startCrawlSite, urlset } from './audit-crawl-support'

const COOKIE_SECRET = 'sess-Secret-31337'
const HEADER_SECRET = 'hdr-Secret-8086'
const secretsIn = (text: string) => text.includes(COOKIE_SECRET) || text.includes(HEADER_SECRET)

let dir: string
let site: CrawlSite
let elsewhere: CrawlSite
/** Both origins' certificates, in one NODE_EXTRA_CA_CERTS file. */
let env: Record<string, string>

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-crawl-security-'))
  // Two loopback origins: the audited one, and "elsewhere" (same address, another port: another origin).
  elsewhere = await startCrawlSite({
    '/sitemap.xml': '', // set below, once the audited origin is known
    '/landing.html': page('Landing', '<img src="l.png">'),
  })
  site = await startCrawlSite()
  const o = site.origin
  elsewhere.set('/sitemap.xml', urlset([`${o}/a.html`]))
  site.set('/robots.txt', `User-agent: *\nAllow: /\nSitemap: ${elsewhere.origin}/sitemap.xml\n`)
  site.set('/', page('Home', `<a href="/to-private">p</a><a href="/to-elsewhere">e</a><img src="/i/home.png">`))
  site.set('/a.html', page('A', '<img src="/i/a.png">'))
  site.set('/to-private', () => new Response(null, { status: 302, headers: { location: 'https://10.0.0.1/admin' } }))
  site.set('/to-metadata', () => new Response(null, { status: 307, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }))
  site.set(
    '/to-localhost',
    () => new Response(null, { status: 302, headers: { location: `https://localhost:${new URL(elsewhere.origin).port}/landing.html` } }),
  )
  site.set('/to-elsewhere', () => new Response(null, { status: 301, headers: { location: `${elsewhere.origin}/landing.html` } }))
  site.set('/private.html', (request) =>
    request.headers.get('x-team-token') === HEADER_SECRET && (request.headers.get('cookie') ?? '').includes(COOKIE_SECRET)
      ? new Response(page('Private', '<img src="/i/private.png">'), { headers: { 'content-type': 'text/html' } })
      : new Response(`denied; you sent ${request.headers.get('cookie')}`, { status: 401 }),
  )
  writeFileSync(join(dir, 'ca.pem'), `${site.server.caPem}\n${elsewhere.server.caPem}`)
  env = { NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') }
  writeFileSync(join(dir, 'cookies.txt'), `127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\t${COOKIE_SECRET}\n`)
})
afterAll(async () => {
  await Promise.all([site.stop(), elsewhere.stop()])
  rmSync(dir, { recursive: true, force: true })
})

const secretFlags = ['--cookie-file', 'cookies.txt', '--header', `X-Team-Token: ${HEADER_SECRET}`]
const errorsOf = (file: string) => Object.fromEntries(readJson(join(dir, file)).pages.map((p: any) => [p.page, p.error]))

describe('addresses off the audited origins', () => {
  test('a redirect to a private or link-local address is refused before any connection; the audit goes on', async () => {
    const res = await audit(
      [`${site.origin}/to-private`, `${site.origin}/to-metadata`, `${site.origin}/`, '--dry-run', '--json', 'r.json', '-o', 'r.html'],
      env,
      dir,
    )
    expect(res.code).toBe(1)
    const errors = errorsOf('r.json')
    expect(errors[`${site.origin}/to-private`]).toBe(
      'redirected to https://10.0.0.1/admin: refused before connecting: 10.0.0.1 → 10.0.0.1 (private) is not a public address, and 10.0.0.1 is not an audited origin (--allow-private 10.0.0.1 allows it)',
    )
    expect(errors[`${site.origin}/to-metadata`]).toContain('169.254.169.254 (link-local) is not a public address')
    expect(errors[`${site.origin}/`]).toBeNull()
  })

  test('a host name off the audited origins is resolved, checked and connected to at the address checked (Host and TLS name kept)', async () => {
    const refused = await audit([`${site.origin}/to-localhost`, '--dry-run', '--json', 'l1.json', '-o', 'l1.html'], env, dir)
    expect(refused.code).toBe(1)
    expect(errorsOf('l1.json')[`${site.origin}/to-localhost`]).toMatch(/refused before connecting: localhost → (?:127\.0\.0\.1|::1) \(loopback\)/)
    const before = elsewhere.requests.length
    const allowed = await audit([`${site.origin}/to-localhost`, '--allow-private', 'localhost', '--dry-run', '--json', 'l2.json', '-o', 'l2.html'], env, dir)
    expect(errorsOf('l2.json')[`${site.origin}/to-localhost`]).toBeNull()
    expect(allowed.code).toBe(0)
    const there = elsewhere.requests.slice(before)
    expect(there.map((r) => [r.path, r.headers.get('host')])).toEqual([['/landing.html', `localhost:${new URL(elsewhere.origin).port}`]])
  })

  test('a Sitemap: line on another origin (loopback, another port) is refused; --allow-private 127.0.0.1 lets it be read, without the secrets', async () => {
    const refused = await audit([`${site.origin}/`, '--sitemap', '--dry-run', ...secretFlags, '--json', 's1.json', '-o', 's1.html'], env, dir)
    expect(refused.code).toBe(1)
    expect(errorsOf('s1.json')[`${elsewhere.origin}/sitemap.xml`]).toMatch(/^sitemap: refused before connecting: 127\.0\.0\.1 → 127\.0\.0\.1 \(loopback\)/)
    expect(elsewhere.hits('/sitemap.xml')).toBe(0)
    expect(site.hits('/a.html')).toBe(0)

    const before = elsewhere.requests.length
    const allowed = await audit(
      [`${site.origin}/`, '--sitemap', '--dry-run', ...secretFlags, '--allow-private', '127.0.0.1', '--json', 's2.json', '-o', 's2.html'],
      env,
      dir,
    )
    expect(allowed.code).toBe(0)
    expect(Object.keys(errorsOf('s2.json'))).toEqual([`${site.origin}/`, `${site.origin}/a.html`])
    const there = elsewhere.requests.slice(before)
    expect(there.map((r) => r.path)).toEqual(['/sitemap.xml'])
    for (const request of there) {
      expect(request.headers.get('cookie')).toBeNull()
      expect(request.headers.get('x-team-token')).toBeNull()
    }
  })
})

describe('the private fields reach the audited origin only', () => {
  test('not a redirect target on another origin; never printed or written, not even for a page that failed', async () => {
    const beforeSite = site.requests.length
    const beforeElsewhere = elsewhere.requests.length
    const res = await audit(
      [
        `${site.origin}/private.html`,
        `${site.origin}/to-elsewhere`,
        '--allow-private',
        '127.0.0.1',
        ...secretFlags,
        '--dry-run',
        '--json',
        'p.json',
        '--csv',
        'p.csv',
        '--sarif',
        'p.sarif',
        '-o',
        'p.html',
      ],
      env,
      dir,
    )
    expect(res.code).toBe(0)
    const errors = errorsOf('p.json')
    expect(errors[`${site.origin}/private.html`]).toBeNull()
    expect(errors[`${site.origin}/to-elsewhere`]).toBeNull()
    // On the audited origin, both went out; at the redirect's target, neither.
    const mine = site.requests.slice(beforeSite)
    expect(mine.find((r) => r.path === '/to-elsewhere')?.headers.get('x-team-token')).toBe(HEADER_SECRET)
    const theirs = elsewhere.requests.slice(beforeElsewhere)
    expect(theirs.map((r) => r.path)).toEqual(['/landing.html'])
    expect(theirs[0]!.headers.get('cookie')).toBeNull()
    expect(theirs[0]!.headers.get('x-team-token')).toBeNull()
    expect(secretsIn(res.stdout + res.stderr)).toBe(false)
    for (const file of ['p.json', 'p.csv', 'p.sarif', 'p.html']) expect(secretsIn(readFileSync(join(dir, file), 'utf8'))).toBe(false)

    // Refused: the page's own answer names the cookie it got, but the report says only the status.
    const denied = await audit([`${site.origin}/private.html`, '--cookie-file', 'cookies.txt', '--dry-run', '--json', 'd.json', '-o', 'd.html'], env, dir)
    expect(denied.code).toBe(1)
    expect(errorsOf('d.json')[`${site.origin}/private.html`]).toBe('HTTP 401')
    expect(secretsIn(denied.stdout + denied.stderr + readFileSync(join(dir, 'd.json'), 'utf8'))).toBe(false)
  })

  test('not in the requests to the alt-text service: its images go by URL, with the key and nothing of the site', async () => {
    const seen: { path: string; headers: Headers; body: string }[] = []
    const service = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request) {
        const path = new URL(request.url).pathname
        seen.push({ path, headers: new Headers(request.headers), body: await request.text() })
        if (path === '/api/usage') return Response.json({ credits: { remaining: 100 } })
        return Response.json({ alt_text: 'A private picture.', decorative: false, decorative_reason: null, wcag_issues: [], cached: false })
      },
    })
    try {
      const res = await audit(
        [`${site.origin}/private.html`, ...secretFlags, '--json', 'svc.json', '-o', 'svc.html'],
        { ...env, ALTTEXT_URL: `http://127.0.0.1:${service.port}`, ALTTEXT_API_KEY: 'alt_test_key' },
        dir,
      )
      expect(secretsIn(res.stdout + res.stderr)).toBe(false)
      expect(res.code).toBe(0)
      const described = seen.filter((r) => r.path === '/api/alt-text')
      expect(described).toHaveLength(1)
      expect(JSON.parse(described[0]!.body).image_url).toBe(`${site.origin}/i/private.png`)
      for (const request of seen) {
        expect(request.headers.get('cookie')).toBeNull()
        expect(request.headers.get('x-team-token')).toBeNull()
        expect(secretsIn(request.body)).toBe(false)
        expect(secretsIn([...request.headers.values()].join('\n'))).toBe(false)
      }
    } finally {
      service.stop(true)
    }
  })
})
