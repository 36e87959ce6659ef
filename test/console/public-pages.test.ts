// The pages for people who are not signed in: opening them asks the service nothing that needs a session,
// so the browser's console stays empty (no "401 Unauthorized" on every visit) and no request fails.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type ConsoleEnv, consoleForFile, newContext, openPage, signInContext } from '../support/console'
import type { RegisteredAccount } from '../support/service'

let env: ConsoleEnv
let account: RegisteredAccount
const run = consoleForFile('test/console/public-pages.test.ts', { rateLimits: false, account: true }, (started) => ({ env, account } = started))

/** Everything the page says went wrong: console messages above "info", page errors, failed or refused requests. */
function watchEverything(page: Page): { problems: string[]; apiCalls: string[] } {
  const problems: string[] = []
  const apiCalls: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('requestfailed', (request) => problems.push(`failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`))
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()}: ${response.request().method()} ${response.url()}`)
  })
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.pathname.startsWith('/api/')) apiCalls.push(`${request.method()} ${url.pathname}`)
  })
  return { problems, apiCalls }
}

const PUBLIC_PAGES = [
  { path: '/sign-in', heading: 'Sign in', asks: [] },
  { path: '/sign-up', heading: 'Sign up', asks: ['GET /api/registration'] },
  { path: '/forgot-password', heading: 'Forgot your password?', asks: [] },
  { path: '/reset-password?token=abc', heading: 'Choose a new password', asks: [] },
  // A signed-in page sends the visitor to sign in, without asking either.
  { path: '/keys', heading: 'Sign in', asks: [] },
]

describe.if(run)('the public pages, with no session', () => {
  for (const { path, heading, asks } of PUBLIC_PAGES)
    test(`${path}: nothing in the browser console, no failed request, only public endpoints asked`, async () => {
      const context = await newContext(env)
      const page = await context.newPage()
      const { problems, apiCalls } = watchEverything(page)
      await openPage(page, path)
      await page.locator('main h1', { hasText: heading }).waitFor()
      expect(problems).toEqual([])
      expect(apiCalls).toEqual(asks)
      await context.close()
    }, 30_000)

  test('a signed-in visitor of /sign-in still goes to the overview', async () => {
    const context = await newContext(env)
    await signInContext(context, env, account)
    const page = await context.newPage()
    const { problems } = watchEverything(page)
    await openPage(page, '/sign-in')
    await page.locator('main h1', { hasText: 'Overview' }).waitFor()
    expect(problems).toEqual([])
    await context.close()
  }, 30_000)

  test('a session ended elsewhere: the first visit learns it (one 401) and drops the cookie, so the next asks nothing', async () => {
    const context = await newContext(env)
    await signInContext(context, env, account)
    const other = await newContext(env)
    await signInContext(other, env, account)
    expect((await other.request.post(`${env.url}/api/session/end-all`, { headers: { origin: env.url } })).status()).toBe(200)
    await other.close()
    const page = await context.newPage()
    const first = watchEverything(page)
    const dropped = page.waitForResponse((r) => r.request().method() === 'DELETE' && new URL(r.url()).pathname === '/api/session', { timeout: 10_000 })
    await openPage(page, '/sign-in')
    await page.locator('main h1', { hasText: 'Sign in' }).waitFor()
    expect(first.apiCalls).toContain('GET /api/session')
    expect((await dropped).status()).toBe(204)
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain('alttext_session')
    const next = await context.newPage()
    const second = watchEverything(next)
    await openPage(next, '/sign-in')
    expect(second.problems).toEqual([])
    expect(second.apiCalls).toEqual([])
    await context.close()
  }, 30_000)
})
