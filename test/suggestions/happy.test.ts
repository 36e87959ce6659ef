// The review queue, the paths that succeed: submit (generated or proposed), list with filters and paging,
// accept, edit, reject, undo, accept several; the thumbnail; the decisions in the activity log.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'

let env: AltTextEnv
let orgId: string
let authorKey: string
let reviewerKey: string

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const target = (ref: string, kind = 'file') => ({ kind, ref, site: 'docs' })

beforeAll(async () => {
  env = await startAltTextEnv()
  const { service } = env
  const owner = await service.api.register()
  orgId = (await service.api.post('/api/orgs', { name: 'Reviewers' }, owner.apiKey)).body.id
  const ownerKey = (await service.api.post('/api/keys', { org_id: orgId }, owner.apiKey)).body.api_key
  reviewerKey = ownerKey
  const author = await service.api.register()
  const me = await service.api.get('/api/orgs', ownerKey)
  expect(me.status).toBe(200)
  // The operator's way in (no mail here): the owner invites, and the test reads the token from the log line.
  const invite = await service.api.post(`/api/orgs/${orgId}/invitations`, { email: author.email, role: 'author' }, ownerKey)
  expect(invite.status).toBe(201)
  const token = /token=([0-9a-f]{64})/u.exec(service.logText())?.[1]
  expect(token).toBeDefined()
  expect((await service.api.post('/api/invitations/accept', { token }, author.apiKey)).status).toBe(200)
  authorKey = (await service.api.post('/api/keys', { org_id: orgId }, author.apiKey)).body.api_key
})
afterAll(async () => {
  await env.stop()
})

describe('POST /api/suggestions', () => {
  test('with proposed_alt: 201 pending, free, checked, with a thumbnail', async () => {
    const res = await env.service.api.post(
      '/api/suggestions',
      { image_base64: base64(makePng(300, 200)), target: target('docs/a.md:3:1'), current_alt: '', proposed_alt: 'A red kite over a beach.' },
      authorKey,
    )
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      status: 'pending',
      proposed_alt: 'A red kite over a beach.',
      current_alt: '',
      target: { kind: 'file', ref: 'docs/a.md:3:1', site: 'docs', fingerprint: null },
      language: 'en',
      final_alt: null,
    })
    expect(res.body.id).toMatch(/^sug_[0-9a-f]{24}$/u)
    expect(env.ollama.chatRequests()).toHaveLength(0)
    const thumb = await fetch(`${env.service.url}${res.body.image.thumbnail_url}`, { headers: { 'x-api-key': authorKey } })
    expect(thumb.headers.get('content-type')).toBe('image/webp')
    expect((await thumb.arrayBuffer()).byteLength).toBeGreaterThan(20)
  })

  test('without proposed_alt: the service writes it (one credit)', async () => {
    const before = (await env.service.api.get('/api/usage', authorKey)).body
    const res = await env.service.api.post(
      '/api/suggestions',
      { image_url: env.serve(makePng(320, 240), 'image/png'), target: target('https://example.com/p', 'url') },
      authorKey,
    )
    expect(res.status).toBe(201)
    expect(res.body.proposed_alt).toBe('Two children flying a red kite on a windy beach.')
    const after = (await env.service.api.get('/api/usage', authorKey)).body
    expect(JSON.stringify(after)).not.toBe(JSON.stringify(before))
  })
})

describe('deciding', () => {
  test('accept, edit, reject, undo; a second decision is 409 already_decided; the log has each', async () => {
    const make = async (ref: string) =>
      (
        await env.service.api.post(
          '/api/suggestions',
          { image_base64: base64(makePng(64, 64)), target: target(ref), proposed_alt: `Alt text of ${ref}.` },
          authorKey,
        )
      ).body.id as string
    const [a, b, c] = [await make('x:1:1'), await make('x:2:1'), await make('x:3:1')]
    const accepted = await env.service.api.post(`/api/suggestions/${a}/accept`, {}, reviewerKey)
    expect(accepted.body).toMatchObject({ status: 'accepted', final_alt: 'Alt text of x:1:1.' })
    const again = await env.service.api.post(`/api/suggestions/${a}/accept`, {}, reviewerKey)
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe('already_decided')
    const edited = await env.service.api.post(`/api/suggestions/${b}/accept`, { alt_text: 'A better  text.' }, reviewerKey)
    expect(edited.body).toMatchObject({ status: 'edited', final_alt: 'A better text.' })
    const rejected = await env.service.api.post(`/api/suggestions/${c}/reject`, { reason: 'decorative' }, reviewerKey)
    expect(rejected.body).toMatchObject({ status: 'rejected', final_alt: null, reason: 'decorative' })
    const undone = await env.service.api.post(`/api/suggestions/${c}/reopen`, undefined, reviewerKey)
    expect(undone.body).toMatchObject({ status: 'pending', decided_by: null })
    const byAuthor = await env.service.api.post(`/api/suggestions/${c}/accept`, {}, authorKey)
    expect(byAuthor.status).toBe(403)
    const log = await env.service.api.get(`/api/orgs/${orgId}/activity?limit=4`, reviewerKey)
    expect(log.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'suggestion.reopened',
      'suggestion.rejected',
      'suggestion.edited',
      'suggestion.accepted',
    ])
  })

  test('list filters and pages; accept several', async () => {
    const page = await env.service.api.get('/api/suggestions?status=pending&limit=2', authorKey)
    expect(page.status).toBe(200)
    expect(page.body.suggestions).toHaveLength(2)
    expect(page.body.total).toBeGreaterThanOrEqual(3)
    const next = await env.service.api.get(`/api/suggestions?status=pending&limit=2&cursor=${page.body.next_cursor}`, authorKey)
    expect(next.body.suggestions[0].id).not.toBe(page.body.suggestions[0].id)
    const ids = page.body.suggestions.map((s: { id: string }) => s.id)
    const bulk = await env.service.api.post('/api/suggestions/accept', { ids: [...ids, 'sug_000000000000000000000000'] }, reviewerKey)
    expect(bulk.body).toEqual({ accepted: ids, already_decided: [], not_found: ['sug_000000000000000000000000'] })
  })
})
