// Model failures map to the contract: 502 upstream_error, 504 upstream_timeout (the call aborted),
// and no credit is charged for any of them. The operator's log says what went wrong.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { startTestService, waitUntil } from '../support/service'
import { startHttpsImageServer } from '../support/https-image-server'

let env: AltTextEnv
let image = 100

beforeAll(async () => {
  // A short deadline keeps the hanging-model tests quick; the mechanism is the 15 s one.
  env = await startAltTextEnv({ overrides: { generationDeadlineMs: 1500 } })
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const freshImage = () => env.serve(makePng(++image, 30))

async function expectNoCharge(key = env.key) {
  const usage = await env.service.api.get('/api/usage', key)
  expect(usage.body.credits.used).toBe(0)
}

describe('upstream failures', () => {
  test('Ollama 500 → 502 upstream_error, logged, nothing charged', async () => {
    env.ollama.behave({ failStatus: 500, failError: 'llama runner process has terminated' })
    const res = await env.generate({ image_url: freshImage() })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(env.service.logText()).toContain('llama runner process has terminated')
    await expectNoCharge()
  })

  test('model not pulled → 502, and the log tells the operator to pull it', async () => {
    env.ollama.behave({ models: ['moondream:latest'] })
    const res = await env.generate({ image_url: freshImage() })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(env.service.logText()).toContain('ollama pull llava')
    await expectNoCharge()
  })

  test('a malformed answer → 502', async () => {
    for (const malformed of ['truncated-json', 'html', 'wrong-shape'] as const) {
      env.ollama.behave({ malformed })
      const res = await env.generate({ image_url: freshImage() })
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_error')
    }
    await expectNoCharge()
  })

  test('an empty answer → 502', async () => {
    env.ollama.behave({ emptyReply: true })
    const res = await env.generate({ image_url: freshImage() })
    expect(res.status).toBe(502)
    await expectNoCharge()
  })

  test('a hanging model ends at the deadline with 504, and the model call is aborted', async () => {
    env.ollama.behave({ hang: true })
    const res = await env.generate({ image_url: freshImage() })
    expect(res.status).toBe(504)
    expect(res.body.error.code).toBe('upstream_timeout')
    await env.ollama.waitFor(() => env.ollama.aborted() === 1)
    expect(env.ollama.inFlight()).toBe(0)
    await expectNoCharge()
  })

  test('the client message never leaks upstream internals', async () => {
    env.ollama.behave({ failStatus: 500, failError: 'secret internal path /var/lib/ollama' })
    const res = await env.generate({ image_url: freshImage() })
    expect(res.text).not.toContain('/var/lib/ollama')
    expect(res.text).not.toContain(env.ollama.url)
  })
})

describe('answers that are no alt text', () => {
  const CONTEXT = 'Our kite festival on the north beach, with prizes for the highest and the most colourful kites'

  test.each(['repeated-char', 'prompt-echo', 'bare-url'] as const)('%s → 502 upstream_error, nothing charged, asked no more than twice', async (junk) => {
    env.ollama.behave({ junk })
    const res = await env.generate({ image_url: freshImage(), context: CONTEXT, keywords: ['kite', 'beach'] })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    // Structured first, then once in plain text, as for any answer with nothing usable.
    expect(env.ollama.chatRequests()).toHaveLength(2)
    expect(env.service.logs.some((l) => l.msg === 'the model answered no alt text')).toBe(true)
    await expectNoCharge()
  })

  test.each([
    ['dots', '.'.repeat(300)],
    ['one letter with spaces', 'A A A A A A A A'],
    ['the system prompt', 'You write alt text for images on web pages, following WCAG 2.1 (success criterion 1.1.1).'],
    ['a URL without a scheme', 'www.example.com/photos/kite.jpg'],
  ])('%s → 502, nothing charged', async (_, reply) => {
    env.ollama.behave({ reply })
    const res = await env.generate({ image_url: freshImage() })
    expect(res.status).toBe(502)
    await expectNoCharge()
  })

  test.each([
    ['the page context, as the alt text', CONTEXT],
    ['words the rules also use', 'A chart or diagram showing the main subject of the sales report.'],
    ['a bare domain, as a logo says', 'Example.com'],
    ['a short word', 'Zoo.'],
  ])('not junk: %s → 200', async (_, reply) => {
    env.ollama.behave({ reply })
    const res = await env.generate({ image_url: freshImage(), context: CONTEXT })
    expect(res.status).toBe(200)
  })
})

describe('Ollama unreachable', () => {
  test('refused connection → 502 upstream_error, logged', async () => {
    const images = await startHttpsImageServer()
    const service = await startTestService({
      env: {
        OLLAMA_HOST: 'http://127.0.0.1:9',
        ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
        NODE_EXTRA_CA_CERTS: images.caPath,
        ALTTEXT_RATE_LIMITS: 'off',
      },
    })
    try {
      const { apiKey } = await service.api.register()
      const url = images.route('/a.png', { kind: 'bytes', body: makePng(20, 20) })
      const res = await service.api.post('/api/alt-text', { image_url: url }, apiKey)
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_error')
      await waitUntil(() => service.logText().includes('not reachable'), 'the log line')
      expect((await service.api.get('/api/usage', apiKey)).body.credits.used).toBe(0)
    } finally {
      await service.stop()
      await images.stop()
    }
  })
})
