// The reset page that reset mails link to, in Chromium: the token leaves the address bar; a double click
// and a second submit reset once (each reset revokes every earlier key, so a second one would throw away
// the key the first one showed); the key shown works; a bad token is explained and can be retried.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { browserTestsEnabled, type ConsoleEnv, newContext, openPage, resetPathFromMail, startConsoleEnv } from '../support/console'

const run = browserTestsEnabled('test/console/reset.test.ts')
let env: ConsoleEnv

beforeAll(async () => {
  if (run) env = await startConsoleEnv({ rateLimits: false })
})
afterAll(async () => {
  await env?.stop()
})

describe.if(run)('the reset page', () => {
  test('a double click and a second submit reset once; the key shown works; the form stays disabled', async () => {
    const account = await env.service.api.register()
    const asked = Date.now()
    expect((await env.service.api.post('/api/forgot-password', { email: account.email })).status).toBe(202)
    const path = await resetPathFromMail(env.smtp, account.email, asked)
    const context = await newContext(env)
    const page = await context.newPage()
    let resets = 0
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/api/reset-password')) resets++
    })
    await openPage(page, path)
    // The token left the address bar at once, so it is not kept in history or sent anywhere.
    expect(page.url()).not.toContain('token=')
    expect(await page.inputValue('#token')).toBe(path.split('token=')[1]!)
    await page.fill('#new_password', 'a brand new password 42')
    await page.dblclick('#reset-form button[type=submit]')
    await page.$eval('#reset-form', (form) => (form as unknown as { requestSubmit(): void }).requestSubmit())
    const keyField = page.locator('.once-key input')
    await keyField.waitFor()
    const key = await keyField.inputValue()
    expect(key).toMatch(/^alt_[0-9a-f]{64}$/)
    expect(resets).toBe(1)
    expect(await page.isDisabled('#new_password')).toBe(true)
    expect(await page.isDisabled('#reset-form button[type=submit]')).toBe(true)
    expect(await page.textContent('.once-key')).toContain("you won't see it again")
    // The key on the screen is the account's one working key.
    expect((await env.service.api.get('/api/usage', key)).status).toBe(200)
    expect((await env.service.api.get('/api/usage', account.apiKey)).status).toBe(401)
    await context.close()
  })

  test('a bad token is explained in words and the person can try again', async () => {
    const context = await newContext(env)
    const page = await context.newPage()
    await openPage(page, '/reset-password?token=not-a-real-token')
    await page.fill('#new_password', 'a brand new password 42')
    await page.click('#reset-form button[type=submit]')
    const alert = page.locator('#reset-form [role=alert]')
    await alert.filter({ hasText: 'no longer works' }).waitFor()
    expect(await alert.textContent()).toContain('Ask for a new one')
    expect(await page.isDisabled('#reset-form button[type=submit]')).toBe(false)
    await context.close()
  })
})
