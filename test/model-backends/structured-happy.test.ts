// Structured answers end to end: the service asks Ollama (`format`) and OpenAI-compatible servers
// (`response_format` json_schema) for {decorative, decorative_reason, alt_text, text_in_image} in one
// call, keeps the text the image shows in the alt text, judges decorative images through the JSON,
// cleans what thinking models leave, and caches text_in_image with the rest.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { ANSWER_SCHEMA } from '../../src/modules/alt-text/structured'
import { batchClient } from '../batches/support'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { startOpenAiEnv, type OpenAiEnv } from './openai-env'

let ollama: AltTextEnv
let openai: OpenAiEnv
let size = 30
const png = () => makePng(++size, 24)
const LEFT_OUT = 'leaves out text the image shows (see text_in_image)'

beforeAll(async () => {
  ;[ollama, openai] = await Promise.all([startAltTextEnv(), startOpenAiEnv()])
})
afterAll(() => Promise.all([ollama.stop(), openai.stop()]))
beforeEach(() => {
  ollama.ollama.reset()
  openai.model.reset()
})

const lastChat = () => ollama.ollama.chatRequests().at(-1)!
const usedCredits = async (env: AltTextEnv) => (await env.service.api.get('/api/usage', env.key)).body.credits.used as number

describe('Ollama: format with the JSON schema', () => {
  test('one call with the schema as `format`, think false, the fields explained; the answer read from the JSON; one credit', async () => {
    const before = await usedCredits(ollama)
    const res = await ollama.generate({ image_url: ollama.serve(png()) })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ alt_text: 'Two children flying a red kite on a windy beach.', text_in_image: null, wcag_compliant: true })
    expect(ollama.ollama.chatRequests()).toHaveLength(1)
    const chat = lastChat()
    expect(chat.format).toEqual(ANSWER_SCHEMA.schema)
    expect(chat.think).toBe(false)
    const system = chat.messages?.find((m) => m.role === 'system')?.content ?? ''
    expect(system).toContain('JSON object')
    expect(system).toContain('text_in_image: the text the image shows')
    expect(chat.messages?.at(-1)?.content).toContain('JSON answer; alt_text in English, at most 125 characters:')
    expect(await usedCredits(ollama)).toBe(before + 1)
  })

  test('text the image shows and the alt text lacks is appended where it fits', async () => {
    ollama.ollama.behave({ structured: { alt_text: 'A shop window with a red banner.', text_in_image: 'SALE 50%' } })
    const res = await ollama.generate({ image_url: ollama.serve(png()) })
    expect(res.body).toMatchObject({
      alt_text: 'A shop window with a red banner: "SALE 50%".',
      text_in_image: 'SALE 50%',
      character_count: 44,
      wcag_compliant: true,
      wcag_issues: [],
    })
  })

  test('in the language of the request: its sentence mark after the quotation', async () => {
    ollama.ollama.behave({ structured: { alt_text: '赤い横断幕のある店の窓。', text_in_image: 'SALE' } })
    const res = await ollama.generate({ image_url: ollama.serve(png()), language: 'ja' })
    expect(res.body).toMatchObject({ alt_text: '赤い横断幕のある店の窓: "SALE"。', text_in_image: 'SALE', wcag_compliant: true })
  })

  test('text already in the alt text (case and spacing aside) is not repeated', async () => {
    ollama.ollama.behave({ structured: { alt_text: 'A red banner reading sale 50 % in a shop window.', text_in_image: 'SALE 50%' } })
    const res = await ollama.generate({ image_url: ollama.serve(png()) })
    expect(res.body).toMatchObject({ alt_text: 'A red banner reading sale 50 % in a shop window.', text_in_image: 'SALE 50%', wcag_compliant: true })
  })

  test('text that does not fit within max_length is flagged, not forced in', async () => {
    ollama.ollama.behave({ structured: { alt_text: 'A shop window with a red banner.', text_in_image: 'EVERYTHING MUST GO, SALE 50% OFF TODAY' } })
    const res = await ollama.generate({ image_url: ollama.serve(png()), max_length: 40 })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      alt_text: 'A shop window with a red banner.',
      text_in_image: 'EVERYTHING MUST GO, SALE 50% OFF TODAY',
      wcag_compliant: false,
    })
    expect(res.body.wcag_issues).toEqual([LEFT_OUT])
  })

  test('a cached answer gives back the same text_in_image, free', async () => {
    ollama.ollama.behave({ structured: { alt_text: 'A green exit sign above a door.', text_in_image: 'EXIT' } })
    const url = ollama.serve(png())
    const first = await ollama.generate({ image_url: url })
    const again = await ollama.generate({ image_url: url })
    expect(first.body).toMatchObject({ cached: false, text_in_image: 'EXIT', alt_text: 'A green exit sign above a door.' })
    expect(again.body).toMatchObject({ cached: true, text_in_image: 'EXIT', alt_text: first.body.alt_text, wcag_issues: first.body.wcag_issues })
    expect(again.body.credits_remaining).toBe(first.body.credits_remaining)
    expect(ollama.ollama.chatRequests()).toHaveLength(1)
  })

  test('a batch item result carries text_in_image too', async () => {
    ollama.ollama.behave({ structured: { alt_text: 'A bakery sign over a doorway.', text_in_image: 'BROT & KUCHEN' } })
    const batches = batchClient(ollama.service.api, ollama.key)
    const created = await batches.create({ items: [{ image_url: ollama.serve(png()) }] })
    expect(created.status).toBe(202)
    const ended = await batches.ended(created.body.id)
    expect(ended.body.items[0].result).toMatchObject({ alt_text: 'A bakery sign over a doorway: "BROT & KUCHEN".', text_in_image: 'BROT & KUCHEN' })
  })
})

