// Where the focus goes when what held it goes away: the key panel's "I have saved it" button, and the
// "Describe the image" button (disabled while the request runs). Never to <body>, where a screen reader
// starts over at the top of the page and a keyboard user loses their place.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type ConsoleEnv, consoleForFile, newContext, openPage, signInContext } from '../support/console'
import { makeJpeg } from '../support/images'
import type { RegisteredAccount } from '../support/service'

let env: ConsoleEnv
let account: RegisteredAccount
const run = consoleForFile('test/console/focus.test.ts', { rateLimits: false, account: true }, (started) => ({ env, account } = started))

/** What has the focus: its tag, id and text, or "body". */
const focused = (page: Page) =>
  page.evaluate(() => {
    const active = (globalThis as any).document.activeElement
    if (!active || active === (globalThis as any).document.body) return 'body'
    return `${active.tagName.toLowerCase()}${active.id ? `#${active.id}` : ''}:${(active.textContent ?? '').trim()}`
  })

async function signedInPage(path: string): Promise<Page> {
  const context = await newContext(env)
  await signInContext(context, env, account)
  const page = await context.newPage()
  await openPage(page, path)
  return page
}

describe.if(run)('the focus never falls to the page body', () => {
  /** The two ways the key panel appears: a new key, a rotated one. */
  const SHOW_A_KEY: { name: string; show: (page: Page) => Promise<void> }[] = [
    {
      name: 'a new key',
      show: async (page) => {
        await page.fill('#key-label', 'focus test')
        await page.click('main form button:has-text("Create the key")')
      },
    },
    {
      name: 'a rotated key',
      show: async (page) => {
        await page.locator('.cards li button:has-text("Rotate")').first().click()
        await page.click('dialog[open] button:has-text("Rotate the key")')
      },
    },
  ]
  for (const { name, show } of SHOW_A_KEY)
    test(`${name}: after "I have saved it" the focus is on the page heading`, async () => {
      const page = await signedInPage('/keys')
      await show(page)
      await page.locator('.once-key').waitFor()
      await page.click('.once-key button:has-text("I have saved it")')
      await page.locator('.once-key').waitFor({ state: 'detached' })
      expect(await focused(page)).toBe('h1:API keys')
      await page.context().close()
    }, 30_000)

  test('try it: when the description arrives, the focus is on the result heading', async () => {
    const page = await signedInPage('/try')
    await page.setInputFiles('#image-file', { name: 'focus.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(makeJpeg(300, 200)) })
    await page.focus('main form button[type=submit]')
    await page.keyboard.press('Enter')
    await page.locator('.result').waitFor()
    expect(await focused(page)).toBe('h2#result-h:Result')
    await page.context().close()
  }, 30_000)

  test('try it: when the request fails, the focus is back on the button, the error read out beside it', async () => {
    const page = await signedInPage('/try')
    await page.check('input[name=source][value=url]')
    await page.fill('#image-url', env.images.route('/missing.jpg', { kind: 'bytes', body: new TextEncoder().encode('gone'), status: 404 }))
    await page.focus('main form button[type=submit]')
    await page.keyboard.press('Enter')
    await page.locator('main form [role=alert].error:not(.empty)').waitFor()
    await page.locator('main form button[type=submit]:not([disabled])').waitFor()
    expect(await focused(page)).toBe('button:Describe the image')
    await page.context().close()
  }, 30_000)
})
