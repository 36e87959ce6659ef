// The service's errors as the console shows them: in words, with the service's own message, in a live
// region; a session that ended elsewhere sends the person to the sign-in page, saying why.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type ConsoleEnv, consoleForFile, newContext, openPage, signInContext } from '../support/console'
import { type RegisteredAccount, startTestService } from '../support/service'

let env: ConsoleEnv
let account: RegisteredAccount
const run = consoleForFile('test/console/error.test.ts', { rateLimits: false, account: true }, (started) => ({ env, account } = started))

const alertIn = (page: Page, scope = 'main') => page.locator(`${scope} [role=alert].error:not(.empty)`)

describe.if(run)('errors in words', () => {
  test('a wrong password, then too many tries: each said plainly, the second with the wait', async () => {
    // A service of its own, with the rate limits on: 5 sign-ins a minute per address.
    const limited = await startTestService()
    const context = await env.browser.newContext({ baseURL: limited.url })
    try {
      const page = await context.newPage()
      await openPage(page, '/sign-in')
      await page.fill('#email', account.email)
      await page.fill('#password', 'not the password')
      await page.click('main form button[type=submit]')
      await alertIn(page).waitFor()
      expect(await alertIn(page).textContent()).toContain('The email address or the password is not right.')
      for (let i = 0; i < 5; i++) {
        await page.click('main form button[type=submit]')
        await page.locator('main form button[type=submit]:not([disabled])').waitFor()
      }
      await alertIn(page).filter({ hasText: 'Too many attempts' }).waitFor()
      expect(await alertIn(page).textContent()).toMatch(/Wait \d+ seconds? before trying again\./)
    } finally {
      await context.close()
      await limited.stop()
    }
  }, 30_000)

  test('signing up with a taken email says so and points to sign-in and reset', async () => {
    const context = await newContext(env)
    const page = await context.newPage()
    await openPage(page, '/sign-up')
    await page.fill('#email', account.email)
    await page.fill('#password', 'another long password')
    await page.click('main form button[type=submit]')
    await alertIn(page).waitFor()
    expect(await alertIn(page).textContent()).toContain('An account with this email address already exists.')
    await context.close()
  }, 30_000)

  test('an unusable image URL: the sentence and the service’s reason', async () => {
    const context = await newContext(env)
    await signInContext(context, env, account)
    const page = await context.newPage()
    await openPage(page, '/try')
    await page.check('input[name=source][value=url]')
    await page.fill('#image-url', 'http://127.0.0.1:9/not-https.jpg')
    await page.click('button:has-text("Describe the image")')
    await alertIn(page, 'main form').waitFor()
    const text = await alertIn(page, 'main form').textContent()
    expect(text).toContain('The image at that address could not be used.')
    expect(text).toContain('The service says:')
    expect(text).toContain('https')
    await context.close()
  }, 30_000)

  test('the service out of reach: said as such, and the page keeps working', async () => {
    const context = await newContext(env)
    await signInContext(context, env, account)
    const page = await context.newPage()
    await page.route('**/api/keys', (route) => route.abort('connectionrefused'))
    await page.goto('/keys')
    await alertIn(page).waitFor()
    expect(await alertIn(page).textContent()).toContain('The service could not be reached.')
    await context.close()
  }, 30_000)

  test('a session ended elsewhere: the next action leads to sign-in, saying the session ended', async () => {
    const context = await newContext(env)
    await signInContext(context, env, account)
    const page = await context.newPage()
    await openPage(page, '/keys')
    // Signed out everywhere from another browser.
    const other = await newContext(env)
    await signInContext(other, env, account)
    expect((await other.request.post(`${env.url}/api/session/end-all`, { headers: { origin: env.url } })).status()).toBe(200)
    await other.close()
    await page.fill('#key-label', 'after the end')
    await page.click('button:has-text("Create the key")')
    await page.locator('main h1', { hasText: 'Sign in' }).waitFor()
    expect(await page.textContent('main')).toContain('Your session has ended. Sign in again.')
    await context.close()
  }, 30_000)
})
