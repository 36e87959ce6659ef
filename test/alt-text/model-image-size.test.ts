// Over HTTP: the image the (fake) Ollama receives is sized for the configured model, and the start-up log
// says which side and why; ALTTEXT_IMAGE_MAX_SIDE overrides the model's side.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makeJpeg } from '../support/images'

const QWEN = 'qwen2.5vl:7b'

describe('a Qwen2.5-VL model without ALTTEXT_IMAGE_MAX_SIDE', () => {
  let env: AltTextEnv
  beforeAll(async () => {
    env = await startAltTextEnv({ env: { ALTTEXT_MODEL: QWEN }, ollama: { models: [QWEN] } })
  })
  afterAll(async () => {
    await env?.stop()
  })

  test('the model receives the image at 896 px, its 1024-token side, not the old 1024', async () => {
    const res = await env.generate({ image_url: env.serve(makeJpeg(2000, 1500)) })
    expect(res.status).toBe(200)
    const [image] = env.ollama.requests.flatMap((request) => request.images)
    expect(image?.format).toBe('jpeg')
    expect([image?.width, image?.height]).toEqual([896, 672])
  })

  test('a smaller image is sent as it is', async () => {
    env.ollama.reset()
    const res = await env.generate({ image_url: env.serve(makeJpeg(640, 480)) })
    expect(res.status).toBe(200)
    const [image] = env.ollama.requests.flatMap((request) => request.images)
    expect([image?.width, image?.height]).toEqual([640, 480])
  })

  test('the start-up log names the side and the family it came from', () => {
    const line = env.service.logs.find((entry) => entry.msg === 'images sent to the model')
    expect(line).toMatchObject({ model: QWEN, max_side: 896 })
    expect(String(line?.because)).toContain('qwen2.5-vl')
  })
})

describe('ALTTEXT_IMAGE_MAX_SIDE set', () => {
  let env: AltTextEnv
  beforeAll(async () => {
    env = await startAltTextEnv({ env: { ALTTEXT_MODEL: QWEN, ALTTEXT_IMAGE_MAX_SIDE: '512' }, ollama: { models: [QWEN] } })
  })
  afterAll(async () => {
    await env?.stop()
  })

  test('wins over the model family, and the log says so', async () => {
    const res = await env.generate({ image_url: env.serve(makeJpeg(2000, 1500)) })
    expect(res.status).toBe(200)
    const [image] = env.ollama.requests.flatMap((request) => request.images)
    expect([image?.width, image?.height]).toEqual([512, 384])
    expect(env.service.logs.find((entry) => entry.msg === 'images sent to the model')).toMatchObject({ max_side: 512, because: 'ALTTEXT_IMAGE_MAX_SIDE' })
  })
})
