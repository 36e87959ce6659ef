// long_description in batches, on both backends: an option of each item, as every other field of
// POST /api/alt-text; an item that asked gets the field in its result (the long description of a
// complex image), one that did not has none; one credit per item; a bad value refuses the batch.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type LongEnv, startLongEnvs } from '../alt-text/long-description-support'
import { LONG_DESCRIPTION } from '../support/fake-ollama'
import { makePng } from '../support/images'
import { batchClient } from './support'

let envs: LongEnv[]
let side = 40
const png = () => makePng(++side, 39)

// Two services and two fake model servers start: more than the default 5 s on a busy machine.
beforeAll(async () => {
  envs = await startLongEnvs()
}, 60_000)
afterAll(() => Promise.all(envs.map((env) => env.stop())))

for (const index of [0, 1]) {
  const env = () => envs[index]!
  describe(index === 0 ? 'Ollama' : 'OpenAI-compatible', () => {
    test('per item: the item that asked carries long_description, the other not; one credit each', async () => {
      env().model({ complex: true, mode: 'structured' })
      const batches = batchClient(env().service.api, env().key)
      const before = await env().creditsUsed()
      const created = await batches.create({
        items: [
          { image_url: env().serve(png()), long_description: true, metadata: { chart: true } },
          { image_url: env().serve(png()), metadata: { chart: false } },
        ],
      })
      expect(created.status).toBe(202)
      const ended = await batches.ended(created.body.id)
      const [asked, notAsked] = ended.body.items
      expect(asked.status).toBe('done')
      expect(asked.result).toMatchObject({ alt_text: expect.stringContaining('bar chart'), long_description: LONG_DESCRIPTION })
      expect(notAsked.status).toBe('done')
      expect('long_description' in notAsked.result).toBe(false)
      expect(await env().creditsUsed()).toBe(before + 2)
    })
  })
}

test('a bad long_description in an item: 400 invalid_request naming the item and field, no batch', async () => {
  const env = envs[0]!
  const batches = batchClient(env.service.api, env.key)
  const res = await batches.create({ items: [{ image_url: env.serve(png()) }, { image_url: env.serve(png()), long_description: 'yes' }] })
  expect(res.status).toBe(400)
  expect(res.body.error.code).toBe('invalid_request')
  expect(res.body.error.message).toContain('long_description')
  expect((await batches.list()).body.batches ?? []).toHaveLength(0)
})
