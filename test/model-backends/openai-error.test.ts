// ALTTEXT_MODEL_API=openai failures map as Ollama's do: 502 upstream_error, 504 upstream_timeout when
// the deadline passes, nothing charged; /ready fails when the model is not listed or cannot see.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { startFakeOpenAi } from '../support/fake-openai'
import { makePng } from '../support/images'
import { startTestService } from '../support/service'
import { startOpenAiEnv, type OpenAiEnv } from './openai-env'

let env: OpenAiEnv
let size = 60

beforeAll(async () => {
  env = await startOpenAiEnv({ overrides: { generationDeadlineMs: 1500 } })
})
afterAll(() => env.stop())
beforeEach(() => env.model.reset())

const fresh = () => env.serve(makePng(++size, 30))

describe('upstream failures', () => {
  test('a 500 in the OpenAI error shape → 502, logged, nothing charged', async () => {
    env.model.behave({ failStatus: 500, failMessage: 'CUDA error: out of memory' })
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(env.service.logText()).toContain('CUDA error: out of memory')
    expect(await env.creditsUsed()).toBe(0)
  })

  test('the model not served (404) → 502, nothing charged', async () => {
    env.model.behave({ models: ['qwen2.5-vl'] })
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(env.service.logText()).toContain('model llava not found')
    expect(await env.creditsUsed()).toBe(0)
  })

  test('a 200 that is no chat completion → 502, nothing charged', async () => {
    env.model.behave({ malformed: true })
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(502)
    expect(await env.creditsUsed()).toBe(0)
  })

  test('a 200 whose body is not JSON → 502, nothing charged', async () => {
    env.model.behave({ malformed: 'invalid-json' })
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(await env.creditsUsed()).toBe(0)
  })

  test.each(['repeated-char', 'prompt-echo', 'bare-url'] as const)('an answer that is no alt text (%s) → 502, nothing charged', async (junk) => {
    env.model.behave({ junk })
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(await env.creditsUsed()).toBe(0)
  })

  test('an answer that was all reasoning → 502, nothing charged', async () => {
    env.model.behave({ reply: '<think>I need to look at this image carefully and' })
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(502)
    expect(await env.creditsUsed()).toBe(0)
  })

  test('a model that never answers → 504 at the deadline, the upstream request aborted, nothing charged', async () => {
    env.model.behave({ hang: true })
    const res = await env.generate({ image_url: fresh() })
    expect(res.status).toBe(504)
    expect(res.body.error.code).toBe('upstream_timeout')
    const deadline = Date.now() + 3000
    while (env.model.aborted() === 0 && Date.now() < deadline) await Bun.sleep(20)
    expect(env.model.aborted()).toBe(1)
    expect(await env.creditsUsed()).toBe(0)
  })

  test('a server that is not there → 502, nothing charged, and /ready says unreachable', async () => {
    const service = await startTestService({
      env: {
        ALTTEXT_MODEL_API: 'openai',
        OLLAMA_HOST: 'http://127.0.0.1:9',
        ALTTEXT_RATE_LIMITS: 'off',
        ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
        NODE_EXTRA_CA_CERTS: env.images.caPath,
      },
    })
    try {
      const { apiKey } = await service.api.register()
      const res = await service.api.post('/api/alt-text', { image_url: fresh() }, apiKey)
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_error')
      expect((await service.api.get('/api/usage', apiKey)).body.credits.used).toBe(0)
      const ready = await service.api.get('/ready')
      expect(ready.status).toBe(503)
      expect(ready.body.checks.model).toEqual({ ok: false, detail: 'the model server is not reachable' })
    } finally {
      await service.stop()
    }
  })
})

describe('a pool of OpenAI-compatible hosts', () => {
  test('a host answering invalid JSON: the call is retried on the other host, 200, charged once', async () => {
    const broken = await startFakeOpenAi({ malformed: 'invalid-json' })
    const service = await startTestService({
      env: {
        ALTTEXT_MODEL_API: 'openai',
        ALTTEXT_MODEL_HOSTS: `${broken.url},${env.model.url}`,
        ALTTEXT_RATE_LIMITS: 'off',
        ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
        NODE_EXTRA_CA_CERTS: env.images.caPath,
      },
    })
    try {
      const { apiKey } = await service.api.register()
      for (let i = 0; i < 4; i++) expect((await service.api.post('/api/alt-text', { image_url: fresh() }, apiKey)).status).toBe(200)
      expect(broken.chatRequests().length).toBeGreaterThan(0)
      expect(env.model.chatRequests().length).toBe(4)
      expect((await service.api.get('/api/usage', apiKey)).body.credits.used).toBe(4)
    } finally {
      await service.stop()
      await broken.stop()
    }
  })
})

describe('readiness from /v1/models', () => {
  test('the model missing from the list: not ready, no address in the body', async () => {
    const service = await startTestService({ env: { ALTTEXT_MODEL_API: 'openai', OLLAMA_HOST: env.model.url, ALTTEXT_MODEL: 'gemma3' } })
    try {
      const ready = await service.api.get('/ready')
      expect(ready.status).toBe(503)
      expect(ready.body.checks.model).toEqual({ ok: false, detail: 'model gemma3 is not served by the model server' })
      expect(ready.text).not.toContain('127.0.0.1')
      expect(service.logText()).toContain('/v1/models')
    } finally {
      await service.stop()
    }
  })

  test('a listed model whose input modalities lack images: not ready', async () => {
    env.model.behave({ models: [{ id: 'llava', input_modalities: ['text'] }] })
    const service = await startTestService({ env: { ALTTEXT_MODEL_API: 'openai', OLLAMA_HOST: env.model.url } })
    try {
      const ready = await service.api.get('/ready')
      expect(ready.status).toBe(503)
      expect(ready.body.checks.model.detail).toContain('cannot see images')
      env.model.behave({ models: [{ id: 'llava', input_modalities: ['text', 'image'] }] })
    } finally {
      await service.stop()
    }
    const again = await startTestService({ env: { ALTTEXT_MODEL_API: 'openai', OLLAMA_HOST: env.model.url } })
    try {
      expect((await again.api.get('/ready')).status).toBe(200)
    } finally {
      await again.stop()
    }
  })
})
