// The role check costs no database read once a key is warm: the key's record carries its organisation
// and its maker's role there (keys.findByHash returns them), and the cached key is what later requests
// use. Every call the service makes into the store's keys, orgs, accounts and sessions is counted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Store } from '../../src/store/contract'
import { startTestService, type TestService } from '../support/service'

const WATCHED = ['keys', 'orgs', 'accounts', 'sessions'] as const
const calls: string[] = []
let store: Store
let service: TestService

/** The store with each method of the watched parts recording `part.method` before it runs. */
function counting(inner: Store): Store {
  store = inner
  const wrapped: Record<string, unknown> = { ...inner }
  for (const part of WATCHED) {
    const target = inner[part] as unknown as Record<string, unknown>
    wrapped[part] = new Proxy(target, {
      get(object, name, receiver) {
        const value = Reflect.get(object, name, receiver)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          calls.push(`${part}.${String(name)}`)
          return (value as (...a: unknown[]) => unknown).apply(object, args)
        }
      },
    })
  }
  return wrapped as unknown as Store
}

/** What a request read for authentication: any lookup of a key, an organisation, a membership, an account. */
const authReads = () => calls.filter((c) => /^(keys\.(findByHash|get\w*)|orgs\.(membership|memberships|byId|byPublicId)|accounts\.\w+|sessions\.\w+)$/u.test(c))

let orgKey: string
let personalKey: string

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, wrapStore: counting })
  const owner = await service.api.register()
  const author = await service.api.register()
  const made = await service.api.post('/api/orgs', { name: 'Warm keys' }, owner.apiKey)
  expect(made.status).toBe(201)
  const org = await store.orgs.byPublicId(made.body.id)
  const [row] = await service.query('SELECT id FROM accounts WHERE email = ?', author.email)
  const authorId = Number((row as { id: number | string }).id)
  expect(await store.orgs.addMember(org!.id, authorId, 'author', { accountId: null, email: null, now: Date.now() })).toMatchObject({ role: 'author' })
  const key = await service.api.post('/api/keys', { label: 'warm', org_id: made.body.id }, author.apiKey)
  expect(key.status).toBe(201)
  orgKey = key.body.api_key
  personalKey = author.apiKey
})
afterAll(async () => {
  await service?.stop()
})

describe('a warm key', () => {
  test("an author's organisation key: the first request reads the key, the next ones read nothing to authenticate", async () => {
    calls.length = 0
    const first = await service.api.get('/api/usage', orgKey)
    expect(first.status).toBe(200)
    expect(calls).toContain('keys.findByHash')
    calls.length = 0
    for (let i = 0; i < 10; i++) expect((await service.api.get('/api/usage', orgKey)).status).toBe(200)
    expect(authReads()).toEqual([])
  })

  test('a route the role allows (the queue) and one it does not (a decision) read nothing to authenticate either', async () => {
    await service.api.get('/api/usage', orgKey) // warm, whatever ran before
    calls.length = 0
    for (let i = 0; i < 5; i++) {
      expect((await service.api.get('/api/suggestions?status=pending&limit=50', orgKey)).status).toBe(200)
      const refused = await service.api.post('/api/suggestions/sug_000000000000000000000000/accept', {}, orgKey)
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe('forbidden_for_role')
    }
    expect(authReads()).toEqual([])
  })

  test('a personal key is no different: no read once warm', async () => {
    await service.api.get('/api/usage', personalKey)
    calls.length = 0
    for (let i = 0; i < 10; i++) expect((await service.api.get('/api/usage', personalKey)).status).toBe(200)
    expect(authReads()).toEqual([])
  })
})
