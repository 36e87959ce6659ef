// The documentation pages reflect nothing from the request and leak nothing of the configuration.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestService, type TestService } from '../support/service'

const SMTP_PASSWORD = 'smtp-s3cret-canary-5d2a'

let service: TestService

beforeAll(async () => {
  // Nothing listens on this port; the mailer is only used by forgot-password, which these tests never call.
  service = await startTestService({ env: { ALTTEXT_SMTP_URL: `smtp://mailer:${SMTP_PASSWORD}@127.0.0.1:9`, ALTTEXT_MAIL_FROM: 'alttext@alttext.test' } })
})
afterAll(async () => {
  await service.stop()
})

const CANARY = 'xss-canary-7f3e'
const PAYLOADS = [`<script>alert("${CANARY}")</script>`, `"><img src=x onerror=alert('${CANARY}')>`, `javascript:alert('${CANARY}')`]
const PAGES = ['/docs', '/docs/errors', '/openapi.json', '/reset-password']

describe('query parameters are not reflected', () => {
  for (const page of PAGES) {
    test(`${page} ignores ?x=<payload>`, async () => {
      for (const payload of PAYLOADS) {
        const res = await fetch(`${service.url}${page}?x=${encodeURIComponent(payload)}&token=${encodeURIComponent(payload)}`)
        expect(res.status).toBe(200)
        const text = await res.text()
        expect(text).not.toContain(CANARY)
        expect(text).not.toContain('<script>alert(')
        expect(text).not.toContain('onerror=')
      }
    })
  }

  test('the same page is served whatever the query string', async () => {
    const plain = await (await fetch(`${service.url}/docs/errors`)).text()
    const withQuery = await (await fetch(`${service.url}/docs/errors?x=${encodeURIComponent(PAYLOADS[0]!)}`)).text()
    expect(withQuery).toBe(plain)
  })

  test('the reset page does not echo the token into its HTML', async () => {
    const token = `tok-${CANARY}`
    const text = await (await fetch(`${service.url}/reset-password?token=${token}`)).text()
    expect(text).not.toContain(token)
  })
})

describe('unknown documentation paths', () => {
  test('a path holding markup is a JSON 404, never an HTML page that could render it', async () => {
    const res = await fetch(`${service.url}/docs/${encodeURIComponent(PAYLOADS[0]!)}`)
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.headers.get('content-type')).not.toContain('html')
    const text = await res.text()
    expect(text).not.toContain('<script>')
    expect(JSON.parse(text).error.code).toBe('not_found')
  })

  test('path traversal out of the docs does not serve files', async () => {
    for (const path of [
      '/docs/../package.json',
      '/docs/%2e%2e/%2e%2e/package.json',
      '/docs/assets/..%2f..%2fpackage.json',
      '/docs/assets/%2e%2e%2f%2e%2e%2fsrc%2fconfig.ts',
    ]) {
      const res = await fetch(`${service.url}${path}`)
      const text = await res.text()
      expect(text).not.toContain('"dependencies"')
      expect(text).not.toContain('loadConfig')
    }
  })
})

describe('the documents leak no configuration', () => {
  test('no SMTP credentials, database path or Ollama address in /docs, /docs/errors or /openapi.json', async () => {
    for (const page of PAGES) {
      const text = await (await fetch(`${service.url}${page}`)).text()
      expect(text).not.toContain(SMTP_PASSWORD)
      expect(text).not.toContain(service.dbPath)
      expect(text).not.toContain('127.0.0.1:9')
    }
  })

  test('the OpenAPI examples hold no working key', async () => {
    const text = await (await fetch(`${service.url}/openapi.json`)).text()
    const keys = [...text.matchAll(/alt_[0-9a-f]{64}/g)].map((m) => m[0])
    for (const key of new Set(keys)) {
      const res = await service.api.post('/api/validate-key', { api_key: key })
      expect(res.status).toBe(401)
    }
  })
})

describe('page security headers', () => {
  test.each(['/docs', '/docs/errors', '/reset-password'])('%s runs only its own scripts, cannot be framed and sends no Referer', async (page) => {
    const res = await fetch(`${service.url}${page}`)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain("'unsafe-eval'")
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    // No inline script: the policy would block it, so the pages keep theirs in files.
    expect(await res.text()).not.toMatch(/<script>(?!<\/script>)/)
  })

  test('JSON answers are not sniffed either', async () => {
    for (const res of [await service.api.get('/health'), await service.api.get('/nope')]) expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })
})

describe('a bad ALTTEXT_SMTP_URL', () => {
  test('is named without echoing its password', async () => {
    const { runCommand } = await import('../support/process')
    const { code, stderr, stdout } = await runCommand(['serve'], { ALTTEXT_SMTP_URL: `smtp//mailer:${SMTP_PASSWORD}@mail:587`, PORT: '0' })
    expect(code).toBe(2)
    expect(stderr).toContain('ALTTEXT_SMTP_URL')
    expect(stderr + stdout).not.toContain(SMTP_PASSWORD)
  })
})
