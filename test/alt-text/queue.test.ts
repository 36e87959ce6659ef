// The generation queue seen over HTTP: ALTTEXT_MODEL_CONCURRENCY bounds the model calls in flight, the
// rest wait; when waiting cannot end before the deadline the service answers 503 overloaded with
// Retry-After at once instead of hanging, and a refused request costs nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ReplyContext } from '../support/fake-ollama'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import type { ApiResponse } from '../support/service'
import { makePng } from '../support/images'

/** POST /api/alt-text with the env's key (or another), typed for the assertions below. */
const generate = (target: AltTextEnv, body: Record<string, unknown>, key = target.key) => target.generate(body, key) as Promise<ApiResponse>

const REPLY = 'Two children flying a red kite on a windy beach.'

/** Highest number of model calls the fake saw at once, sampled inside each call and by a timer. */
function concurrencyProbe(target: () => AltTextEnv) {
  let max = 0
  let timer: ReturnType<typeof setInterval> | undefined
  const sample = () => {
    max = Math.max(max, target().ollama.inFlight())
  }
  return {
    reply: (_: ReplyContext) => {
      sample()
      return REPLY
    },
    start() {
      max = 0
      timer = setInterval(sample, 5)
    },
    stop() {
      clearInterval(timer)
      sample()
      return max
    },
  }
}

let capacity: AltTextEnv
let overflow: AltTextEnv
const capacityProbe = concurrencyProbe(() => capacity)
const overflowProbe = concurrencyProbe(() => overflow)
let size = 700

beforeAll(async () => {
  ;[capacity, overflow] = await Promise.all([
    startAltTextEnv({ env: { ALTTEXT_MODEL_CONCURRENCY: '1' }, ollama: { delayMs: 400, reply: capacityProbe.reply } }),
    startAltTextEnv({
      env: { ALTTEXT_MODEL_CONCURRENCY: '1' },
      overrides: { generationDeadlineMs: 2000 },
      ollama: { delayMs: 600, reply: overflowProbe.reply },
    }),
  ])
})
afterAll(async () => {
  await Promise.all([capacity.stop(), overflow.stop()])
})

describe('ALTTEXT_MODEL_CONCURRENCY=1', () => {
  test('never more than one model call at a time; every request within capacity succeeds', async () => {
    const { apiKey } = await capacity.service.api.register()
    capacityProbe.start()
    const results = await Promise.all(Array.from({ length: 4 }, () => generate(capacity, { image_url: capacity.serve(makePng(++size, 32)) }, apiKey)))
    const maxInFlight = capacityProbe.stop()
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect(results.every((r) => r.body.alt_text === REPLY && r.body.cached === false)).toBe(true)
    expect(capacity.ollama.chatRequests().length).toBe(4)
    expect(maxInFlight).toBe(1)
    expect((await capacity.service.api.get('/api/usage', apiKey)).body.credits.used).toBe(4)
  })
})

describe('overflow', () => {
  test('12 distinct concurrent requests against a 2 s deadline: 200s and 503 overloaded with Retry-After, nothing else, nothing hangs, 503s are free', async () => {
    const { apiKey } = await overflow.service.api.register()
    overflowProbe.start()
    const results = await Promise.all(Array.from({ length: 12 }, () => generate(overflow, { image_url: overflow.serve(makePng(++size, 32)) }, apiKey)))
    const maxInFlight = overflowProbe.stop()
    expect(maxInFlight).toBeLessThanOrEqual(1)

    const ok = results.filter((r) => r.status === 200)
    const refused = results.filter((r) => r.status === 503)
    // Every response arrived (Promise.all resolved) and is either an answer or a clean refusal.
    const others = results.filter((r) => r.status !== 200 && r.status !== 503).map((r) => `${r.status} ${r.body?.error?.code}: ${r.body?.error?.message}`)
    expect(others).toEqual([])
    expect(ok.length).toBeGreaterThanOrEqual(1)
    expect(refused.length).toBeGreaterThanOrEqual(1)
    for (const r of refused) {
      expect(r.body.error.code).toBe('overloaded')
      expect(r.body.error.docs).toEndWith('#overloaded')
      const retryAfter = r.headers.get('retry-after')
      expect(retryAfter).toMatch(/^\d+$/)
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    }
    for (const r of ok) expect(r.body.cached).toBe(false)

    const usage = await overflow.service.api.get('/api/usage', apiKey)
    expect(usage.body.credits.used).toBe(ok.length)
    // Nothing is left running in the model once the answers are out.
    await overflow.ollama.waitFor(() => overflow.ollama.inFlight() === 0)
  })
})
