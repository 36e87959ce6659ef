// The review queue refuses bad input in the contract's shape: oversized fields, forged cursors, unknown
// ids, a decision on a decided suggestion, undo of a pending one; nothing half-written.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectApiError } from '../support/assertions'
import { makePng } from '../support/images'
import { base64, type QueueEnv, startQueueEnv } from './support'

let env: QueueEnv
beforeAll(async () => {
  env = await startQueueEnv()
})
afterAll(async () => {
  await env.stop()
})

const post = (path: string, body: unknown, key = env.keys.author) => env.service.api.post(path, body, key)
const image = () => base64(makePng(20, 20))

describe('POST /api/suggestions', () => {
  test('a 10 MB proposed_alt is 400 (or 413 for the body), and nothing is stored', async () => {
    const before = (await env.service.api.get('/api/suggestions', env.keys.author)).body.total
    const res = await post('/api/suggestions', { image_base64: image(), target: { kind: 'file', ref: 'a' }, proposed_alt: 'x'.repeat(10 * 1024 * 1024) })
    expect([400, 413]).toContain(res.status)
    expect(res.body.error.code).toMatch(/^(invalid_request|payload_too_large)$/u)
    expect((await env.service.api.get('/api/suggestions', env.keys.author)).body.total).toBe(before)
  })

  test('target fields over 500 characters, a missing target, an empty kind: 400 naming the field', async () => {
    const long = await post('/api/suggestions', { image_base64: image(), target: { kind: 'file', ref: 'r'.repeat(501) }, proposed_alt: 'A cat.' })
    expectApiError(long, 400, 'invalid_request')
    expect(long.body.error.message).toContain('ref')
    expectApiError(await post('/api/suggestions', { image_base64: image(), proposed_alt: 'A cat.' }), 400, 'invalid_request')
    expectApiError(await post('/api/suggestions', { image_base64: image(), target: { kind: '', ref: 'x' }, proposed_alt: 'A cat.' }), 400, 'invalid_request')
  })

  test('no image source, or a broken one: 400', async () => {
    expectApiError(await post('/api/suggestions', { target: { kind: 'file', ref: 'a' }, proposed_alt: 'A cat.' }), 400, 'invalid_request')
    expectApiError(
      await post('/api/suggestions', { image_base64: 'bm90IGFuIGltYWdl', target: { kind: 'file', ref: 'a' }, proposed_alt: 'A cat.' }),
      400,
      'invalid_image',
    )
  })
})

describe('listing', () => {
  test('a forged or malformed cursor, an unknown status, a limit out of range: 400', async () => {
    for (const query of ['cursor=abc', 'cursor=-1', 'cursor=0', 'status=maybe', 'limit=0', 'limit=101', 'mine=yes'])
      expectApiError(await env.service.api.get(`/api/suggestions?${query}`, env.keys.author), 400, 'invalid_request')
  })
  test("a cursor taken from another organisation's page shows only this organisation's suggestions", async () => {
    await env.submit()
    const theirs = await env.service.api.get('/api/suggestions?cursor=999999999', env.keys.outsider)
    expect(theirs.status).toBe(200)
    expect(theirs.body.suggestions).toEqual([])
  })
})

describe('deciding', () => {
  test('an unknown or malformed id: 404 suggestion_not_found or 400', async () => {
    expectApiError(await post('/api/suggestions/sug_000000000000000000000000/accept', {}, env.keys.reviewer), 404, 'suggestion_not_found')
    expectApiError(await post('/api/suggestions/nope/accept', {}, env.keys.reviewer), 400, 'invalid_request')
  })
  test('a second decision is 409 already_decided and keeps the first; undo of a pending one is 409 not_decided', async () => {
    const id = await env.submit()
    expect((await post(`/api/suggestions/${id}/reject`, { reason: 'no' }, env.keys.reviewer)).status).toBe(200)
    expectApiError(await post(`/api/suggestions/${id}/accept`, {}, env.keys.reviewer), 409, 'already_decided')
    expect((await env.service.api.get(`/api/suggestions/${id}`, env.keys.author)).body.status).toBe('rejected')
    expect((await post(`/api/suggestions/${id}/reopen`, undefined, env.keys.reviewer)).status).toBe(200)
    expectApiError(await post(`/api/suggestions/${id}/reopen`, undefined, env.keys.reviewer), 409, 'not_decided')
  })
  test('two reviewers deciding one suggestion at once: one wins, the other gets 409 already_decided', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await env.submit()
      const answers = await Promise.all([
        post(`/api/suggestions/${id}/accept`, {}, env.keys.reviewer),
        post(`/api/suggestions/${id}/reject`, { reason: 'r' }, env.keys.owner),
        post(`/api/suggestions/${id}/accept`, { alt_text: 'Other.' }, env.keys.owner),
      ])
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409])
      for (const lost of answers.filter((a) => a.status === 409)) expect(lost.body.error.code).toBe('already_decided')
      const log = await env.service.api.get(`/api/orgs/${env.orgA}/activity?limit=1`, env.keys.owner)
      expect(log.body.entries[0].subject).toBe(id)
    }
  })
  test('an alt_text over 2,000 characters or empty, a reason over 1,000, too many ids: 400', async () => {
    const id = await env.submit()
    expectApiError(await post(`/api/suggestions/${id}/accept`, { alt_text: 'x'.repeat(2001) }, env.keys.reviewer), 400, 'invalid_request')
    expectApiError(await post(`/api/suggestions/${id}/accept`, { alt_text: '   ' }, env.keys.reviewer), 400, 'invalid_request')
    expectApiError(await post(`/api/suggestions/${id}/reject`, { reason: 'x'.repeat(1001) }, env.keys.reviewer), 400, 'invalid_request')
    const ids = Array.from({ length: 101 }, (_, i) => `sug_${i.toString(16).padStart(24, '0')}`)
    expectApiError(await post('/api/suggestions/accept', { ids }, env.keys.reviewer), 400, 'invalid_request')
    expect((await env.service.api.get(`/api/suggestions/${id}`, env.keys.author)).body.status).toBe('pending')
  })
})
