// Answers from an Ollama host are read up to a byte cap: a 200 MB answer, streamed or not, is cut once
// the cap is passed (the connection closed, far from all of it read), answered 502 upstream_error and
// never charged; huge metadata (/api/tags, /api/show) fails /ready and the doctor the same way.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAX_MODEL_ANSWER_BYTES, MAX_MODEL_METADATA_BYTES } from '../../src/shared/limits'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { startFakeOllama } from '../support/fake-ollama'
import { makePng } from '../support/images'
import { startTestService } from '../support/service'
import { byId, doctorJson, healthyEnv } from '../operations/doctor-support'

const HUGE = 200 * 1024 * 1024
/** What a host may have sent before the service closed the connection: the cap and socket buffers, far below HUGE. */
const FAR_BELOW = 24 * 1024 * 1024

let env: AltTextEnv
let size = 40

beforeAll(async () => {
  env = await startAltTextEnv()
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const fresh = () => env.serve(makePng(++size, 30))
const creditsUsed = async () => (await env.service.api.get('/api/usage', env.key)).body.credits.used

describe('a huge answer is cut at the cap', () => {
  for (const streamed of [false, true]) {
    test(`a 200 MB answer${streamed ? ' streamed as NDJSON' : ' in one JSON object'} → 502 upstream_error, the connection closed early, nothing charged`, async () => {
      env.ollama.behave({ hugeReply: { bytes: HUGE, streamed } })
      const res = await env.generate({ image_url: fresh() })
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_error')
      await env.ollama.waitFor(() => env.ollama.aborted() === 1)
      expect(env.ollama.bytesStreamed()).toBeGreaterThan(MAX_MODEL_ANSWER_BYTES)
      expect(env.ollama.bytesStreamed()).toBeLessThan(FAR_BELOW)
      expect(await creditsUsed()).toBe(0)
      const failure = env.service.logs.find((l) => l.msg === 'model call failed')
      expect(failure?.failure).toBe('too_large')
    })
  }

  test('four 200 MB answers at once: every one 502, /health answers meanwhile, nothing charged', async () => {
    env.ollama.behave({ hugeReply: { bytes: HUGE, streamed: true } })
    const answers = Promise.all([1, 2, 3, 4].map(() => env.generate({ image_url: fresh() })))
    await env.ollama.waitFor(() => env.ollama.bytesStreamed() > 0)
    const health = await env.service.api.get('/health')
    expect(health.status).toBe(200)
    for (const res of await answers) expect(res.status).toBe(502)
    await env.ollama.waitFor(() => env.ollama.aborted() === 4)
    expect(env.ollama.bytesStreamed()).toBeLessThan(4 * FAR_BELOW)
    expect(await creditsUsed()).toBe(0)
  })
})

describe('huge metadata fails the health checks without being read whole', () => {
  for (const route of ['/api/tags', '/api/show'] as const) {
    test(`a 200 MB ${route}: /ready is 503 with the model check failed; the connection closed early`, async () => {
      const ollama = await startFakeOllama({ hugeMetadata: { route, bytes: HUGE } })
      const service = await startTestService({ env: { OLLAMA_HOST: ollama.url, ALTTEXT_MODEL: 'llava' } })
      try {
        const ready = await service.api.get('/ready')
        expect(ready.status).toBe(503)
        expect(ready.body.checks.model).toEqual({ ok: false, detail: 'the model server sent an answer over the size limit' })
        expect(ready.text).not.toContain(ollama.url)
        // The startup check and /ready each asked once.
        await ollama.waitFor(() => ollama.aborted() >= 1)
        expect(ollama.bytesStreamed()).toBeGreaterThan(MAX_MODEL_METADATA_BYTES)
        expect(ollama.bytesStreamed()).toBeLessThan(2 * FAR_BELOW)
        expect((await service.api.get('/health')).status).toBe(200)
      } finally {
        await service.stop()
        await ollama.stop()
      }
    })
  }

  test('alttext doctor: a 200 MB /api/tags fails the model host check, the generation is skipped', async () => {
    const ollama = await startFakeOllama({ hugeMetadata: { route: '/api/tags', bytes: HUGE } })
    const dir = mkdtempSync(join(tmpdir(), 'alttext-doctor-cap-'))
    try {
      const { report } = await doctorJson(healthyEnv(dir, ollama.url))
      const [host] = byId(report, 'model_host')
      expect(host?.status).toBe('fail')
      expect(host?.detail).toContain('limit')
      expect(byId(report, 'test_generation')[0]?.status).toBe('skip')
      expect(ollama.bytesStreamed()).toBeLessThan(FAR_BELOW)
    } finally {
      await ollama.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
