// Shared by the organisation webhook tests: an organisation with members of each role (invited through the
// API, the token read from the mail's log line), suggestions to decide, and its suggestion.decided deliveries.
import { expect } from 'bun:test'
import { makePng } from '../support/images'
import type { Api, TestService } from '../support/service'

export type Member = { email: string; key: string }
export type TestOrg = { id: string; owner: Member; member(role: 'admin' | 'reviewer' | 'author'): Promise<Member> }

const lastToken = (text: string) => [...text.matchAll(/token=([0-9a-f]{64})/gu)].at(-1)?.[1]

/** A new organisation whose owner acts with a key made for it; `member` invites and admits one more of a role. */
export async function makeOrg(service: TestService, name = 'Docs team'): Promise<TestOrg> {
  const { api } = service
  const person = await api.register()
  const id = (await api.post('/api/orgs', { name }, person.apiKey)).body.id as string
  const orgKey = async (personalKey: string) => {
    const made = await api.post('/api/keys', { org_id: id }, personalKey)
    expect(made.status).toBe(201)
    return made.body.api_key as string
  }
  const owner = { email: person.email, key: await orgKey(person.apiKey) }
  return {
    id,
    owner,
    async member(role) {
      const joining = await api.register()
      expect((await api.post(`/api/orgs/${id}/invitations`, { email: joining.email, role }, owner.key)).status).toBe(201)
      const token = lastToken(service.logText())
      expect((await api.post('/api/invitations/accept', { token }, joining.apiKey)).status).toBe(200)
      return { email: joining.email, key: await orgKey(joining.apiKey) }
    },
  }
}

let made = 0

/** A pending suggestion with a proposed text (free: no model call). */
export async function suggestion(api: Api, key: string): Promise<any> {
  const ref = `docs/page-${++made}.md:3:1`
  const res = await api.post(
    '/api/suggestions',
    { image_base64: Buffer.from(makePng(64, 48)).toString('base64'), target: { kind: 'file', ref, site: 'docs' }, proposed_alt: `Alt text of ${ref}.` },
    key,
  )
  expect(res.status).toBe(201)
  return res.body
}

export async function setWebhook(api: Api, orgId: string, key: string, url: string): Promise<{ url: string; secret: string; created_at: string }> {
  const res = await api.request('PUT', `/api/orgs/${orgId}/webhook`, { key, body: { url } })
  expect(res.status).toBe(200)
  return res.body
}

/** The organisation's deliveries of one suggestion's events (GET /api/webhook-deliveries with a key of the organisation), oldest first. */
export async function deliveriesOf(api: Api, key: string, suggestionId: string): Promise<any[]> {
  const res = await api.get('/api/webhook-deliveries?limit=100', key)
  expect(res.status).toBe(200)
  return res.body.items.filter((d: { suggestion_id: string | null }) => d.suggestion_id === suggestionId).reverse()
}
