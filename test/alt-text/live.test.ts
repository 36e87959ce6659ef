// Against a REAL Ollama: runs when one answers at OLLAMA_HOST (default http://127.0.0.1:11434) with the
// model (ALTTEXT_MODEL, default llava) pulled; otherwise it says clearly that it skipped.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config'
import { sameModel } from '../../src/model-provider/ollama'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server'
import { makeJpeg } from '../support/images'
import { startTestService, type TestService } from '../support/service'

// Only the live test looks at the developer's environment; the service itself reads it via config.
const { ollamaHost, model } = loadConfig({ OLLAMA_HOST: process.env.OLLAMA_HOST, ALTTEXT_MODEL: process.env.ALTTEXT_MODEL })

async function liveOllama(): Promise<{ ok: true } | { ok: false; why: string }> {
  const host = new URL(ollamaHost).hostname.replace(/^\[|\]$/g, '')
  // The network rule: only ever talk to this machine.
  if (!['127.0.0.1', 'localhost', '::1'].includes(host) && !host.startsWith('127.')) return { ok: false, why: `OLLAMA_HOST ${ollamaHost} is not on loopback` }
  try {
    const res = await fetch(`${ollamaHost}/api/tags`, { signal: AbortSignal.timeout(1500) })
    if (!res.ok) return { ok: false, why: `Ollama at ${ollamaHost} answered ${res.status}` }
    const { models } = (await res.json()) as { models: { name: string }[] }
    if (!models.some((m) => sameModel(m.name, model))) return { ok: false, why: `model ${model} is not pulled at ${ollamaHost} (ollama pull ${model})` }
    return { ok: true }
  } catch (error) {
    return { ok: false, why: `no Ollama reachable at ${ollamaHost} (${error instanceof Error ? error.message : String(error)})` }
  }
}

const live = await liveOllama()
if (!live.ok) console.log(`[live test] SKIPPED: ${live.why}`)

describe.skipIf(!live.ok)('live Ollama', () => {
  let service: TestService
  let images: HttpsImageServer

  beforeAll(async () => {
    images = await startHttpsImageServer()
    service = await startTestService({
      env: {
        OLLAMA_HOST: ollamaHost,
        ALTTEXT_MODEL: model,
        ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
        NODE_EXTRA_CA_CERTS: images.caPath,
        ALTTEXT_RATE_LIMITS: 'off',
      },
    })
  })
  afterAll(async () => {
    await service?.stop()
    await images?.stop()
  })

  test('a real model writes compliant alt text for a real image', async () => {
    const { apiKey } = await service.api.register()
    const url = images.route('/live.jpg', { kind: 'bytes', body: makeJpeg(640, 480) })
    expect((await service.api.get('/ready')).status).toBe(200)
    const res = await service.api.post('/api/alt-text', { image_url: url, max_length: 125 }, apiKey)
    console.log(`[live test] ${res.status} ${JSON.stringify(res.body)}`)
    expect(res.status).toBe(200)
    expect(res.body.alt_text.length).toBeGreaterThan(0)
    expect(res.body.character_count).toBeLessThanOrEqual(125)
    expect(res.body.alt_text).not.toMatch(/^(an? )?(image|picture|photo) of/i)
    expect(res.body.cached).toBe(false)
  }, 60_000)
})
