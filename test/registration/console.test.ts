// The console's sign-up page under ALTTEXT_REGISTRATION, in Chromium: closed shows the service's message
// (how to get an account) instead of a form; domains names them beside the email field, and a refused
// address gets the refusal in words. A disabled account signing in is told to ask the operator. A new
// account that has not confirmed its address sees where the mail went and can have it sent again, and the
// mailed link's page confirms it with a click.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { adminOf } from '../admin/support'
import { axeViolations, launchChromium } from '../support/browser'
import { browserTestsEnabled, openPage, settled } from '../support/console'
import { startTestService, type TestService, VALID_PASSWORD } from '../support/service'
import { type SmtpCapture, startSmtpCapture } from '../support/smtp'
import { verificationPath } from './support'

// Chromium's start and an axe run take seconds on a loaded 2-core machine.
setDefaultTimeout(30_000)

const run = browserTestsEnabled('test/registration/console.test.ts')
let browser: Browser
let closed: TestService
let domains: TestService
let smtp: SmtpCapture
// The domains service's clock runs this far ahead of the real one: a test moves it past the wait between two mails.
let ahead = 0

beforeAll(async () => {
  if (!run) return
  smtp = await startSmtpCapture()
  ;[browser, closed, domains] = await Promise.all([
    launchChromium(),
    startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'closed' } }),
    startTestService({
      env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'domains:example.org', ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test' },
      overrides: { clock: () => Date.now() + ahead },
    }),
  ])
})
afterAll(async () => {
  await browser?.close()
  await Promise.all([closed?.stop(), domains?.stop()])
  await smtp?.stop()
})

async function pageOf(service: TestService, path: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  await openPage(page, path)
  return page
}

const alert = (page: Page) => page.locator('main [role=alert].error:not(.empty)')

describe.if(run)('the sign-up page', () => {
  test('closed: the message says how to get an account, and there is no form to fill in', async () => {
    const page = await pageOf(closed, '/sign-up')
    await page.locator('#registration-closed').waitFor()
    expect(await page.locator('#registration-closed').textContent()).toBe(
      'Sign-up is closed on this service: ask the operator of this service for an account (they make one with alttext admin accounts create).',
    )
    expect(await page.locator('main form').count()).toBe(0)
    expect(await page.locator('main a[href="/sign-in"]').count()).toBe(1)
    expect(await axeViolations(page)).toEqual([])
    await page.context().close()
  }, 30_000)

  test('domains: the email field names the domain; another address is refused in words', async () => {
    const page = await pageOf(domains, '/sign-up')
    expect(await page.locator('#email-hint').textContent()).toBe('Sign-up is open to addresses at example.org only.')
    expect(await page.locator('#email').getAttribute('aria-describedby')).toBe('email-hint')
    await page.fill('#email', 'dev@example.com')
    await page.fill('#password', VALID_PASSWORD)
    await page.click('main form button[type=submit]')
    await alert(page).waitFor()
    const text = await alert(page).textContent()
    expect(text).toContain('This service does not let this email address sign up.')
    expect(text).toContain('sign-up is open only to email addresses at example.org')
    expect(await axeViolations(page)).toEqual([])

    await page.fill('#email', `dev-${Date.now()}@example.org`)
    await page.click('main form button[type=submit]')
    await page.locator('main h1', { hasText: 'Your account is ready' }).waitFor()
    await page.context().close()
  }, 30_000)
})

describe.if(run)('confirming the email address', () => {
  test('a new account sees where the link went, has it sent again, and the mailed page confirms it with a click', async () => {
    const email = `confirm-${Date.now()}@example.org`
    const page = await pageOf(domains, '/sign-up')
    await page.fill('#email', email)
    await page.fill('#password', VALID_PASSWORD)
    await page.click('main form button[type=submit]')
    await page.locator('#confirm-first').waitFor()
    expect(await page.locator('#confirm-first').textContent()).toContain(`we mailed a link to ${email}`)
    const key = await page.locator('.once-key input').inputValue()
    await page.click('.once-key button:has-text("Continue to the overview")')

    // Instead of the console: where the mail went, and no navigation to pages that would only refuse.
    await page.locator('main h1', { hasText: 'Confirm your email address' }).waitFor()
    await settled(page)
    expect(await page.locator('main').textContent()).toContain(`We mailed a link to ${email}`)
    expect(await page.locator('nav[aria-label="Console"]').count()).toBe(0)
    expect(await axeViolations(page)).toEqual([])

    ahead += 60_000
    await page.click('main button:has-text("Send the link again")')
    await page.locator('main [role=status]', { hasText: `A new link is on its way to ${email}` }).waitFor()
    const path = await verificationPath(smtp, email, 2)

    await openPage(page, path)
    expect(new URL(page.url()).search).toBe('')
    expect((await domains.api.get('/api/usage', key)).status).toBe(403)
    expect(await axeViolations(page)).toEqual([])
    await page.click('main button:has-text("Confirm my email address")')
    await page.locator('main [role=status]', { hasText: 'Your email address is confirmed' }).waitFor()
    expect((await domains.api.get('/api/usage', key)).status).toBe(200)
    await page.click('main button:has-text("Continue to the console")')
    await page.locator('main h1', { hasText: 'Overview' }).waitFor()
    expect(await page.locator('nav[aria-label="Console"]').count()).toBe(1)
    await page.context().close()
  }, 30_000)

  test('a used link says it no longer works, in words', async () => {
    const email = `used-${Date.now()}@example.org`
    await domains.api.register(email)
    const path = await verificationPath(smtp, email)
    expect((await domains.api.post('/api/verify-email', { token: path.split('=')[1] })).status).toBe(200)
    const page = await pageOf(domains, path)
    await page.click('main button:has-text("Confirm my email address")')
    await alert(page).waitFor()
    expect(await alert(page).textContent()).toContain('This link no longer works')
    await page.context().close()
  }, 30_000)
})

describe.if(run)('the sign-in page', () => {
  test('a disabled account is told to ask the operator', async () => {
    const account = await domains.api.register(`disabled-${Date.now()}@example.org`)
    expect((await adminOf(domains)('accounts', 'disable', account.email)).code).toBe(0)
    const page = await pageOf(domains, '/sign-in')
    await page.fill('#email', account.email)
    await page.fill('#password', account.password)
    await page.click('main form button[type=submit]')
    await alert(page).waitFor()
    expect(await alert(page).textContent()).toContain('This account is disabled. Ask the operator of this service to enable it.')
    await page.context().close()
  }, 30_000)
})
