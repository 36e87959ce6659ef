// The model server's API key: sent as a bearer token, never written to the log, never in a response.
// Its answers are read up to a byte cap: a 200 MB one, streamed or not, is cut there, 502, not charged.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { MAX_MODEL_ANSWER_BYTES, MAX_MODEL_METADATA_BYTES } from '../../src/shared/limits'
import { startFakeOpenAi } from '../support/fake-openai'
import { makePng } from '../support/images'
import { startTestService, waitUntil } from '../support/service'
import { startOpenAiEnv, type OpenAiEnv } from './openai-env'

const SECRET = 'sk-local-7f3a9c1e5b2d4680aa11bb22cc33dd44'

let env: OpenAiEnv
let size = 80

beforeAll(async () => {
  env = await startOpenAiEnv({ env: { ALTTEXT_MODEL_API_KEY: SECRET }, model: { apiKey: SECRET } })
})
afterAll(() => env.stop())
beforeEach(() => env.model.reset())

const fresh = () => env.serve(makePng(++size, 30))

describe('the model API key', () => {
  test('is sent as a bearer token on chat completions and /v1/models', async () => {
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(200)
    expect((await env.service.api.get('/ready')).status).toBe(200)
    const seen = env.model.requests.map((r) => r.headers.authorization)
    expect(seen.length).toBeGreaterThan(0)
    for (const header of seen) expect(header).toBe(`Bearer ${SECRET}`)
  })

  test('a server that refuses it (401) → 502, nothing charged; the key is in neither the log nor any answer', async () => {
    env.model.behave({ apiKey: 'sk-some-other-key' })
    const before = await env.creditsUsed()
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(502)
    expect(await env.creditsUsed()).toBe(before)
    expect(res.text).not.toContain(SECRET)
    const ready = await env.service.api.get('/ready')
    expect(ready.text).not.toContain(SECRET)
    expect(env.service.logText()).toContain('401')
    expect(env.service.logText()).not.toContain(SECRET)
    expect(env.service.logText()).not.toContain(SECRET.slice(3, 20))
  })

  test('every request the service made went to loopback', () => {
    expect(new URL(env.model.url).hostname).toBe('127.0.0.1')
    expect(env.service.config.modelApiKey).toBe(SECRET)
  })
})

const HUGE = 200 * 1024 * 1024
/** What a host may have sent before the service closed the connection: the cap and socket buffers, far below HUGE. */
const FAR_BELOW = 24 * 1024 * 1024

describe('a huge answer is cut at the cap', () => {
  for (const streamed of [false, true]) {
    test(`a 200 MB chat completion${streamed ? ' sent as SSE' : ''} → 502 upstream_error, the connection closed early, nothing charged`, async () => {
      env.model.behave({ hugeReply: { bytes: HUGE, streamed } })
      const before = await env.creditsUsed()
      const res = await env.generate({ image_url: fresh() })
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_error')
      await waitUntil(() => env.model.aborted() === 1, 'the fake sees the connection closed')
      expect(env.model.bytesStreamed()).toBeGreaterThan(MAX_MODEL_ANSWER_BYTES)
      expect(env.model.bytesStreamed()).toBeLessThan(FAR_BELOW)
      expect(await env.creditsUsed()).toBe(before)
      expect(env.service.logs.findLast((l) => l.msg === 'model call failed')?.failure).toBe('too_large')
    })
  }

  test('a 200 MB /v1/models: /ready is 503 with the model check failed; the connection closed early', async () => {
    const model = await startFakeOpenAi({ hugeModels: { bytes: HUGE } })
    const service = await startTestService({ env: { ALTTEXT_MODEL_API: 'openai', OLLAMA_HOST: model.url } })
    try {
      const ready = await service.api.get('/ready')
      expect(ready.status).toBe(503)
      expect(ready.body.checks.model).toEqual({ ok: false, detail: 'the model server sent an answer over the size limit' })
      await waitUntil(() => model.aborted() >= 1, 'the fake sees the connection closed')
      expect(model.bytesStreamed()).toBeGreaterThan(MAX_MODEL_METADATA_BYTES)
      expect(model.bytesStreamed()).toBeLessThan(2 * FAR_BELOW)
    } finally {
      await service.stop()
      await model.stop()
    }
  })
})
