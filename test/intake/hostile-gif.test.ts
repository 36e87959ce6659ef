// A malformed GIF whose LZW codes loop omggif's decoder for ever must be refused at once, over HTTP
// against the real service, and a burst of them from one account must not hold up another account.
// The GIF deadline is set huge here: were the decoder to loop, these tests would time out rather
// than pass on a timeout of their own.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env.ts'
import { hostileGif, makeAnimatedGif } from '../support/images.ts'

let env: AltTextEnv

beforeAll(async () => {
  env = await startAltTextEnv({ overrides: { intakeOptions: { gifDecodeMsPerMegapixel: 1_000_000_000 } } })
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const corrupt = { code: 'invalid_image_url', message: expect.stringMatching(/^the image is truncated or corrupt/) }

describe('a GIF whose LZW codes would loop the decoder', () => {
  test('is refused as corrupt, the model is never asked and nothing is charged', async () => {
    const res = await env.generate({ image_url: env.serve(hostileGif()) })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject(corrupt)
    expect(env.ollama.chatRequests()).toHaveLength(0)
    expect((await env.service.api.get('/api/usage', env.key)).body.credits.used).toBe(0)
  })

  test("eight in flight from one account do not hold up another account's GIF", async () => {
    const url = env.serve(hostileGif())
    const hostile = Array.from({ length: 8 }, () => env.generate({ image_url: url }))
    const other = await env.service.api.register()
    const res = await env.generate({ image_url: env.serve(makeAnimatedGif(60, 40)) }, other.apiKey)
    expect(res.status).toBe(200)
    for (const refused of await Promise.all(hostile)) {
      expect(refused.status).toBe(400)
      expect(refused.body.error).toMatchObject(corrupt)
    }
    expect(env.ollama.chatRequests()).toHaveLength(1)
  })
})