describe('decorative answers through the JSON', () => {
  const ornamentSide = 7
  const ornament = () => makePng(ornamentSide, ++size)

  test('asked: the model judges in the JSON; alt_text "", decorative true, its reason; one credit', async () => {
    ollama.ollama.behave({ decorative: (image) => image.width === ornamentSide, decorativeReason: 'a thin ornamental divider' })
    const before = await usedCredits(ollama)
    const res = await ollama.generate({ image_url: ollama.serve(ornament()), detect_decorative: true })
    expect(res.body).toMatchObject({ alt_text: '', decorative: true, decorative_reason: 'a thin ornamental divider', character_count: 0, wcag_compliant: true })
    expect(ollama.ollama.chatRequests()).toHaveLength(1)
    expect(lastChat().format).toEqual(ANSWER_SCHEMA.schema)
    expect(lastChat().messages?.[0]?.content).toContain('decorative: true only if the image is purely decorative')
    expect(await usedCredits(ollama)).toBe(before + 1)
  })

  test('asked, and the model gives no reason: a generic one', async () => {
    ollama.ollama.behave({ structured: { decorative: true, decorative_reason: null, alt_text: '' } })
    const res = await ollama.generate({ image_url: ollama.serve(png()), detect_decorative: true })
    expect(res.body).toMatchObject({ alt_text: '', decorative: true, decorative_reason: 'the model judged the image purely decorative' })
  })

  test('asked, and the model says not decorative: the alt text', async () => {
    ollama.ollama.behave({ structured: { decorative: false, decorative_reason: null, alt_text: 'A lighthouse on a rocky cliff.' } })
    const res = await ollama.generate({ image_url: ollama.serve(png()), detect_decorative: true })
    expect(res.body).toMatchObject({ alt_text: 'A lighthouse on a rocky cliff.', decorative: false, decorative_reason: null })
  })

  test('not asked: the prompt fixes the fields, and a model that judges anyway is ignored', async () => {
    ollama.ollama.behave({ structured: { decorative: true, decorative_reason: 'just a line', alt_text: 'A thin gold line on white.' } })
    const res = await ollama.generate({ image_url: ollama.serve(png()) })
    expect(res.body).toMatchObject({ alt_text: 'A thin gold line on white.', decorative: false, decorative_reason: null })
    const system = lastChat().messages?.[0]?.content ?? ''
    expect(system).toContain('decorative: false.')
    expect(system).not.toContain('purely decorative')
  })
})

