// The service's errors as the console shows them: in words, with the service's own message, in a live
// region; a session that ended elsewhere sends the person to the sign-in page, saying why; a model that is
// down is said on the pages that use it.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type ConsoleEnv, consoleForFile, newContext, openPage, pageFindings, signInContext } from '../support/console'
import { type RegisteredAccount, startTestService, waitUntil } from '../support/service'

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

// Last in this file: the model goes away (not pulled any more) and comes back.
describe.if(run)('the model down', () => {
  const readiness = async () => (await fetch(`${env.url}/ready`)).status

  test('Overview (first steps of a new account) and Try it say so in a status message, with axe clean at 1280 and 390 px; once back, nothing is said', async () => {
    const fresh = await env.service.api.register()
    env.ollama.behave({ models: [] })
    try {
      await waitUntil(async () => (await readiness()) === 503, 'readiness to see the model gone')
      for (const width of [1280, 390]) {
        const context = await newContext(env, { width, scheme: 'light' })
        await signInContext(context, env, fresh)
        const page = await context.newPage()
        for (const path of ['/', '/try']) {
          const findings = await pageFindings(page, async () => {
            await openPage(page, path)
            await page.locator('main [role=status][data-model=down]').waitFor()
          })
          const status = page.locator('main [role=status][data-model]')
          expect({ width, path, text: await status.textContent() }).toEqual({
            width,
            path,
            text: 'The model is not available right now (model llava is not pulled on the model server: run "ollama pull llava"). Alt text cannot be made until it is back; a request that fails costs no credit.',
          })
          // Not colour alone: the words say it, in bold, in a region that is announced.
          expect(await status.locator('strong').textContent()).toBe('The model is not available right now')
          if (path === '/') expect(await page.locator('main .first-steps').count()).toBe(1)
          // The 503 of /ready is how the page learns it; nothing else failed.
          const problems = (findings?.problems ?? []).filter((p) => !p.includes('status of 503'))
          expect({ width, path, axe: findings?.axe ?? [], overflow: findings?.overflow ?? 0, problems }).toEqual({
            width,
            path,
            axe: [],
            overflow: 0,
            problems: [],
          })
        }
        await context.close()
      }
    } finally {
      env.ollama.behave({ models: ['llava:latest'] })
      await waitUntil(async () => (await readiness()) === 200, 'readiness to see the model back')
    }
    const context = await newContext(env)
    await signInContext(context, env, fresh)
    const page = await context.newPage()
    for (const path of ['/', '/try']) {
      await openPage(page, path)
      await page.locator('main [role=status][data-model=ready]').waitFor({ state: 'attached' })
      expect(await page.locator('main [role=status][data-model]').textContent()).toBe('')
    }
    await context.close()
  }, 60_000)
})
