// GET /metrics with ALTTEXT_METRICS_TOKEN set: without the bearer token, or with another, it is 401
// invalid_metrics_token in the contract's error shape, also from loopback; a bad token stops start-up.
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'
import { type Scrape, scrape } from '../support/metrics'
import { serviceForFile, type TestService } from '../support/service'

const TOKEN = 'mtok-5f0c2b7e9a1d4c8e-canary'
let service: TestService
serviceForFile({ env: { ALTTEXT_METRICS_TOKEN: TOKEN } }, (started) => ({ service } = started))

const expectRefused = async (headers: Record<string, string>, message: RegExp) => {
  const res = await scrape(service.url, headers)
  expect(res.status).toBe(401)
  expect(res.headers.get('content-type')).toStartWith('application/json')
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="alttext metrics"')
  const body = JSON.parse(res.text)
  expect(body).toEqual({
    error: { code: 'invalid_metrics_token', message: expect.stringMatching(message), docs: 'http://alttext.test/docs/errors#invalid_metrics_token' },
  })
  expect(res.text).not.toContain('alttext_http_requests_total')
}

describe('with ALTTEXT_METRICS_TOKEN set', () => {
  test('no Authorization header: 401 invalid_metrics_token, also for a loopback client', async () => {
    await expectRefused({}, /Authorization: Bearer/)
  })

  test('a wrong token, a token in another scheme, a token with something appended: 401', async () => {
    await expectRefused({ authorization: 'Bearer mtok-0000000000000000-wrong' }, /not the one/)
    await expectRefused({ authorization: `Basic ${btoa(`prometheus:${TOKEN}`)}` }, /Authorization: Bearer/)
    await expectRefused({ authorization: `Bearer ${TOKEN}x` }, /not the one/)
    await expectRefused({ authorization: `Bearer ${TOKEN.slice(0, -1)}` }, /not the one/)
    await expectRefused({ authorization: 'Bearer' }, /Authorization: Bearer/)
  })

  test('the token as a bearer token (scheme in any case): 200, and refusals are counted as 401s of /metrics', async () => {
    const refusals = (m: Scrape) => m.value('alttext_http_requests_total', { method: 'GET', route: '/metrics', status: '401' })
    const before = await scrape(service.url, { authorization: `Bearer ${TOKEN}` })
    expect(before.status).toBe(200)
    const refused = [await scrape(service.url), await scrape(service.url, { authorization: 'Bearer nope-nope-nope-nope' })]
    for (const res of refused) await service.accessLine(res.headers.get('x-request-id')!)
    const after = await scrape(service.url, { authorization: `bearer ${TOKEN}` })
    expect(after.status).toBe(200)
    expect(refusals(after) - refusals(before)).toBe(2)
  })

  test('the token never reaches the log', async () => {
    await scrape(service.url, { authorization: `Bearer ${TOKEN}` })
    await scrape(service.url, { authorization: `Bearer ${TOKEN}-wrong` })
    expect(service.logs.some((line) => line.msg === 'request' && line.path === '/metrics')).toBe(true)
    expect(service.logText()).not.toContain(TOKEN)
  })
})

describe('ALTTEXT_METRICS_TOKEN values', () => {
  test('shorter than 16 characters or with spaces: start-up stops naming the variable, never echoing the value', () => {
    for (const value of ['short-canary', 'with a space canary']) {
      let error: unknown
      try {
        loadConfig({ ALTTEXT_METRICS_TOKEN: value })
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).variable).toBe('ALTTEXT_METRICS_TOKEN')
      expect((error as Error).message).not.toContain('canary')
    }
  })

  test('unset or blank: no token, so only loopback clients are answered', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined()
    expect(loadConfig({ ALTTEXT_METRICS_TOKEN: '  ' }).metricsToken).toBeUndefined()
    expect(loadConfig({ ALTTEXT_METRICS_TOKEN: ` ${TOKEN} ` }).metricsToken).toBe(TOKEN)
  })
})
