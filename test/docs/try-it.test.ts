// The "Try it" forms of /docs in Chromium: they send the operation's request to this server with the key
// typed into the page or, signed in to the console, with that session, fill path parameters in, show the
// answer, and keep the key out of the browser's storage.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchChromium } from '../support/browser'
import { browserTestsEnabled, watchPageProblems } from '../support/console'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'

// Chromium's start takes seconds on a loaded 2-core machine.
setDefaultTimeout(30_000)

const run = browserTestsEnabled('test/docs/try-it.test.ts')
let service: TestService
let browser: Browser
let account: RegisteredAccount

beforeAll(async () => {
  if (!run) return
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  browser = await launchChromium()
  account = await service.api.register()
})
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

/** Opens the operation's form, fills `fields` (label → value), sends it and returns the status line and body shown. */
async function tryOperation(page: Page, operationId: string, fields: Record<string, string> = {}): Promise<{ status: string; body: any }> {
  const operation = page.locator(`#${operationId}`)
  await operation.locator('summary:has-text("Try it")').click()
  for (const [label, value] of Object.entries(fields)) await operation.getByLabel(label, { exact: false }).fill(value)
  await operation.locator('button[type=submit]').click()
  const result = operation.locator('[role=status]')
  await result.locator('pre').waitFor()
  return { status: (await result.locator('p').textContent()) ?? '', body: JSON.parse((await result.locator('pre').textContent()) ?? 'null') }
}

async function openReference(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage()
  const problems = watchPageProblems(page)
  await page.goto(`${service.url}/docs`)
  await page.locator('#try-key').waitFor()
  return { page, problems }
}

describe.if(run)('"Try it" on /docs', () => {
  test('sends the key typed into the page and shows the answer', async () => {
    const context = await browser.newContext()
    const { page, problems } = await openReference(context)
    const anonymous = await tryOperation(page, 'getUsage')
    expect(anonymous.status).toBe('HTTP 401 Unauthorized')
    expect(anonymous.body.error.code).toBe('missing_api_key')
    await page.fill('#try-key', account.apiKey)
    await page.locator('#getUsage button[type=submit]').click()
    await page.locator('#getUsage [role=status] p:has-text("HTTP 200")').waitFor()
    expect(JSON.parse((await page.locator('#getUsage [role=status] pre').textContent()) ?? '{}').plan).toBe('free')
    // The key stays in the page: nothing is stored.
    const stored = await page.evaluate(() => {
      const window = globalThis as any
      return [window.localStorage.length, window.sessionStorage.length, window.document.cookie]
    })
    expect(stored).toEqual([0, 0, ''])
    expect(problems.filter((p) => !p.includes('status of 401'))).toEqual([])
    await context.close()
  })

  test('fills path parameters in and sends the JSON body as edited', async () => {
    const context = await browser.newContext()
    const { page } = await openReference(context)
    await page.fill('#try-key', account.apiKey)
    const created = await tryOperation(page, 'createKey', { 'JSON body': JSON.stringify({ label: 'from the reference' }) })
    expect(created.status).toBe('HTTP 201 Created')
    expect(created.body.label).toBe('from the reference')
    const shown = await tryOperation(page, 'getKey', { prefix: created.body.prefix })
    expect(shown.status).toBe('HTTP 200 OK')
    expect(shown.body.prefix).toBe(created.body.prefix)
    await context.close()
  })

  test("signed in to the console, a request that changes something goes with the session (the page's own Origin)", async () => {
    const context = await browser.newContext()
    const signIn = await context.request.post(`${service.url}/api/session`, {
      data: { email: account.email, password: account.password },
      headers: { origin: service.url },
    })
    expect(signIn.status()).toBe(200)
    const { page } = await openReference(context)
    const created = await tryOperation(page, 'createKey', { 'JSON body': '{}' })
    expect(created.status).toBe('HTTP 201 Created')
    expect(created.body.api_key).toMatch(/^alt_[0-9a-f]{64}$/)
    await context.close()
  })
})
