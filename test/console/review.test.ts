// Batches in the console, in Chromium: the list, a batch's results, and the way from a batch to its items
// in the review queue (a batch sent with `review: true` makes each item a pending suggestion; deciding them
// is the queue's, test/console/review-queue.test.ts); nothing of a review is kept in the browser any more.
// axe-core at 1280 and 320 px in both schemes.
import { describe, expect, test } from 'bun:test'
import {
  A11Y_VIEWPORTS,
  ALT_TEXT_REPLY,
  type ConsoleEnv,
  checkedAt,
  consoleForFile,
  newContext,
  openPage,
  pageFindings,
  signInContext,
} from '../support/console'
import { makePng } from '../support/images'
import { type RegisteredAccount, waitUntil } from '../support/service'

let env: ConsoleEnv
let account: RegisteredAccount
let batchId: string

const run = consoleForFile('test/console/review.test.ts', { rateLimits: false, account: true }, async (started) => {
  ;({ env, account } = started)
  const items = [1, 2, 3].map((n) => ({
    image_url: env.images.route(`/review-${n}.png`, { kind: 'bytes', body: makePng(30 + n, 20) }),
    metadata: { media_id: 4710 + n },
  }))
  const created = await env.service.api.post('/api/batches', { items, review: true }, account.apiKey)
  expect(created.status).toBe(202)
  batchId = created.body.id
})

/** The batch has run (awaited in the tests, whose time limit is longer than the set-up's). */
const completed = () =>
  waitUntil(async () => (await env.service.api.get(`/api/batches/${batchId}`, account.apiKey)).body.status === 'completed', 'the batch to complete', 30_000)

describe.skipIf(!run)('batches', () => {
  test('a batch shows its results and leads to its items in the review queue, decided there and kept by the service', async () => {
    await completed()
    const context = await newContext(env)
    await signInContext(context, env, account)
    const page = await context.newPage()
    try {
      await openPage(page, '/batches')
      await page.getByRole('link', { name: `Batch ${batchId}`, exact: true }).click()
      await page.waitForSelector(`h1:has-text("Batch ${batchId}")`)
      await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
      expect(await page.locator('blockquote.alt').allTextContents()).toEqual([ALT_TEXT_REPLY, ALT_TEXT_REPLY, ALT_TEXT_REPLY])

      await page.getByRole('link', { name: "Review this batch's items" }).click()
      await page.waitForSelector('main h1:has-text("Review")')
      await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
      expect(new URL(page.url()).search).toBe(`?status=all&batch=${batchId}`)
      const cards = page.locator('li.suggestion')
      expect(await cards.count()).toBe(3)
      const targets = await cards.locator('.target').allTextContents()
      expect(targets.map((text) => new RegExp(`batch: ${batchId}#(\\d)`).exec(text)?.[1]).sort()).toEqual(['0', '1', '2'])

      await page.getByRole('button', { name: 'Accept suggestion 1' }).click()
      await page.locator('main p[role=status]', { hasText: 'Suggestion 1: accepted.' }).waitFor()
      // The decision is the service's: a reload shows it, and the browser keeps nothing of the review.
      await page.reload()
      await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
      expect(await cards.first().getAttribute('data-status')).toBe('accepted')
      const stored = await page.evaluate(() => (globalThis as any).sessionStorage.length)
      expect(stored).toBe(0)
      const listed = await env.service.api.get(`/api/suggestions?status=accepted&target_kind=batch`, account.apiKey)
      expect(listed.body.suggestions.map((s: { batch_id: string }) => s.batch_id)).toEqual([batchId])
    } finally {
      await context.close()
    }
  }, 60_000)

  for (const viewport of A11Y_VIEWPORTS) {
    test(`axe-core finds no violation of ${checkedAt(viewport)} in the list and a batch at ${viewport.width} px, ${viewport.scheme}`, async () => {
      await completed()
      const context = await newContext(env, viewport)
      await signInContext(context, env, account)
      const page = await context.newPage()
      try {
        expect(await pageFindings(page, () => openPage(page, '/batches'), { viewport })).toBeUndefined()
        expect(await pageFindings(page, () => openPage(page, `/batches?id=${batchId}`), { viewport })).toBeUndefined()
      } finally {
        await context.close()
      }
    }, 60_000)
  }
})
