// The plain-text fallback: a server that refuses the schema (a 400 about format or response_format) is
// asked again in plain text, and remembered per host so later calls go plain at once; an answer that
// is not the schema's JSON is salvaged when its alt text is clearly there, else asked once in plain
// text. Whatever happens, one request is charged once at most.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { ANSWER_SCHEMA } from '../../src/modules/alt-text/structured'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { startOpenAiEnv } from './openai-env'
import { startPoolEnv } from './pool-env'

let env: AltTextEnv
let size = 30
const png = () => makePng(++size, 26)
const REFUSED = 'the model server refused structured answers; asking it in plain text from now on'

beforeAll(async () => {
  env = await startAltTextEnv()
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const used = async (target: { service: AltTextEnv['service']; key: string }) =>
  (await target.service.api.get('/api/usage', target.key)).body.credits.used as number
const warnings = (service: AltTextEnv['service'], msg: string) => service.logs.filter((line) => line.level === 'warn' && line.msg === msg)

describe('a server that refuses the schema', () => {
  test('Ollama before 0.5 (format must be a string): the call is made again in plain text, charged once, and the host remembered', async () => {
    const old = await startAltTextEnv({ ollama: { formatSupport: 'refuse' } })
    try {
      const res = await old.generate({ image_url: old.serve(png()) })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ alt_text: 'Two children flying a red kite on a windy beach.', text_in_image: null, credits_remaining: 49 })
      const [structured, plain] = old.ollama.chatRequests()
      expect(old.ollama.chatRequests()).toHaveLength(2)
      expect(structured?.format).toEqual(ANSWER_SCHEMA.schema)
      expect(plain?.format).toBeUndefined()
      expect(plain?.messages?.[0]?.content).toContain('Reply with the alt text only')
      expect(await used(old)).toBe(1)
      expect(warnings(old.service, REFUSED)).toHaveLength(1)
      expect(String(warnings(old.service, REFUSED)[0]?.detail)).toContain('cannot unmarshal object')

      // Remembered: the next request goes plain at once, one call, and is not logged again.
      old.ollama.reset()
      const next = await old.generate({ image_url: old.serve(png()), detect_decorative: true })
      expect(next.status).toBe(200)
      expect(old.ollama.chatRequests()).toHaveLength(1)
      expect(old.ollama.chatRequests()[0]?.format).toBeUndefined()
      expect(old.ollama.chatRequests()[0]?.messages?.[0]?.content).toContain('DECORATIVE:')
      expect(await used(old)).toBe(2)
      expect(warnings(old.service, REFUSED)).toHaveLength(1)
    } finally {
      await old.stop()
    }
  })

  test('an OpenAI-compatible server without response_format (a 400 in the OpenAI shape): plain text, charged once, remembered', async () => {
    const server = await startOpenAiEnv({ model: { responseFormat: 'refuse' } })
    try {
      const res = await server.generate({ image_url: server.serve(png()) })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ alt_text: 'Two children flying a red kite on a windy beach.', text_in_image: null })
      const [structured, plain] = server.model.chatRequests()
      expect(structured?.response_format).toMatchObject({ type: 'json_schema' })
      expect(plain?.response_format).toBeUndefined()
      expect(await server.creditsUsed()).toBe(1)

      server.model.reset()
      server.model.behave({ responseFormat: 'refuse' })
      expect((await server.generate({ image_url: server.serve(png()) })).status).toBe(200)
      expect(server.model.chatRequests()).toHaveLength(1)
      expect(server.model.chatRequests()[0]?.response_format).toBeUndefined()
      expect(await server.creditsUsed()).toBe(2)
    } finally {
      await server.stop()
    }
  })

  test('per host: in a pool, the host that refuses goes plain, the other stays structured', async () => {
    const pool = await startPoolEnv([{ formatSupport: 'refuse' }, {}])
    try {
      for (let i = 0; i < 6; i++) expect((await pool.generate()).status).toBe(200)
      const [old, current] = pool.hosts
      const oldChats = old!.chatRequests()
      // The old host refused once; after that every call it got was plain.
      expect(oldChats.filter((c) => c.format !== undefined)).toHaveLength(1)
      expect(oldChats.length).toBeGreaterThan(1)
      const currentChats = current!.chatRequests()
      expect(currentChats.length).toBeGreaterThan(0)
      expect(currentChats.every((c) => c.format !== undefined)).toBe(true)
      expect(await pool.creditsUsed()).toBe(6)
    } finally {
      await pool.stop()
    }
  })

  test('a 400 about the schema that the plain call fails too: 502, nothing charged, and the host not marked', async () => {
    const before = await used(env)
    env.ollama.behave({ failStatus: 400, failError: 'invalid format: unsupported schema' })
    const res = await env.generate({ image_url: env.serve(png()) })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(env.ollama.chatRequests()).toHaveLength(2)
    expect(await used(env)).toBe(before)
    env.ollama.reset()
    expect((await env.generate({ image_url: env.serve(png()) })).status).toBe(200)
    expect(env.ollama.chatRequests()[0]?.format).toEqual(ANSWER_SCHEMA.schema)
  })

  test('a 400 about something else is not retried in plain text', async () => {
    env.ollama.behave({ failStatus: 400, failError: 'unexpected EOF' })
    const res = await env.generate({ image_url: env.serve(png()) })
    expect(res.status).toBe(502)
    expect(env.ollama.chatRequests()).toHaveLength(1)
  })
})

