// POST /api/alt-text/review end to end, on both model backends: each verdict, structured and plain, one
// credit per fresh verdict, a cached verdict free, an upload judged as a URL is, the usage counted.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { makePng } from '../support/images'
import { scrape } from '../support/metrics'
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

    const cases = [
      { verdict: 'ok', suggested: 'ignored', expected: null },
      { verdict: 'needs_fix', suggested: 'image of sailing boats in a harbour', expected: 'Sailing boats in a harbour.' },
      { verdict: 'decorative', suggested: 'ignored', expected: '' },
      { verdict: 'keyword_stuffed', suggested: 'Boats moored in a harbour.', expected: 'Boats moored in a harbour.' },
    ] as const
    for (const plain of [false, true]) {
      for (const c of cases) {
        test(`${plain ? 'plain' : 'structured'} ${c.verdict}: the verdict, its reasons and the cleaned suggestion`, async () => {
          const { apiKey } = await env.service.api.register()
          env.answer(verdictFields(c.verdict, 'too vague for a harbour', c.suggested), plain)
          const res = await env.review({ image_url: env.serve(makePng(40, 30)), alt_text: 'boat', context: 'Harbour reopening' }, apiKey)
          expect(res.status).toBe(200)
          expect(res.body).toEqual({
            verdict: c.verdict,
            reasons: 'too vague for a harbour',
            suggested_alt_text: c.expected,
            credits_remaining: 49,
            cached: false,
            language: 'en',
            model: 'llava',
            processing_time_ms: expect.any(Number),
            image: { width: 40, height: 30, format: 'png' },
            source: 'url',
          })
          expect(await env.creditsUsed(apiKey)).toBe(1)
          expect(env.modelCalls()).toHaveLength(1)
        })
      }
    }

    test('the same image, alt text and options again: the cached verdict, free, no model call', async () => {
      const { apiKey } = await env.service.api.register()
      env.answer(verdictFields('needs_fix', 'too vague', 'Sailing boats in a harbour.'))
      const url = env.serve(makePng(41, 30))
      const first = await env.review({ image_url: url, alt_text: 'boat' }, apiKey)
      const again = await env.review({ image_url: url, alt_text: '  boat ' }, apiKey)
      expect(first.body.cached).toBe(false)
      expect(again.status).toBe(200)
      expect(again.body).toMatchObject({
        verdict: 'needs_fix',
        reasons: 'too vague',
        suggested_alt_text: 'Sailing boats in a harbour.',
        cached: true,
        credits_remaining: 49,
      })
      expect(env.modelCalls()).toHaveLength(1)
      expect(await env.creditsUsed(apiKey)).toBe(1)
      // Another alt text, or another language, is another verdict.
      const other = await env.review({ image_url: url, alt_text: 'a boat' }, apiKey)
      const german = await env.review({ image_url: url, alt_text: 'boat', language: 'de' }, apiKey)
      expect([other.body.cached, german.body.cached]).toEqual([false, false])
      expect(await env.creditsUsed(apiKey)).toBe(3)
    })

    test('two identical reviews at once share one model call: one credit, the second answer free', async () => {
      const { apiKey } = await env.service.api.register()
      env.answer(verdictFields('needs_fix', 'vague', 'Sailing boats in a harbour.'))
      env.slow(500)
      const url = env.serve(makePng(47, 30))
      const answers = await Promise.all([env.review({ image_url: url, alt_text: 'boat' }, apiKey), env.review({ image_url: url, alt_text: 'boat' }, apiKey)])
      expect(answers.map((answer) => answer.status)).toEqual([200, 200])
      expect(answers.map((answer) => answer.body.cached).sort()).toEqual([false, true])
      expect(answers.map((answer) => answer.body.suggested_alt_text)).toEqual(['Sailing boats in a harbour.', 'Sailing boats in a harbour.'])
      expect(env.modelCalls()).toHaveLength(1)
      expect(await env.creditsUsed(apiKey)).toBe(1)
    })

    test('a verdict is never served as an alt text, nor an alt text as a verdict', async () => {
      const url = env.serve(makePng(42, 30))
      env.answer(verdictFields('decorative', 'a plain pattern'))
      const review = await env.review({ image_url: url, alt_text: 'pattern' })
      const generated = await env.service.api.post('/api/alt-text', { image_url: url }, env.key)
      expect(review.body.verdict).toBe('decorative')
      expect(generated.status).toBe(200)
      expect(generated.body.cached).toBe(false)
    })

    test('an upload (base64) is judged as a fetched image is, and shares its cached verdict', async () => {
      const { apiKey } = await env.service.api.register()
      env.answer(verdictFields('ok', 'fits'))
      const png = makePng(43, 30)
      const uploaded = await env.review({ image_base64: Buffer.from(png).toString('base64'), alt_text: 'A red square.' }, apiKey)
      expect(uploaded.status).toBe(200)
      expect(uploaded.body).toMatchObject({ verdict: 'ok', suggested_alt_text: null, source: 'upload', cached: false })
      const fetched = await env.review({ image_url: env.serve(png), alt_text: 'A red square.' }, apiKey)
      expect(fetched.body).toMatchObject({ verdict: 'ok', source: 'url', cached: true })
    })

    test('a multipart upload with alt_text as a form field', async () => {
      env.answer(verdictFields('needs_fix', 'vague', 'A red square on white.'))
      const form = new FormData()
      form.set('image', new Blob([makePng(44, 30)]), 'x.png')
      form.set('alt_text', 'square')
      form.set('language', 'en')
      const res = await fetch(`${env.service.url}/api/alt-text/review`, { method: 'POST', headers: { 'x-api-key': env.key }, body: form })
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ verdict: 'needs_fix', suggested_alt_text: 'A red square on white.', source: 'upload' })
    })

    test('a long suggestion is fitted to max_length; the usage counts the verdict', async () => {
      const { apiKey } = await env.service.api.register()
      const long = 'Sailing boats moored in a small harbour at sunset, with a lighthouse on the pier and gulls over the water.'
      env.answer(verdictFields('needs_fix', 'vague', long))
      const res = await env.review({ image_url: env.serve(makePng(45, 30)), alt_text: 'boat', max_length: 60 }, apiKey)
      expect(res.status).toBe(200)
      expect(Array.from(res.body.suggested_alt_text as string).length).toBeLessThanOrEqual(60)
      const usage = await env.service.api.get('/api/usage/history?days=1', apiKey)
      expect(usage.status).toBe(200)
      expect(JSON.stringify(usage.body)).toContain('"generations":1')
    })

    test('/metrics counts the route, its cache lookups and its charges as it does the alt-text route', async () => {
      env.answer(verdictFields('ok', 'fine'))
      const before = await scrape(env.service.url)
      const url = env.serve(makePng(46, 30))
      expect((await env.review({ image_url: url, alt_text: 'A red square.' })).status).toBe(200)
      expect((await env.review({ image_url: url, alt_text: 'A red square.' })).body.cached).toBe(true)
      const after = await scrape(env.service.url)
      const route = { method: 'POST', route: '/api/alt-text/review', status: '200' }
      expect(after.value('alttext_http_requests_total', route) - before.value('alttext_http_requests_total', route)).toBe(2)
      expect(after.value('alttext_cache_lookups_total', { result: 'hit' }) - before.value('alttext_cache_lookups_total', { result: 'hit' })).toBe(1)
      expect(after.value('alttext_cache_lookups_total', { result: 'miss' }) - before.value('alttext_cache_lookups_total', { result: 'miss' })).toBe(1)
      expect(after.value('alttext_credits_charged_total') - before.value('alttext_credits_charged_total')).toBe(1)
    })

    test('the OpenAPI document has the route, its JSON and multipart bodies and its answer', async () => {
      const doc = (await env.service.api.get('/openapi.json')).body
      const operation = doc.paths['/api/alt-text/review'].post
      expect(operation.operationId).toBe('reviewAltText')
      expect(Object.keys(operation.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data'])
      const body = operation.requestBody.content['application/json'].schema
      expect(body.required).toEqual(['alt_text'])
      expect(body.properties.alt_text).toMatchObject({ type: 'string', minLength: 1, maxLength: 1000 })
      expect(body.properties.detect_decorative).toBeUndefined()
      expect(JSON.stringify(operation.responses['200'])).toContain('keyword_stuffed')
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429', '502', '504']))
    })
  })
}
