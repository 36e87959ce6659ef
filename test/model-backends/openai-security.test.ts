// The model server's API key: sent as a bearer token, never written to the log, never in a response.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { makePng } from '../support/images'
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