describe('thinking models (the qwen3-vl shape)', () => {
  test('a model that thinks into message.thinking unless told not to: think false, so the answer is in content', async () => {
    ollama.ollama.behave({ capabilities: ['completion', 'vision', 'thinking'], thinkingOnly: true })
    const res = await ollama.generate({ image_url: ollama.serve(png()) })
    expect(res.status).toBe(200)
    expect(res.body.alt_text).toBe('Two children flying a red kite on a windy beach.')
    expect(lastChat().think).toBe(false)
    // Asked without think: false, the fake answers as qwen3-vl does: reasoning in `thinking`, no content.
    const image = Buffer.from(png()).toString('base64')
    const direct = await fetch(`${ollama.ollama.url}/api/chat`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'llava',
        stream: false,
        format: ANSWER_SCHEMA.schema,
        messages: [{ role: 'user', content: 'Describe.', images: [image] }],
      }),
    })
    const body = (await direct.json()) as { message: { content: string; thinking?: string } }
    expect(body.message.content).toBe('')
    expect(body.message.thinking).toContain('The user wants alt text')
  })

  test('reasoning left inside the JSON alt_text is stripped; a fenced JSON from a server that ignored format is read', async () => {
    ollama.ollama.behave({ structured: { alt_text: '<think>The user wants alt text. I see a lighthouse.</think>A white lighthouse on a rocky cliff.' } })
    const inside = await ollama.generate({ image_url: ollama.serve(png()) })
    expect(inside.body.alt_text).toBe('A white lighthouse on a rocky cliff.')

    const json = { decorative: false, decorative_reason: null, alt_text: 'A striped awning over a pavement.', text_in_image: 'CAFÉ' }
    ollama.ollama.behave({ formatSupport: 'ignore', reply: `<think>Fields: {alt_text}.</think>\n\`\`\`json\n${JSON.stringify(json)}\n\`\`\`` })
    const fenced = await ollama.generate({ image_url: ollama.serve(png()) })
    expect(fenced.body).toMatchObject({ alt_text: 'A striped awning over a pavement: "CAFÉ".', text_in_image: 'CAFÉ' })
    expect(ollama.ollama.chatRequests()).toHaveLength(2)
  })
})

describe('OpenAI-compatible: response_format json_schema', () => {
  test('one call with response_format {type: json_schema, json_schema: {name, schema, strict: true}}; the answer read from the JSON; one credit', async () => {
    openai.model.behave({ structured: { alt_text: 'A shop window with a red banner.', text_in_image: 'SALE 50%' } })
    const before = await openai.creditsUsed()
    const res = await openai.generate({ image_url: openai.serve(png()) })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ alt_text: 'A shop window with a red banner: "SALE 50%".', text_in_image: 'SALE 50%', wcag_compliant: true })
    const [body] = openai.model.chatRequests()
    expect(body?.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'alt_text_answer', schema: ANSWER_SCHEMA.schema, strict: true } })
    expect(openai.model.chatRequests()).toHaveLength(1)
    expect(await openai.creditsUsed()).toBe(before + 1)
  })

  test('decorative through the JSON, when asked', async () => {
    openai.model.behave({ structured: { decorative: true, decorative_reason: 'a background texture', alt_text: '' } })
    const res = await openai.generate({ image_url: openai.serve(png()), detect_decorative: true })
    expect(res.body).toMatchObject({ alt_text: '', decorative: true, decorative_reason: 'a background texture' })
  })

  test('a reasoning model (reasoning_content beside the answer, as vLLM sends it): only the answer counts', async () => {
    openai.model.behave({ reasoning: 'Let me look. There is a lighthouse, so the alt text should say so.' })
    const res = await openai.generate({ image_url: openai.serve(png()) })
    expect(res.body.alt_text).toBe('Two children flying a red kite on a windy beach.')
    expect(res.body.alt_text).not.toContain('lighthouse')
  })

  test('the fake also speaks json_object, with and without a schema (llama.cpp)', async () => {
    const image = `data:image/png;base64,${Buffer.from(png()).toString('base64')}`
    const ask = async (responseFormat: unknown) => {
      const res = await fetch(`${openai.model.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'llava',
          response_format: responseFormat,
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }],
        }),
      })
      return JSON.parse(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content)
    }
    expect(await ask({ type: 'json_object' })).toMatchObject({ alt_text: 'Two children flying a red kite on a windy beach.' })
    expect(Object.keys(await ask({ type: 'json_object', schema: { type: 'object', properties: { alt_text: { type: 'string' } } } }))).toEqual(['alt_text'])
  })
})
