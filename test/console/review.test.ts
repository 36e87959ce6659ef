// The console's review of a batch's results, in Chromium: the batch list, accept / edit / reject by
// keyboard with each change announced in the status region, the decisions kept over a reload (this tab
// only), the CSV export of the accepted and edited rows, and axe-core at 1280 and 320 px in both schemes.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { reviewCsv } from '../../src/modules/console/web/review'
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

/** The id of the element that has the focus, in the page. */
// A function, not a string: the console's CSP forbids eval, which a string predicate needs when it polls.
const focusedIs = (id: string) => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id === id

const run = consoleForFile('test/console/review.test.ts', { rateLimits: false, account: true }, async (started) => {
  ;({ env, account } = started)
  const items = [1, 2, 3].map((n) => ({
    image_url: env.images.route(`/review-${n}.png`, { kind: 'bytes', body: makePng(30 + n, 20) }),
    metadata: { media_id: 4710 + n },
  }))
  const created = await env.service.api.post('/api/batches', { items }, account.apiKey)
  expect(created.status).toBe(202)
  batchId = created.body.id
})

/** The batch has run (awaited in the tests, whose time limit is longer than the set-up's). */
const completed = () =>
  waitUntil(async () => (await env.service.api.get(`/api/batches/${batchId}`, account.apiKey)).body.status === 'completed', 'the batch to complete', 30_000)

describe.skipIf(!run)('batch review', () => {
  test('accept, edit and reject by keyboard, announced; kept over a reload; the CSV holds the accepted and edited rows', async () => {
    await completed()
    const context = await newContext(env)
    await signInContext(context, env, account)
    const page = await context.newPage()
    try {
      await openPage(page, '/batches')
      await page.getByRole('link', { name: `Review ${batchId}` }).click()
      await page.waitForSelector(`h1:has-text("Review ${batchId}")`)
      await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
      expect(await page.locator('blockquote.alt').allTextContents()).toEqual([ALT_TEXT_REPLY, ALT_TEXT_REPLY, ALT_TEXT_REPLY])

      // Accept item 1 from the keyboard.
      await page.getByRole('button', { name: 'Accept item 1' }).focus()
      await page.keyboard.press('Enter')
      await page.waitForSelector('p[role="status"]:has-text("Item 1: accepted.")')

      // Edit item 2: the field takes the focus, is labelled, and Save (by keyboard) announces it.
      await page.getByRole('button', { name: 'Edit item 2' }).focus()
      await page.keyboard.press('Enter')
      const field = page.getByLabel('Alt text for item 2')
      await page.waitForFunction(focusedIs, 'alt-edit-1')
      await field.fill('=Two kids with a kite, on the beach')
      await page.keyboard.press('Tab')
      await page.keyboard.press('Enter')
      await page.waitForSelector('p[role="status"]:has-text("Item 2: edited.")')
      // The focus went back to the Edit button.
      await page.waitForFunction(focusedIs, 'edit-1')

      await page.getByRole('button', { name: 'Reject item 3' }).click()
      await page.waitForSelector('p[role="status"]:has-text("Item 3: rejected.")')

      // A reload keeps the decisions (sessionStorage of this tab).
      await page.reload()
      await page.waitForSelector(`h1:has-text("Review ${batchId}")`)
      await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
      expect(await page.locator('.card strong').allTextContents()).toEqual(['accepted', 'edited', 'rejected'])

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export accepted and edited as CSV' }).click()])
      expect(download.suggestedFilename()).toBe(`${batchId}-review.csv`)
      const csv = readFileSync((await download.path())!, 'utf8')
      expect(csv).toBe(
        [
          'batch_id,index,decision,alt_text,proposed_alt_text,metadata',
          `${batchId},0,accepted,${ALT_TEXT_REPLY},${ALT_TEXT_REPLY},"{""media_id"":4711}"`,
          `${batchId},1,edited,"'=Two kids with a kite, on the beach",${ALT_TEXT_REPLY},"{""media_id"":4712}"`,
          '',
        ].join('\r\n'),
      )
      await page.waitForSelector('p[role="status"]:has-text("Exported 2 rows as CSV.")')
    } finally {
      await context.close()
    }
  }, 60_000)

  for (const viewport of A11Y_VIEWPORTS) {
    test(`axe-core finds no violation of ${checkedAt(viewport)} in the list and the review at ${viewport.width} px, ${viewport.scheme}`, async () => {
      await completed()
      const context = await newContext(env, viewport)
      await signInContext(context, env, account)
      const page = await context.newPage()
      try {
        expect(await pageFindings(page, () => openPage(page, '/batches'), { viewport })).toBeUndefined()
        expect(
          await pageFindings(
            page,
            async () => {
              await openPage(page, `/batches?id=${batchId}`)
              await page.getByRole('button', { name: 'Edit item 1' }).click()
              await page.getByLabel('Alt text for item 1').waitFor()
            },
            { viewport },
          ),
        ).toBeUndefined()
      } finally {
        await context.close()
      }
    }, 60_000)
  }
})

describe('the review CSV export', () => {
  test('an edited alt with a formula after a ";" or "," is guarded: a spreadsheet that splits on ";" starts no formula', () => {
    const rows = [0, 1].map((index) => ({ index, proposed: 'A kite.', decorative: false, metadata: null }))
    const csv = reviewCsv('b1', rows, { 0: { kind: 'edited', alt: "Company logo;=cmd|' /C calc'!A0" }, 1: { kind: 'edited', alt: 'Two kites,@SUM(A1)' } })
    expect(csv).toBe(
      [
        'batch_id,index,decision,alt_text,proposed_alt_text,metadata',
        "b1,0,edited,Company logo;'=cmd|' /C calc'!A0,A kite.,",
        'b1,1,edited,"Two kites,\'@SUM(A1)",A kite.,',
        '',
      ].join('\r\n'),
    )
    const cells = csv.split(/[\r\n]+/u).flatMap((line) => line.split(/[;,]/u).map((cell) => cell.replace(/^"+/u, '')))
    expect(cells.filter((cell) => /^[=+\-@\t\r]/u.test(cell))).toEqual([])
  })
})
