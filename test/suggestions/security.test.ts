// Another organisation's suggestions are a 404 everywhere; authors cannot decide; the role check comes
// before the body is read.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectApiError } from '../support/assertions'
import { type QueueEnv, startQueueEnv } from './support'

let env: QueueEnv
beforeAll(async () => {
  env = await startQueueEnv()
})
afterAll(async () => {
  await env.stop()
})

describe('another organisation', () => {
  test("every suggestion route answers another organisation's id as if it did not exist", async () => {
    const id = await env.submit()
    const key = env.keys.outsider
    expectApiError(await env.service.api.get(`/api/suggestions/${id}`, key), 404, 'suggestion_not_found')
    expectApiError(await env.service.api.get(`/api/suggestions/${id}/thumbnail`, key), 404, 'suggestion_not_found')
    for (const action of ['accept', 'reject', 'reopen'])
      expectApiError(await env.service.api.post(`/api/suggestions/${id}/${action}`, {}, key), 404, 'suggestion_not_found')
    const bulk = await env.service.api.post('/api/suggestions/accept', { ids: [id] }, key)
    expect(bulk.body).toEqual({ accepted: [], already_decided: [], not_found: [id] })
    expect((await env.service.api.get('/api/suggestions', key)).body.suggestions).toEqual([])
    expect((await env.service.api.get(`/api/suggestions/${id}`, env.keys.author)).body.status).toBe('pending')
  })
})

describe('roles', () => {
  test('an author submits and reads but cannot decide: 403 forbidden_for_role, even with a bad body', async () => {
    const id = await env.submit()
    expectApiError(await env.service.api.post(`/api/suggestions/${id}/accept`, {}, env.keys.author), 403, 'forbidden_for_role')
    expectApiError(await env.service.api.post(`/api/suggestions/${id}/accept`, { alt_text: 42 }, env.keys.author), 403, 'forbidden_for_role')
    expectApiError(await env.service.api.post('/api/suggestions/accept', { ids: 'nope' }, env.keys.author), 403, 'forbidden_for_role')
    expect((await env.service.api.get(`/api/suggestions/${id}`, env.keys.author)).body.status).toBe('pending')
  })
  test('the personal key of a member acts in its personal organisation: it does not see the team queue', async () => {
    const id = await env.submit()
    const personal = await env.service.api.register()
    expectApiError(await env.service.api.get(`/api/suggestions/${id}`, personal.apiKey), 404, 'suggestion_not_found')
  })
})
