// ALTTEXT_REGISTRATION, the sign-ups it lets through: everyone by default, the listed email domains
// (whatever the case of the address), and, when closed, the accounts the operator makes.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { adminOf } from '../admin/support'
import { startTestService, type TestService, uniqueEmail, VALID_PASSWORD } from '../support/service'

setDefaultTimeout(30_000)

const services: TestService[] = []
const start = async (registration?: string) => {
  const service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ...(registration && { ALTTEXT_REGISTRATION: registration }) } })
  services.push(service)
  return service
}
afterAll(async () => {
  await Promise.all(services.map((service) => service.stop()))
})

describe('open (the default)', () => {
  let service: TestService
  beforeAll(async () => {
    service = await start()
  })

  test('anyone signs up; GET /api/registration says so', async () => {
    expect((await service.api.post('/api/register', { email: uniqueEmail(), password: VALID_PASSWORD })).status).toBe(201)
    expect((await service.api.get('/api/registration')).body).toEqual({ policy: 'open', domains: [], message: null })
  })
})

describe('domains:', () => {
  let service: TestService
  beforeAll(async () => {
    service = await start('domains: Example.org , @staff.example.net')
  })

  test('an address at a listed domain signs up, in any case and with spaces around it', async () => {
    for (const email of [`dev-${Date.now()}@example.org`, `  Ops-${Date.now()}@EXAMPLE.ORG `, `lead-${Date.now()}@staff.example.net`]) {
      const res = await service.api.post('/api/register', { email, password: VALID_PASSWORD })
      expect({ email, status: res.status }).toEqual({ email, status: 201 })
      expect(res.body.email).toBe(email.trim().toLowerCase())
    }
  })

  test('GET /api/registration lists the domains as they are matched, and the message for the rest', async () => {
    const res = await service.api.get('/api/registration')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      policy: 'domains',
      domains: ['example.org', 'staff.example.net'],
      message: expect.stringContaining('example.org or staff.example.net'),
    })
  })
})

describe('closed', () => {
  let service: TestService
  beforeAll(async () => {
    service = await start('closed')
  })

  test('the operator still makes accounts, and their keys work', async () => {
    const email = uniqueEmail('by-operator')
    const made = await adminOf(service, { ALTTEXT_REGISTRATION: 'closed' })('accounts', 'create', email)
    expect(made.code).toBe(0)
    const key = made.stdout.match(/alt_[0-9a-f]{64}/)![0]
    expect((await service.api.get('/api/usage', key)).status).toBe(200)
  })

  test('GET /api/registration says it is closed and how to get an account', async () => {
    const res = await service.api.get('/api/registration')
    expect(res.body).toEqual({ policy: 'closed', domains: [], message: expect.stringContaining('alttext admin accounts create') })
  })
})
