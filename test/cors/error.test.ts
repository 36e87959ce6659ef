// CORS refusals: unlisted origins get no CORS headers (their preflight a bare 204), CORS is off unless
// configured, and a bad ALTTEXT_CORS_ORIGINS stops start-up naming the variable.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../../src/config'
import { runCommand, SOURCE_COMMAND } from '../support/process'
import { CHEAP_PASSWORDS } from '../support/session'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
  'access-control-expose-headers',
  'access-control-allow-credentials',
]

const corsHeadersOf = (headers: Headers) => CORS_HEADERS.filter((name) => headers.get(name) !== null)

let service: TestService
let account: RegisteredAccount

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_CORS_ORIGINS: 'https://cms.example.org' }, overrides: { passwords: CHEAP_PASSWORDS } })
  account = await service.api.register()
})
afterAll(async () => {
  await service.stop()
})

describe('an unlisted origin', () => {
  test('gets no CORS headers on answers, errors and preflights; the preflight is still a 204', async () => {
    for (const origin of ['https://evil.example', 'https://cms.example.org.evil.example', 'http://cms.example.org', 'https://CMS.example.org:443x', 'null']) {
      const res = await service.api.request('GET', '/api/usage', { key: account.apiKey, headers: { origin } })
      expect(res.status).toBe(200)
      expect(corsHeadersOf(res.headers)).toEqual([])
      const error = await service.api.request('GET', '/api/usage', { headers: { origin } })
      expect(error.status).toBe(401)
      expect(corsHeadersOf(error.headers)).toEqual([])
      const pre = await service.api.request('OPTIONS', '/api/alt-text', { headers: { origin, 'access-control-request-method': 'POST' } })
      expect(pre.status).toBe(204)
      expect(corsHeadersOf(pre.headers)).toEqual([])
    }
  })
})

describe('CORS is off by default', () => {
  test('without ALTTEXT_CORS_ORIGINS no origin gets CORS headers, and no Vary is added', async () => {
    const off = await startTestService({ overrides: { passwords: CHEAP_PASSWORDS } })
    try {
      const mine = await off.api.register()
      const res = await off.api.request('GET', '/api/usage', { key: mine.apiKey, headers: { origin: 'https://cms.example.org' } })
      expect(res.status).toBe(200)
      expect(corsHeadersOf(res.headers)).toEqual([])
      expect(res.headers.get('vary')).toBeNull()
      const pre = await off.api.request('OPTIONS', '/api/usage', { headers: { origin: 'https://cms.example.org', 'access-control-request-method': 'GET' } })
      expect(pre.status).toBe(204)
      expect(corsHeadersOf(pre.headers)).toEqual([])
    } finally {
      await off.stop()
    }
  })
})

describe('ALTTEXT_CORS_ORIGINS values', () => {
  const base = { PORT: '0', HOST: '127.0.0.1', ALTTEXT_DB: '/tmp/unused.db' }

  test('origins are normalised as browsers send them; * wins; empty means off', () => {
    expect(loadConfig({ ...base, ALTTEXT_CORS_ORIGINS: 'https://CMS.Example.org/, http://a.example:8080' }).corsOrigins).toEqual([
      'https://cms.example.org',
      'http://a.example:8080',
    ])
    expect(loadConfig({ ...base, ALTTEXT_CORS_ORIGINS: 'https://a.example:443' }).corsOrigins).toEqual(['https://a.example'])
    expect(loadConfig({ ...base, ALTTEXT_CORS_ORIGINS: '*' }).corsOrigins).toBe('*')
    expect(loadConfig({ ...base, ALTTEXT_CORS_ORIGINS: 'https://a.example, *' }).corsOrigins).toBe('*')
    expect(loadConfig({ ...base, ALTTEXT_CORS_ORIGINS: ' , ' }).corsOrigins).toEqual([])
    expect(loadConfig(base).corsOrigins).toEqual([])
  })

  const BAD = [
    'cms.example.org',
    'https://cms.example.org/path',
    'https://cms.example.org?x=1',
    'ftp://cms.example.org',
    'https://user:pw@cms.example.org',
    'https://',
    '**',
    'https://a.example#x',
  ]

  test.each(BAD)('%p is refused naming the variable', (value) => {
    expect(() => loadConfig({ ...base, ALTTEXT_CORS_ORIGINS: value })).toThrow(ConfigError)
    try {
      loadConfig({ ...base, ALTTEXT_CORS_ORIGINS: value })
    } catch (error) {
      expect((error as ConfigError).variable).toBe('ALTTEXT_CORS_ORIGINS')
      expect((error as Error).message).toStartWith('ALTTEXT_CORS_ORIGINS: ')
      expect((error as Error).message).not.toContain('pw@')
    }
  })

  test('a bad value stops start-up with exit code 2 and a message naming the variable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-cors-config-'))
    try {
      const { code, stderr } = await runCommand(
        ['serve'],
        {
          PORT: '0',
          HOST: '127.0.0.1',
          ALTTEXT_DB: join(dir, 'alttext.db'),
          OLLAMA_HOST: 'http://127.0.0.1:9',
          ALTTEXT_CORS_ORIGINS: 'https://ok.example, not an origin',
        },
        ['timeout', '-s', 'KILL', '15', ...SOURCE_COMMAND],
      )
      expect(code).toBe(2)
      expect(stderr).toContain('alttext: bad configuration: ALTTEXT_CORS_ORIGINS: "not an origin" is not an origin')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
