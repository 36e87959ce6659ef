// The console's pages and assets over HTTP: a strict CSP and the other page headers on every console
// path, no inline script or style, nothing reflected from the query, content-hashed assets that are what
// their type says, no way out of /assets/, the standard rate limit, and JS + CSS within 60 KB gzipped.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CONSOLE_PATHS } from '../../src/modules/console/paths'
import { startTestService, type TestService } from '../support/service'

let service: TestService

beforeAll(async () => {
  service = await startTestService()
})
afterAll(async () => {
  await service.stop()
})

/** The CSP as a map of directive → sources. */
function policy(header: string | null): Record<string, string[]> {
  const directives: Record<string, string[]> = {}
  for (const part of (header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/)
    if (name) directives[name] = sources
  }
  return directives
}

const assetPaths = (html: string) => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!)

describe('console pages', () => {
  test.each(CONSOLE_PATHS)('%s: strict CSP, no framing, no Referer, no sniffing', async (path) => {
    const res = await fetch(service.url + path)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const csp = policy(res.headers.get('content-security-policy'))
    expect(csp['default-src']).toEqual(["'none'"])
    expect(csp['script-src']).toEqual(["'self'"])
    expect(csp['style-src']).toEqual(["'self'"])
    expect(csp['img-src']).toEqual(["'self'", 'blob:', 'data:'])
    expect(csp['connect-src']).toEqual(["'self'"])
    expect(csp['frame-ancestors']).toEqual(["'none'"])
    expect(csp['base-uri']).toEqual(["'none'"])
    expect(csp['form-action']).toEqual(["'self'"])
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const html = await res.text()
    // Only scripts from files, no inline style: the policy would block them anyway.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(html).not.toMatch(/<style\b/)
    expect(html).not.toMatch(/\sstyle=/)
    expect(html).not.toMatch(/\son[a-z]+=/)
    expect(assetPaths(html).length).toBeGreaterThanOrEqual(2)
  })

  test('the query is never reflected: the reset token and markup stay out of the page', async () => {
    const plain = await (await fetch(`${service.url}/reset-password`)).text()
    const payload = encodeURIComponent('<script>alert("x")</script>')
    const res = await fetch(`${service.url}/reset-password?token=${payload}&x=${payload}`)
    expect(await res.text()).toBe(plain)
  })

  test('an unchanged page answers 304 to its ETag', async () => {
    const first = await fetch(`${service.url}/`)
    const etag = first.headers.get('etag')
    expect(etag).toBeTruthy()
    const again = await fetch(`${service.url}/`, { headers: { 'if-none-match': etag! } })
    expect(again.status).toBe(304)
    expect(again.headers.get('content-security-policy')).toBe(first.headers.get('content-security-policy'))
  })

  test('a path that is not a console page is a JSON 404, not the console', async () => {
    for (const path of ['/overview', '/keys/new', '/index.html', '/assets', '/assets/']) {
      const res = await fetch(service.url + path)
      expect(res.status).toBe(404)
      expect(res.headers.get('content-type')).toContain('application/json')
    }
  })
})

describe('console assets', () => {
  test('script, stylesheet and icon: their own type, nosniff, cached for good (their names change with their content)', async () => {
    const paths = assetPaths(await (await fetch(`${service.url}/`)).text())
    const types = new Set<string>()
    for (const path of paths) {
      expect(path).toMatch(/^\/assets\/[\w-]+-[a-z0-9]{8}\.(js|css|svg)$/)
      const res = await fetch(service.url + path)
      expect(res.status).toBe(200)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      types.add(res.headers.get('content-type')!.split(';')[0]!)
    }
    expect([...types].sort()).toEqual(['image/svg+xml', 'text/css', 'text/javascript'])
  })

  test('JS + CSS are at most 60 KB gzipped, and are sent gzipped to clients that take it', async () => {
    const paths = assetPaths(await (await fetch(`${service.url}/`)).text()).filter((p) => /\.(js|css)$/.test(p))
    let gzipped = 0
    for (const path of paths) {
      const res = await fetch(service.url + path, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit)
      expect(res.headers.get('content-encoding')).toBe('gzip')
      gzipped += (await res.arrayBuffer()).byteLength
    }
    console.log(`console JS + CSS: ${(gzipped / 1024).toFixed(1)} KB gzipped`)
    expect(gzipped).toBeLessThanOrEqual(60 * 1024)
  })

  test('no way out of /assets/: traversal and unknown names are JSON 404s', async () => {
    for (const path of [
      '/assets/..%2fpackage.json',
      '/assets/%2e%2e%2f%2e%2e%2fsrc%2fconfig.ts',
      '/assets/../package.json',
      '/assets/nope.js',
      '/assets/index.html',
    ]) {
      const res = await fetch(service.url + path)
      const text = await res.text()
      expect(res.status).toBe(404)
      expect(text).not.toContain('"dependencies"')
      expect(text).not.toContain('loadConfig')
      expect(JSON.parse(text).error.code).toBe('not_found')
    }
  })
})

describe('rate limit', () => {
  test('console GETs count against the standard limit like every route', async () => {
    let last: Response | undefined
    for (let i = 0; i < 61; i++) {
      last = await fetch(`${service.url}/account`)
      await last.arrayBuffer()
    }
    expect(last!.status).toBe(429)
    expect(last!.headers.get('retry-after')).toBeTruthy()
    // Each page is its own bucket: another one still answers.
    expect((await fetch(`${service.url}/recent`)).status).toBe(200)
  })
})
