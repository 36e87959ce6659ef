// SVG, AVIF and animations through the real service on both model backends: 200, the format and
// `animated` in the answer, and what the model was sent (a PNG; a grid for an animation).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { makeAnimatedGif, makeAvif, makeJpeg, makeSolidAnimation } from '../support/images'
import { base64, type FormatEnv, startFormatEnvs, utf8 } from './formats-support'

let envs: FormatEnv[]
beforeAll(async () => {
  envs = await startFormatEnvs()
})
afterAll(() => Promise.all(envs.map((env) => env.stop())))
beforeEach(() => {
  for (const env of envs) env.reset()
})

const LOGO = utf8(
  '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100"><rect width="200" height="100" fill="#036"/><circle cx="50" cy="50" r="40" fill="#fc0"/><text x="100" y="60" fill="#fff">ACME</text></svg>',
)
const each = (name: string, run: (env: FormatEnv) => Promise<void>) => {
  for (const index of [0, 1]) test(`${name} (${['Ollama', 'OpenAI-compatible'][index]})`, () => run(envs[index]!))
}

describe('SVG', () => {
  each('from a URL: 200, format svg, the model got a PNG at the model size', async (env) => {
    const res = await env.generate({ image_url: env.serve(LOGO, 'image/svg+xml') })
    expect(res.status).toBe(200)
    expect(res.body.image).toEqual({ width: 200, height: 100, format: 'svg' })
    expect(res.body.animated).toBe(false)
    const [sent] = env.images()
    expect(sent?.format).toBe('png')
    const size = new DataView(sent!.bytes.buffer, sent!.bytes.byteOffset)
    // The env's model is llava, whose images are 672 px on their longest side (docs/models.md).
    expect({ width: size.getUint32(16), height: size.getUint32(20) }).toEqual({ width: 672, height: 336 })
    expect(await env.creditsUsed()).toBe(1)
  })

  each('in base64 and as a multipart file', async (env) => {
    const inline = await env.generate({ image_base64: base64(LOGO) })
    expect(inline.status).toBe(200)
    expect(inline.body.image.format).toBe('svg')
    // The same bytes: the cached answer.
    const uploaded = await env.upload(LOGO)
    expect(uploaded.status).toBe(200)
    expect(uploaded.body).toMatchObject({ image: { format: 'svg' }, cached: true })
  })

  each('without width, height or viewBox: the default size, 300×150', async (env) => {
    const res = await env.generate({ image_base64: base64(utf8('<svg xmlns="http://www.w3.org/2000/svg"><rect width="300" height="150" fill="red"/></svg>')) })
    expect(res.status).toBe(200)
    expect(res.body.image).toEqual({ width: 300, height: 150, format: 'svg' })
  })
})

describe('AVIF', () => {
  each('from a URL and in base64: 200, format avif, the model got a PNG', async (env) => {
    const avif = await makeAvif(64, 48, [0, 128, 255])
    const res = await env.generate({ image_url: env.serve(avif, 'image/avif') })
    expect(res.status).toBe(200)
    expect(res.body.image).toEqual({ width: 64, height: 48, format: 'avif' })
    expect(env.images()[0]?.format).toBe('png')
    const inline = await env.generate({ image_base64: base64(await makeAvif(32, 32)) })
    expect(inline.status).toBe(200)
    expect(inline.body.image.format).toBe('avif')
  })
})

describe('animations', () => {
  each('an animated GIF: animated true, the model got one grid and was told it shows key frames', async (env) => {
    const gif = await makeSolidAnimation('gif', 60, 40, [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
      [255, 255, 0],
      [0, 0, 0],
    ])
    const res = await env.generate({ image_url: env.serve(gif, 'image/gif') })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ animated: true, image: { width: 60, height: 40, format: 'gif' } })
    const sent = env.images()
    expect(sent).toHaveLength(1)
    expect(sent[0]!.format).toBe('png')
    // Two by two frames of 60×40 with a 4-pixel separator.
    const size = new DataView(sent[0]!.bytes.buffer, sent[0]!.bytes.byteOffset)
    expect({ width: size.getUint32(16), height: size.getUint32(20) }).toEqual({ width: 124, height: 84 })
    expect(env.prompts()).toContain('4 key frames of one animation, in reading order')
  })

  each('an animated WebP: animated true, a grid of its three frames in a row', async (env) => {
    const webp = await makeSolidAnimation('webp', 30, 30, [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ])
    const res = await env.upload(webp)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ animated: true, image: { format: 'webp' } })
    const sent = env.images()[0]!
    const size = new DataView(sent.bytes.buffer, sent.bytes.byteOffset)
    expect({ width: size.getUint32(16), height: size.getUint32(20) }).toEqual({ width: 98, height: 30 })
    expect(env.prompts()).toContain('3 key frames of one animation')
  })

  each('the hand-made looping GIF of the other tests is animated too; a cached answer says so again', async (env) => {
    const url = env.serve(makeAnimatedGif(40, 40, 3))
    expect((await env.generate({ image_url: url })).body.animated).toBe(true)
    const again = await env.generate({ image_url: url })
    expect(again.body).toMatchObject({ animated: true, cached: true })
  })

  each('a still image: animated false and no word of frames', async (env) => {
    const res = await env.generate({ image_base64: base64(makeJpeg(50, 40)) })
    expect(res.body.animated).toBe(false)
    expect(env.prompts()).not.toContain('key frames')
  })
})
