// ALTTEXT_MODEL_API=openai end to end: the real service asks an OpenAI-compatible server (the fake) for
// chat completions with the image as a JPEG or PNG data URL, and /ready checks /v1/models.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { makeJpeg, makePng, makeWebp } from '../support/images'
import { startOpenAiEnv, type OpenAiEnv } from './openai-env'

let env: OpenAiEnv
let size = 40

beforeAll(async () => {
  env = await startOpenAiEnv()
})
afterAll(() => env.stop())
beforeEach(() => env.model.reset())

describe('generation through chat completions', () => {
  test('the answer comes back as alt text, charged once', async () => {
    const res = await env.generate({ image_url: env.serve(makePng(++size, 30)) })
    expect(res.status).toBe(200)
    expect(res.body.alt_text).toBe('Two children flying a red kite on a windy beach.')
    expect(await env.creditsUsed()).toBe(1)
  })

  test('the request: system and user prompt, an image_url part with a PNG or JPEG data URL, max_tokens, temperature', async () => {
    for (const [bytes, type] of [
      [makePng(++size, 30), 'image/png'],
      [makeJpeg(++size, 30), 'image/jpeg'],
      [makeWebp(++size, 30), 'image/webp'],
    ] as const) {
      env.model.reset()
      const res = await env.generate({ image_url: env.serve(bytes, type) })
      expect(res.status).toBe(200)
      const [body] = env.model.chatRequests()
      expect(body?.model).toBe('llava')
      expect(body?.stream).toBe(false)
      expect(typeof body?.max_tokens).toBe('number')
      expect(body?.max_tokens as number).toBeGreaterThan(0)
      expect(typeof body?.temperature).toBe('number')
      const messages = body?.messages as { role: string; content: unknown }[]
      expect(messages[0]?.role).toBe('system')
      expect(typeof messages[0]?.content).toBe('string')
      const parts = messages[1]?.content as { type: string; text?: string; image_url?: { url: string } }[]
      expect(messages[1]?.role).toBe('user')
      expect(parts.some((p) => p.type === 'text' && (p.text ?? '').length > 0)).toBe(true)
      const image = parts.find((p) => p.type === 'image_url')
      expect(image?.image_url?.url).toMatch(/^data:image\/(png|jpeg);base64,/)
      // What arrived is a JPEG or PNG whatever came in (never WebP: LM Studio refuses it), and says so truly.
      const recorded = env.model.requests.find((r) => r.path === '/v1/chat/completions')?.images[0]
      expect(['png', 'jpeg']).toContain(recorded?.format ?? '')
      expect(recorded?.mime).toBe(`image/${recorded?.format}`)
      // Nothing but the OpenAI fields: no Ollama options, no think, no reasoning_effort.
      expect(Object.keys(body ?? {}).sort()).toEqual(['max_tokens', 'messages', 'model', 'response_format', 'stream', 'temperature'])
    }
  })

  test('no key configured: no Authorization header is sent', async () => {
    await env.generate({ image_url: env.serve(makePng(++size, 30)) })
    const chat = env.model.requests.find((r) => r.path === '/v1/chat/completions')
    expect(chat?.headers.authorization).toBeUndefined()
  })

  test('a thinking model: the <think> block that reaches the text is stripped', async () => {
    env.model.behave({ reply: '<think>The user wants a short description. I see a lighthouse.</think>\n\nA white lighthouse on a rocky cliff.' })
    const res = await env.generate({ image_url: env.serve(makePng(++size, 30)) })
    expect(res.status).toBe(200)
    expect(res.body.alt_text).toBe('A white lighthouse on a rocky cliff.')
    env.model.behave({ reply: 'Okay, let me look at the picture first.\n</think>\nA red bicycle against a brick wall.' })
    const tail = await env.generate({ image_url: env.serve(makePng(++size, 30)) })
    expect(tail.body.alt_text).toBe('A red bicycle against a brick wall.')
  })
})

describe('readiness from /v1/models', () => {
  test('the model listed: ready', async () => {
    const res = await env.service.api.get('/ready')
    expect(res.status).toBe(200)
    expect(res.body.checks.model.ok).toBe(true)
    expect(env.model.requests.some((r) => r.method === 'GET' && r.path === '/v1/models')).toBe(true)
  })
})

describe('the fake speaks the protocol', () => {
  test('streaming chat completions end in data: [DONE]', async () => {
    const image = `data:image/png;base64,${Buffer.from(makePng(8, 8)).toString('base64')}`
    const res = await fetch(`${env.model.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'llava',
        stream: true,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Describe.' },
              { type: 'image_url', image_url: { url: image } },
            ],
          },
        ],
      }),
    })
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const events = (await res.text()).split('\n\n').filter(Boolean)
    expect(events.at(-1)).toBe('data: [DONE]')
    const text = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice('data: '.length)).choices[0].delta.content ?? '')
      .join('')
    expect(text).toBe('Two children flying a red kite on a windy beach.')
  })
})