describe('an answer that is not the schema’s JSON', () => {
  test('plain text (a model that ignored format): one plain-text call, charged once, not remembered', async () => {
    const before = await used(env)
    env.ollama.behave({ formatSupport: 'ignore', reply: 'Sure! Here is the alt text: A fox crossing a snowy field.' })
    const res = await env.generate({ image_url: env.serve(png()) })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ alt_text: 'A fox crossing a snowy field.', text_in_image: null })
    const chats = env.ollama.chatRequests()
    expect(chats).toHaveLength(2)
    expect(chats[0]?.format).toBeDefined()
    expect(chats[1]?.format).toBeUndefined()
    expect(await used(env)).toBe(before + 1)
    expect(warnings(env.service, 'the structured answer held no usable alt text; asking once in plain text').length).toBeGreaterThan(0)

    env.ollama.reset()
    await env.generate({ image_url: env.serve(png()) })
    expect(env.ollama.chatRequests()[0]?.format).toEqual(ANSWER_SCHEMA.schema)
  })

  test('broken JSON whose alt_text is complete: salvaged, one call, text_in_image null', async () => {
    env.ollama.behave({
      formatSupport: 'ignore',
      reply: '{"decorative": false, "decorative_reason": null, "alt_text": "A cat asleep on a sofa.", "text_in_image": "MEOW',
    })
    const res = await env.generate({ image_url: env.serve(png()) })
    expect(res.body).toMatchObject({ alt_text: 'A cat asleep on a sofa.', text_in_image: null })
    expect(env.ollama.chatRequests()).toHaveLength(1)
  })

  test('JSON cut off by the token limit inside alt_text: one plain-text call', async () => {
    const cutOff = '{"decorative": false, "decorative_reason": null, "alt_text": "A cat asleep on'
    env.ollama.behave({ formatSupport: 'ignore', reply: ({ body }) => (body.format ? cutOff : 'A cat asleep on a sofa.') })
    const res = await env.generate({ image_url: env.serve(png()) })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ alt_text: 'A cat asleep on a sofa.', text_in_image: null })
    expect(env.ollama.chatRequests()).toHaveLength(2)
  })

  test('the schema with an empty alt_text and no judgement asked: one plain-text call', async () => {
    env.ollama.behave({ structured: { alt_text: '   ' }, reply: 'A heron standing in shallow water.' })
    const res = await env.generate({ image_url: env.serve(png()) })
    expect(res.body.alt_text).toBe('A heron standing in shallow water.')
    expect(env.ollama.chatRequests()).toHaveLength(2)
  })

  test('nothing usable either way: 502 upstream_error, two calls, nothing charged', async () => {
    const before = await used(env)
    env.ollama.behave({ emptyReply: true })
    const res = await env.generate({ image_url: env.serve(png()) })
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(env.ollama.chatRequests()).toHaveLength(2)
    expect(await used(env)).toBe(before)
  })
})
