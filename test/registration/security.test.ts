// ALTTEXT_REGISTRATION cannot be talked round: a refused sign-up creates nothing and tells nothing about
// which emails have accounts; addresses crafted to look like an allowed domain are refused.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { adminOf } from '../admin/support'
import { readDb } from '../support/session'
import { startTestService, type TestService, uniqueEmail, VALID_PASSWORD } from '../support/service'

let closed: TestService
let domains: TestService
beforeAll(async () => {
  ;[closed, domains] = await Promise.all([
    startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'closed' } }),
    startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'domains:example.org' } }),
  ])
})
afterAll(async () => {
  await Promise.all([closed?.stop(), domains?.stop()])
})

const accounts = (service: TestService) => readDb(service, (db) => db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts').get()!.n)

describe('a refused sign-up', () => {
  test('creates no account and no key', async () => {
    const email = uniqueEmail()
    const before = accounts(closed)
    expect((await closed.api.post('/api/register', { email, password: VALID_PASSWORD })).status).toBe(403)
    expect(accounts(closed)).toBe(before)
    expect((await closed.api.post('/api/login', { email, password: VALID_PASSWORD })).status).toBe(401)
  })

  test('answers the same whether or not the email has an account (no email_taken hint)', async () => {
    const member = uniqueEmail('member')
    expect((await adminOf(closed, { ALTTEXT_REGISTRATION: 'closed' })('accounts', 'create', member)).code).toBe(0)
    const taken = await closed.api.post('/api/register', { email: member, password: VALID_PASSWORD })
    const fresh = await closed.api.post('/api/register', { email: uniqueEmail(), password: VALID_PASSWORD })
    expect(taken.status).toBe(403)
    expect(taken.body).toEqual(fresh.body)
  })
})

describe('addresses made to look allowed', () => {
  const crafted = [
    'dev@example.org@evil.test',
    'dev@evil.test?@example.org',
    '"dev@example.org"@evil.test',
    'dev@evil.test#@example.org',
    'dev%example.org@evil.test',
    'dev@example.org.',
    'dev@еxample.org', // a Cyrillic "е"
  ]
  for (const email of crafted) {
    test(JSON.stringify(email), async () => {
      const before = accounts(domains)
      const res = await domains.api.post('/api/register', { email, password: VALID_PASSWORD })
      expect([400, 403]).toContain(res.status)
      expect(accounts(domains)).toBe(before)
    })
  }
})
