// The reset page in a real browser: a double click or a second submit must not throw away the one-time key
// the first submit showed (each reset revokes every earlier key), and the page passes axe's WCAG checks.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { axeViolations, chromiumInstalled, launchChromium } from '../support/browser'
import { startTestService, type TestService, waitUntil } from '../support/service'

let service: TestService
let browser: Browser

// CI installs Chromium and must run these; on a developer's machine without it they skip, saying so.
const runPages = chromiumInstalled() || process.env.CI === 'true'
if (!runPages) console.warn('SKIPPED: page tests need Chromium at /usr/bin/chromium (apt-get install chromium)')

beforeAll(async () => {
  if (!runPages) return
  if (!chromiumInstalled()) throw new Error('Chromium is missing at /usr/bin/chromium: .ci/run installs it (apt-get install chromium)')
  service = await startTestService()
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

/** A reset link as the log mailer writes it (no SMTP configured). */
async function resetLink(email: string): Promise<string> {
  const before = service.logText().length
  expect((await service.api.post('/api/forgot-password', { email })).status).toBe(202)
  let link = ''
  await waitUntil(() => {
    link = /\/reset-password\?token=[\w-]+/.exec(service.logText().slice(before))?.[0] ?? ''
    return link !== ''
  }, 'the reset link in the log')
  return service.url + link
}

describe.if(runPages)('the reset page', () => {
  test('a double click and a second submit reset once; the key shown works; the form stays disabled', async () => {
    const account = await service.api.register()
    const page = await browser.newPage()
    let resets = 0
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/api/reset-password')) resets++
    })
    await page.goto(await resetLink(account.email))
    // The token left the address bar at once, so it is not kept in history or sent as a Referer.
    expect(page.url()).not.toContain('token=')
    await page.fill('#new_password', 'a brand new password 42')
    await page.dblclick('#submit')
    await page.$eval('#reset', (form) => (form as unknown as { requestSubmit(): void }).requestSubmit())
    await page.waitForSelector('#key-box:not([hidden])')
    const key = await page.inputValue('#new-key')
    expect(key).toMatch(/^alt_[0-9a-f]{64}$/)
    expect(resets).toBe(1)
    expect(await page.isDisabled('#submit')).toBe(true)
    expect(await page.isDisabled('#new_password')).toBe(true)
    expect(await page.isVisible('#copy')).toBe(true)
    // The key on the screen is the account's one working key.
    expect((await service.api.get('/api/usage', key)).status).toBe(200)
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(401)
    await page.close()
  })

  test('a failed reset says why and lets the person try again', async () => {
    const page = await browser.newPage()
    await page.goto(`${service.url}/reset-password?token=not-a-real-token`)
    await page.fill('#new_password', 'a brand new password 42')
    await page.click('#submit')
    await page.waitForSelector('#result:has-text("Failed")')
    expect(await page.textContent('#result')).toContain('reset token')
    expect(await page.isDisabled('#submit')).toBe(false)
    await page.close()
  })

  test.each(['/reset-password', '/docs/errors'])('%s has no WCAG 2.1 A/AA violations (axe-core)', async (path) => {
    const page = await browser.newPage()
    await page.goto(service.url + path)
    expect(await axeViolations(page)).toEqual([])
    await page.close()
  })
})
