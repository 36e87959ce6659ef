// Keyboard only: signing in, and trying an image (a chosen file and a URL) with copying the answer,
// without a mouse; dialogs close with Escape and give the focus back; the compact menu of a phone.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { ALT_TEXT_REPLY, type ConsoleEnv, clipboardText, consoleForFile, newContext, openPage, signInContext } from '../support/console'
import { makeJpeg } from '../support/images'
import type { RegisteredAccount } from '../support/service'

let env: ConsoleEnv
let account: RegisteredAccount
const run = consoleForFile('test/console/keyboard.test.ts', { rateLimits: false, account: true }, (started) => ({ env, account } = started))

/** What has the focus: its id, or its tag and text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const active = (globalThis as any).document.activeElement
    return active.id || `${active.tagName.toLowerCase()}:${(active.textContent ?? '').trim()}`
  })

/** Presses Tab until `target` has the focus; fails after `max` presses. */
async function tabTo(page: Page, target: string, max = 40): Promise<void> {
  const seen: string[] = []
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    const now = await focused(page)
    if (now === target) return
    seen.push(now)
  }
  throw new Error(`Tab never reached ${target}; it went through ${seen.join(', ')}`)
}

describe.if(run)('the console by keyboard alone', () => {
  test('sign in: skip link, fields, Enter; the new page heading takes the focus', async () => {
    const context = await newContext(env)
    const page = await context.newPage()
    await openPage(page, '/sign-in')
    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('a:Skip to the content')
    await page.keyboard.press('Enter')
    await tabTo(page, 'email')
    await page.keyboard.type(account.email)
    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('password')
    await page.keyboard.type(account.password)
    await page.keyboard.press('Enter')
    await page.locator('main h1', { hasText: 'Overview' }).waitFor()
    expect(await focused(page)).toBe('h1:Overview')
    // The navigation works by keyboard too.
    await tabTo(page, 'a:Try it')
    await page.keyboard.press('Enter')
    await page.locator('main h1', { hasText: 'Try it' }).waitFor()
    expect(await focused(page)).toBe('h1:Try it')
    await context.close()
  }, 30_000)

  test('try it: choose a file with the keyboard, describe it, copy the alt text; then a URL', async () => {
    const context = await newContext(env)
    const page = await context.newPage()
    await openPage(page, '/sign-in')
    await tabTo(page, 'email')
    await page.keyboard.type(account.email)
    await page.keyboard.press('Tab')
    await page.keyboard.type(account.password)
    await page.keyboard.press('Enter')
    await page.locator('main h1', { hasText: 'Overview' }).waitFor()
    await tabTo(page, 'a:Try it')
    await page.keyboard.press('Enter')
    await page.locator('main h1', { hasText: 'Try it' }).waitFor()

    // Waiting starts before the round trips of tabTo: the browser must intercept the file dialog before the
    // key press reaches it, or the dialog opens unseen and no event comes (seen on a loaded machine).
    const chooserShown = page.waitForEvent('filechooser')
    await tabTo(page, 'image-file')
    await page.keyboard.press('Space')
    const chooser = await chooserShown
    await chooser.setFiles({ name: 'keyboard.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(makeJpeg(400, 300)) })
    await tabTo(page, 'max_length')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('100')
    await tabTo(page, 'detect_decorative')
    await page.keyboard.press('Space')
    await tabTo(page, 'button:Describe the image')
    await page.keyboard.press('Enter')
    await page.locator('.result, main form [role=alert].error:not(.empty)').first().waitFor()
    expect(await page.locator('main form [role=alert].error').textContent()).toBe('')
    expect(await page.locator('#alt-output').inputValue()).toBe(ALT_TEXT_REPLY)
    expect(await page.textContent('#alt-length')).toBe(`${ALT_TEXT_REPLY.length} of at most 100 characters`)
    await tabTo(page, 'button:Copy the alt text')
    await page.keyboard.press('Enter')
    await page.locator('.result [role=status]', { hasText: 'Copied' }).first().waitFor()
    expect(await clipboardText(page)).toBe(ALT_TEXT_REPLY)

    // The image source by arrow keys: radio buttons move with the arrows.
    await page.focus('input[name=source][value=file]')
    await page.keyboard.press('ArrowRight')
    expect(await page.isChecked('input[name=source][value=url]')).toBe(true)
    await tabTo(page, 'image-url')
    await page.keyboard.type(env.images.route('/keyboard.jpg', { kind: 'bytes', body: makeJpeg(500, 300) }))
    await page.keyboard.press('Enter')
    await page.locator('.result pre', { hasText: 'image_url' }).waitFor()
    expect(await page.locator('#alt-output').inputValue()).toBe(ALT_TEXT_REPLY)
    await context.close()
  }, 30_000)

  test('a confirm dialog keeps the focus inside, closes with Escape, and gives the focus back', async () => {
    const context = await newContext(env)
    const page = await context.newPage()
    await openPage(page, '/sign-in')
    await page.fill('#email', account.email)
    await page.fill('#password', account.password)
    await page.keyboard.press('Enter')
    await page.locator('main h1', { hasText: 'Overview' }).waitFor()
    await openPage(page, '/keys')
    const revoke = page.locator('.cards li button:has-text("Revoke")').first()
    await revoke.focus()
    await page.keyboard.press('Enter')
    await page.locator('dialog[open]').waitFor()
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.closest('dialog') !== null)).toBe(true)
    await page.keyboard.press('Escape')
    await page.locator('dialog[open]').waitFor({ state: 'detached' })
    expect(await focused(page)).toBe('button:Revoke')
    // Nothing was revoked.
    expect((await env.service.api.get('/api/usage', account.apiKey)).status).toBe(200)
    await context.close()
  }, 30_000)
})

