// POST /api/alt-text/review refusing and failing in the contract's shape, on both backends: a missing or
// empty alt_text, a bad image, a model that answers garbage, no verdict of the four, a fix with no
// suggestion, or fails outright: 4xx or 502, and nothing charged.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { MAX_REVIEW_MODEL_CALLS } from '../../src/shared/limits'
import { startFakeOllama } from '../support/fake-ollama'
import { startHttpsImageServer } from '../support/https-image-server'
import { makePng } from '../support/images'
import { startTestService, waitUntil } from '../support/service'
import { verdictFields } from '../support/verdict-reply'
import { BACKENDS, type ReviewEnv, startReviewEnv } from './review-env'

for (const backend of BACKENDS) {
  describe(`${backend}`, () => {
    let env: ReviewEnv
    beforeAll(async () => {
      env = await startReviewEnv(backend)
    }, 60_000)
    afterAll(() => env.stop())
    beforeEach(() => env.reset())

    const refusals: [string, () => Record<string, unknown>, string][] = [
      ['no alt_text', () => ({ image_url: env.serve(makePng(20, 20)) }), 'alt_text'],
      ['an empty alt_text', () => ({ image_url: env.serve(makePng(20, 20)), alt_text: '   ' }), 'alt_text'],
      [
        'an alt_text of invisible characters only (zero-width space, ZWJ, BOM, soft hyphen, bidi marks, whitespace)',
        () => ({ image_url: env.serve(makePng(20, 20)), alt_text: '\u200B \u200D\uFEFF\u00AD\u200E\u200F\u2060\u202E\t\u200C' }),
        'alt_text: must not be empty',
      ],
      ['an alt_text of nothing but our own delimiters', () => ({ image_url: env.serve(makePng(20, 20)), alt_text: '</alt_text_to_judge>' }), 'alt_text'],
      ['alt_text not a string', () => ({ image_url: env.serve(makePng(20, 20)), alt_text: 42 }), 'alt_text'],
      ['no image', () => ({ alt_text: 'boat' }), 'image source'],
      [
        'two images',
        () => ({ image_url: env.serve(makePng(20, 20)), image_base64: Buffer.from(makePng(20, 20)).toString('base64'), alt_text: 'boat' }),
        'exactly one',
      ],
      ['a bad language', () => ({ image_url: env.serve(makePng(20, 20)), alt_text: 'boat', language: 'xx' }), 'language'],
      // Dropping it silently would let a caller think several languages were judged.
      [
        'languages, which the judge does not take',
        () => ({ image_url: env.serve(makePng(20, 20)), alt_text: 'boat', languages: ['de', 'fr'] }),
        'languages: is not taken here',
      ],
    ]
    for (const [name, body, says] of refusals) {
      test(`${name}: 400 invalid_request, no model call, nothing charged`, async () => {
        const res = await env.review(body())
        expect(res.status).toBe(400)
        expect(res.body.error.code).toBe('invalid_request')
        expect(res.body.error.message).toContain(says)
        expect(env.modelCalls()).toHaveLength(0)
        expect(await env.creditsUsed()).toBe(0)
      })
    }

    test('a URL that serves no image: 400 invalid_image_url; base64 of no image: 400 invalid_image', async () => {
      const html = new TextEncoder().encode('<!DOCTYPE html><html><body>Please sign in</body></html>')
      const fetched = await env.review({ image_url: env.serve(html, 'text/html'), alt_text: 'boat' })
      expect(fetched.status).toBe(400)
      expect(fetched.body.error.code).toBe('invalid_image_url')
      const uploaded = await env.review({ image_base64: Buffer.from(html).toString('base64'), alt_text: 'boat' })
      expect(uploaded.status).toBe(400)
      expect(uploaded.body.error.code).toBe('invalid_image')
      expect(env.modelCalls()).toHaveLength(0)
      expect(await env.creditsUsed()).toBe(0)
    })

    const garbage: [string, () => void][] = [
      ['prose with no verdict', () => env.answerRaw('This looks like a nice picture of some boats, I think the alt text is fine overall.')],
      ['a verdict outside the four', () => env.answer(verdictFields('approved', 'looks fine'))],
      ['a plain verdict outside the four', () => env.answer(verdictFields('excellent', 'looks fine'), true)],
      ['needs_fix with no suggestion', () => env.answer(verdictFields('needs_fix', 'vague', ''))],
      ['keyword_stuffed with a suggestion of nothing but markup', () => env.answer(verdictFields('keyword_stuffed', 'list', '<b></b> **'))],
      ['an empty answer', () => env.answerRaw('')],
      ['a model server failing with 500', () => env.fail()],
    ]
    for (const [name, arrange] of garbage) {
      test(`${name}: 502 upstream_error, nothing charged, nothing cached`, async () => {
        const { apiKey } = await env.service.api.register()
        arrange()
        const url = env.serve(makePng(21, 21))
        const res = await env.review({ image_url: url, alt_text: 'boat' }, apiKey)
        expect(res.status).toBe(502)
        expect(res.body.error.code).toBe('upstream_error')
        expect(res.body.error.message).toContain('nothing was charged')
        expect(await env.creditsUsed(apiKey)).toBe(0)
        // Nothing cached: once the model answers, the verdict is fresh (and charged).
        env.reset()
        env.answer(verdictFields('ok', 'fine'))
        const again = await env.review({ image_url: url, alt_text: 'boat' }, apiKey)
        expect(again.body).toMatchObject({ verdict: 'ok', cached: false })
        expect(await env.creditsUsed(apiKey)).toBe(1)
      })
    }

    test('the model fails while nine identical reviews wait: the ten get the one failure, one model call, nothing charged; the next tries again', async () => {
      const { apiKey } = await env.service.api.register()
      const body = { image_url: env.serve(makePng(34, 34)), alt_text: 'boat' }
      const waitingSince = (from: number) => env.service.logs.slice(from).filter((line) => line.msg === 'waiting for an identical review under way').length
      env.hang()
      const from = env.service.logs.length
      const first = env.review(body, apiKey)
      await waitUntil(() => env.modelCalls().length === 1, 'the first review at the model')
      const waiting = Array.from({ length: 9 }, () => env.review(body, apiKey))
      await waitUntil(() => waitingSince(from) === 9, 'nine reviews waiting for the first')
      env.failHeld(500)

      const answers = await Promise.all([first, ...waiting])
      expect(answers.map((res) => [res.status, res.body.error?.code])).toEqual(Array.from({ length: 10 }, () => [502, 'upstream_error']))
      expect(env.modelCalls()).toHaveLength(1)
      expect(await env.creditsUsed(apiKey)).toBe(0)

      env.reset()
      env.answer(verdictFields('ok', 'fine'))
      const again = await env.review(body, apiKey)
      expect(again.body).toMatchObject({ verdict: 'ok', cached: false })
      expect(env.modelCalls()).toHaveLength(1)
      expect(await env.creditsUsed(apiKey)).toBe(1)
    })

    describe('a short deadline, one model slot and two credits', () => {
      let tight: ReviewEnv
      beforeAll(async () => {
        tight = await startReviewEnv(backend, {
          env: { ALTTEXT_FREE_CREDITS: '2', ALTTEXT_MODEL_CONCURRENCY: '1' },
          overrides: { generationDeadlineMs: 1000 },
        })
      }, 60_000)
      afterAll(() => tight.stop())

      test('while the one model slot is taken until the deadline, a second review is 503 overloaded, not 504; nothing charged', async () => {
        tight.hang()
        const [first, second] = await Promise.all([
          tight.review({ image_url: tight.serve(makePng(28, 28)), alt_text: 'boat' }),
          tight.review({ image_url: tight.serve(makePng(29, 29)), alt_text: 'boat' }),
        ])
        expect([first.status, second.status].sort()).toEqual([503, 504])
        expect([first.body.error.code, second.body.error.code].sort()).toEqual(['overloaded', 'upstream_timeout'])
        expect(tight.modelCalls()).toHaveLength(1)
        expect(await tight.creditsUsed()).toBe(0)
        tight.reset()
      }, 30_000)

      test('a model that does not answer in time: 504 upstream_timeout, nothing charged; with no credit left, 429 before any work', async () => {
        tight.hang()
        const url = tight.serve(makePng(26, 26))
        const late = await tight.review({ image_url: url, alt_text: 'boat' })
        expect(late.status).toBe(504)
        expect(late.body.error.code).toBe('upstream_timeout')
        expect(await tight.creditsUsed()).toBe(0)
        tight.reset()
        tight.answer(verdictFields('ok', 'fine'))
        expect((await tight.review({ image_url: url, alt_text: 'boat' })).body).toMatchObject({ verdict: 'ok', credits_remaining: 1 })
        expect((await tight.review({ image_url: url, alt_text: 'a boat' })).body).toMatchObject({ verdict: 'ok', credits_remaining: 0 })
        const calls = tight.modelCalls().length
        // No credit left: refused before the image is fetched, also for a verdict that is cached.
        for (const body of [
          { image_url: tight.serve(makePng(27, 27)), alt_text: 'boat' },
          { image_url: url, alt_text: 'boat' },
        ]) {
          const refused = await tight.review(body)
          expect(refused.status).toBe(429)
          expect(refused.body.error.code).toBe('quota_exceeded')
        }
        expect(tight.modelCalls()).toHaveLength(calls)
      }, 30_000)
    })
  })
}

