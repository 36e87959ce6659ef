// Against REAL model servers, one block per backend; each runs when its server answers, and otherwise says
// clearly that it skipped and why:
// - Ollama at OLLAMA_HOST (default http://127.0.0.1:11434) with the model (ALTTEXT_MODEL, default llava)
//   pulled; loopback only.
// - An OpenAI-compatible server (vLLM, llama.cpp `llama-server`, LM Studio): ALTTEXT_LIVE_OPENAI_URL (its
//   base URL, without /v1), else the first of their default loopback ports that answers (vLLM 8000,
//   llama-server 8080, LM Studio 1234). ALTTEXT_LIVE_OPENAI_MODEL picks the model (else the first one
//   GET /v1/models lists) and ALTTEXT_LIVE_OPENAI_KEY is its bearer token. Only a URL the operator sets
//   may leave this machine.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config'
import { sameModel } from '../../src/model-provider/ollama'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server'
import { makeJpeg } from '../support/images'
import { startTestService, type TestService } from '../support/service'

type Live<T> = ({ ok: true } & T) | { ok: false; why: string }

const isLoopback = (url: string) => {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  return ['localhost', '::1'].includes(host) || host.startsWith('127.')
}
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))

// Only the live test looks at the developer's environment; the service itself reads it via config.
const { ollamaHost, model } = loadConfig({ OLLAMA_HOST: process.env.OLLAMA_HOST, ALTTEXT_MODEL: process.env.ALTTEXT_MODEL })

async function liveOllama(): Promise<Live<object>> {
  // The network rule: only ever talk to this machine.
  if (!isLoopback(ollamaHost)) return { ok: false, why: `OLLAMA_HOST ${ollamaHost} is not on loopback` }
  try {
    const res = await fetch(`${ollamaHost}/api/tags`, { signal: AbortSignal.timeout(1500) })
    if (!res.ok) return { ok: false, why: `Ollama at ${ollamaHost} answered ${res.status}` }
    const { models } = (await res.json()) as { models: { name: string }[] }
    if (!models.some((m) => sameModel(m.name, model))) return { ok: false, why: `model ${model} is not pulled at ${ollamaHost} (ollama pull ${model})` }
    return { ok: true }
  } catch (error) {
    return { ok: false, why: `no Ollama reachable at ${ollamaHost} (${errorText(error)})` }
  }
}

/** vLLM, llama-server and LM Studio listen here by default. */
const OPENAI_DEFAULT_URLS = ['http://127.0.0.1:8000', 'http://127.0.0.1:8080', 'http://127.0.0.1:1234']

type OpenAiServer = { url: string; model: string; apiKey: string | undefined }

async function liveOpenAi(): Promise<Live<OpenAiServer>> {
  const configured = process.env.ALTTEXT_LIVE_OPENAI_URL?.trim().replace(/\/+$/, '').replace(/\/v1$/, '')
  const wanted = process.env.ALTTEXT_LIVE_OPENAI_MODEL?.trim() || undefined
  const apiKey = process.env.ALTTEXT_LIVE_OPENAI_KEY?.trim() || undefined
  const candidates = configured ? [configured] : OPENAI_DEFAULT_URLS
  const misses: string[] = []
  for (const url of candidates) {
    try {
      const res = await fetch(`${url}/v1/models`, {
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
        signal: AbortSignal.timeout(1500),
      })
      if (!res.ok) {
        misses.push(`${url} answered ${res.status}${res.status === 401 ? ' (set ALTTEXT_LIVE_OPENAI_KEY)' : ''}`)
        continue
      }
      const { data } = (await res.json()) as { data?: { id: string }[] }
      const ids = (data ?? []).map((entry) => entry.id)
      const chosen = wanted ?? ids[0]
      if (chosen === undefined) misses.push(`${url} serves no model`)
      else if (!ids.includes(chosen)) misses.push(`${url} does not serve ${chosen} (it serves ${ids.join(', ')})`)
      else return { ok: true, url, model: chosen, apiKey }
    } catch (error) {
      misses.push(`nothing answers at ${url} (${errorText(error)})`)
    }
  }
  const hint = configured ? '' : '; set ALTTEXT_LIVE_OPENAI_URL to the server'
  return { ok: false, why: `no OpenAI-compatible server: ${misses.join('; ')}${hint}` }
}

const [ollama, openai] = await Promise.all([liveOllama(), liveOpenAi()])
if (!ollama.ok) console.log(`[live test] SKIPPED: Ollama: ${ollama.why}`)
if (!openai.ok) console.log(`[live test] SKIPPED: OpenAI-compatible server: ${openai.why}`)

/** Registers, serves a real photo-sized JPEG and asks the service for its alt text, as a client would. */
async function describeLive(service: TestService, images: HttpsImageServer, backend: string) {
  const { apiKey } = await service.api.register()
  const url = images.route(`/live-${backend}.jpg`, { kind: 'bytes', body: makeJpeg(640, 480) })
  const ready = await service.api.get('/ready')
  expect(ready.status).toBe(200)
  const res = await service.api.post('/api/alt-text', { image_url: url, max_length: 125 }, apiKey)
  console.log(`[live test] ${backend}: ${res.status} ${JSON.stringify(res.body)}`)
  expect(res.status).toBe(200)
  expect(res.body.alt_text.length).toBeGreaterThan(0)
  expect(res.body.character_count).toBeLessThanOrEqual(125)
  expect(res.body.alt_text).not.toMatch(/^(an? )?(image|picture|photo) of/i)
  expect(res.body.cached).toBe(false)
}

const imageEnv = (images: HttpsImageServer) => ({
  ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
  NODE_EXTRA_CA_CERTS: images.caPath,
  ALTTEXT_RATE_LIMITS: 'off',
})

describe.skipIf(!ollama.ok)('live Ollama', () => {
  let service: TestService
  let images: HttpsImageServer

  beforeAll(async () => {
    images = await startHttpsImageServer()
    service = await startTestService({ env: { OLLAMA_HOST: ollamaHost, ALTTEXT_MODEL: model, ...imageEnv(images) } })
  })
  afterAll(async () => {
    await service?.stop()
    await images?.stop()
  })

  test('a real model writes compliant alt text for a real image', () => describeLive(service, images, 'ollama'), 60_000)
})

describe.skipIf(!openai.ok)('live OpenAI-compatible server', () => {
  let service: TestService
  let images: HttpsImageServer

  beforeAll(async () => {
    if (!openai.ok) return
    images = await startHttpsImageServer()
    service = await startTestService({
      env: {
        ALTTEXT_MODEL_API: 'openai',
        OLLAMA_HOST: openai.url,
        ALTTEXT_MODEL: openai.model,
        ...(openai.apiKey && { ALTTEXT_MODEL_API_KEY: openai.apiKey }),
        ...imageEnv(images),
      },
    })
  })
  afterAll(async () => {
    await service?.stop()
    await images?.stop()
  })

  test('a real model behind chat completions writes compliant alt text for a real image', () => describeLive(service, images, 'openai'), 60_000)
})
