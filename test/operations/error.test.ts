// Operations failure paths: readiness when the model server is down or lacks the model, unknown routes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { startTestService, waitUntil, type TestService } from '../support/service'

let unreachable: TestService
let fake: FakeOllama
let missingModel: TestService

beforeAll(async () => {
  // The harness default OLLAMA_HOST is a closed port on loopback.
  unreachable = await startTestService()
  fake = await startFakeOllama({ models: ['moondream:latest', 'llava:13b'] })
  missingModel = await startTestService({ env: { OLLAMA_HOST: fake.url, ALTTEXT_MODEL: 'llava' } })
})
afterAll(async () => {
  await unreachable.stop()
  await missingModel.stop()
  await fake.stop()
})

function expectNotReady(res: { status: number; body: any; headers: Headers }) {
  expect(res.status).toBe(503)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.body.error).toEqual({ code: 'not_ready', message: expect.any(String), docs: 'http://alttext.test/docs/errors#not_ready' })
  expect(res.body.error.message.length).toBeGreaterThan(0)
  expect(res.body.checks).toBeDefined()
  expect(res.body.checks.database).toEqual({ ok: true, detail: expect.any(String) })
  expect(res.body.checks.model).toEqual({ ok: false, detail: expect.any(String) })
}

describe('start-up', () => {
  test('the log says where the API reference is and warns that the model server is unreachable', async () => {
    const listening = unreachable.logs.find((l) => l.msg === 'listening')
    expect(listening?.docs).toBe(`${unreachable.url}/docs`)
    await waitUntil(() => unreachable.logs.some((l) => l.level === 'warn' && /model server is not ready/.test(String(l.msg))), 'the start-up warning')
  })
})

describe('GET /ready when not ready', () => {
  test('503 not_ready with the checks when Ollama is unreachable', async () => {
    const res = await unreachable.api.get('/ready')
    expectNotReady(res)
    // The failed check is named in the message.
    expect(res.body.error.message).toContain('model')
  })

  test('503 not_ready when Ollama runs but lacks the model, telling the operator to pull it', async () => {
    const res = await missingModel.api.get('/ready')
    expectNotReady(res)
    expect(res.body.error.message).toContain('ollama pull llava')
    expect(res.body.checks.model.detail).toContain('ollama pull llava')
    // It did ask the model server.
    expect(fake.requests.some((r) => r.path === '/api/tags')).toBe(true)
  })

  test('another tag of the model does not count: llava:13b is not llava (llava:latest)', async () => {
    const res = await missingModel.api.get('/ready')
    expect(res.status).toBe(503)
    expect(res.body.checks.model.ok).toBe(false)
  })

  test('goes back to not ready when the model server stops after start-up', async () => {
    const transient = await startFakeOllama({ models: ['llava:latest'] })
    // Rate limits off: the loop below polls /ready until the cached model check expires.
    const svc = await startTestService({ env: { OLLAMA_HOST: transient.url, ALTTEXT_RATE_LIMITS: 'off' } })
    try {
      expect((await svc.api.get('/ready')).status).toBe(200)
      await transient.stop()
      await waitUntil(async () => (await svc.api.get('/ready')).status === 503, 'the cached model check to expire', 15_000)
      expectNotReady(await svc.api.get('/ready'))
      // Liveness is unaffected.
      expect((await svc.api.get('/health')).status).toBe(200)
    } finally {
      await svc.stop()
      await transient.stop()
    }
  })

  test('a not-ready answer is logged as a request with status 503', async () => {
    const res = await unreachable.api.get('/ready')
    const id = res.headers.get('x-request-id')
    const line = await unreachable.accessLine(id!)
    expect(line).toMatchObject({ method: 'GET', path: '/ready', status: 503 })
  })
})

describe('operations routes and methods', () => {
  test('an unknown route is 404 not_found in the structured shape', async () => {
    const res = await unreachable.api.get('/healthz')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String), docs: 'http://alttext.test/docs/errors#not_found' } })
  })

  test('POST /health is not a route: 404 not_found, never a 500', async () => {
    const res = await unreachable.api.request('POST', '/health', { body: {} })
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('not_found')
  })

  test('every response carries an X-Request-Id, errors included', async () => {
    for (const path of ['/health', '/ready', '/nope']) {
      const res = await unreachable.api.get(path)
      expect(res.headers.get('x-request-id')).toMatch(/^[\w.:-]{1,128}$/)
    }
  })
})

describe('readiness and the vision capability', () => {
  test('a model without the vision capability is not ready, and the reason says so', async () => {
    const { startFakeOllama } = await import('../support/fake-ollama')
    const { startTestService } = await import('../support/service')
    const ollama = await startFakeOllama({ capabilities: ['completion'] })
    const service = await startTestService({ env: { OLLAMA_HOST: ollama.url, ALTTEXT_MODEL: 'llava', ALTTEXT_RATE_LIMITS: 'off' } })
    try {
      const res = await service.api.get('/ready')
      expect(res.status).toBe(503)
      expect(res.body.error.code).toBe('not_ready')
      expect(res.body.checks.model.detail).toContain('cannot see images')
      ollama.behave({ capabilities: ['completion', 'vision'] })
      // The model check is cached for a few seconds: ready once it is asked again.
      await waitUntil(async () => (await service.api.get('/ready')).status === 200, 'the cached model check to expire', 15_000)
    } finally {
      await service.stop()
      await ollama.stop()
    }
  })
})