describe.if(run)('the navigation on a phone and on a wide screen', () => {
  /** The rows the visible navigation links take, by their top edge. */
  const linkRows = async (page: Page) =>
    new Set((await page.locator('nav a').evaluateAll((links) => links.map((a) => Math.round(a.getBoundingClientRect().top)))).filter(Boolean)).size

  test('at 390 px: the pages behind a Menu button, one row; Enter opens the eight one per row, Escape closes and gives the focus back, a page chosen closes it', async () => {
    const context = await newContext(env, { width: 390, scheme: 'light' })
    await signInContext(context, env, account)
    const page = await context.newPage()
    await openPage(page, '/')
    const toggle = page.locator('header button.menu-toggle')
    expect(await toggle.getAttribute('aria-expanded')).toBe('false')
    expect(await toggle.getAttribute('aria-controls')).toBe('console-pages')
    expect(await page.locator('#console-pages').isVisible()).toBe(false)
    // Closed, the navigation is the one row of its button.
    const closed = (await page.locator('nav').boundingBox())!
    const button = (await toggle.boundingBox())!
    expect(closed.height).toBeLessThan(button.height * 2)

    await toggle.focus()
    await page.keyboard.press('Enter')
    expect(await toggle.getAttribute('aria-expanded')).toBe('true')
    expect(await page.locator('nav a').allTextContents()).toEqual(['Overview', 'API keys', 'Try it', 'Recent', 'Batches', 'Review', 'Members', 'Account'])
    expect(await linkRows(page)).toBe(8)
    expect(
      await page.evaluate(() => {
        const root = (globalThis as any).document.documentElement
        return root.scrollWidth - root.clientWidth
      }),
    ).toBe(0)
    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('a:Overview')
    await page.keyboard.press('Escape')
    expect(await toggle.getAttribute('aria-expanded')).toBe('false')
    expect(await focused(page)).toBe('button:Menu')

    await page.keyboard.press('Enter')
    await tabTo(page, 'a:Try it')
    await page.keyboard.press('Enter')
    await page.locator('main h1', { hasText: 'Try it' }).waitFor()
    expect(await toggle.getAttribute('aria-expanded')).toBe('false')
    expect(await page.locator('#console-pages').isVisible()).toBe(false)
    await context.close()
  }, 30_000)

  test('at 1280 px: the eight pages in one row, no Menu button', async () => {
    const context = await newContext(env)
    await signInContext(context, env, account)
    const page = await context.newPage()
    await openPage(page, '/')
    expect(await page.locator('header button.menu-toggle').isVisible()).toBe(false)
    expect(await page.locator('nav a').count()).toBe(8)
    expect(await linkRows(page)).toBe(1)
    await context.close()
  }, 30_000)
})