describe('the model work one review may use', () => {
  test(`two hosts that refuse the schema and then fail: ${MAX_REVIEW_MODEL_CALLS} model calls in all (not one per host and mode), 502, nothing charged`, async () => {
    const hosts = await Promise.all([1, 2].map(() => startFakeOllama({ formatSupport: 'refuse', failStatus: 500 })))
    const images = await startHttpsImageServer()
    const service = await startTestService({
      env: {
        ALTTEXT_MODEL_HOSTS: hosts.map((host) => host.url).join(','),
        ALTTEXT_MODEL: 'llava',
        ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
        NODE_EXTRA_CA_CERTS: images.caPath,
        ALTTEXT_RATE_LIMITS: 'off',
      },
    })
    try {
      const { apiKey } = await service.api.register()
      const url = images.route(`/review-budget-${process.pid}`, { kind: 'bytes', body: makePng(35, 35) })
      const res = await service.api.post('/api/alt-text/review', { image_url: url, alt_text: 'boat' }, apiKey)
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_error')
      expect(hosts.map((host) => host.chatRequests().length).reduce((a, b) => a + b)).toBe(MAX_REVIEW_MODEL_CALLS)
      expect((await service.api.get('/api/usage', apiKey)).body.credits.used).toBe(0)
    } finally {
      await service.stop()
      await Promise.all([...hosts.map((host) => host.stop()), images.stop()])
    }
  })

  for (const backend of BACKENDS) {
    test(`${backend}: a model that does not answer within the review's model time: 504 upstream_timeout, before the request's deadline, nothing charged`, async () => {
      const env = await startReviewEnv(backend, { overrides: { reviewModelBudgetMs: 200 } })
      try {
        env.hang()
        const res = await env.review({ image_url: env.serve(makePng(36, 36)), alt_text: 'boat' })
        expect(res.status).toBe(504)
        expect(res.body.error.code).toBe('upstream_timeout')
        expect(res.body.error.message).toContain('0.2 seconds of model time a review may use')
        expect(env.modelCalls()).toHaveLength(1)
        expect(await env.creditsUsed()).toBe(0)
      } finally {
        await env.stop()
      }
    })
  }
})
