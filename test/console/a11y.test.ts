// Every console page, and the states that add to a page (a key shown once, a confirm dialog, a result, an
// error, the chart's table), in Chromium at 1280 px and at 320 px, in the light and the dark scheme:
// axe-core finds no WCAG 2.0–2.2 A/AA violation, nothing scrolls sideways (reflow, also at 200 % zoom),
// focus is visible, and the page honours prefers-reduced-motion and prefers-color-scheme. Every axe rule
// runs at 1280 px, light; the other windows run the rules they change (support/console's rulesAt). Each
// state is brought about once per width and checked in the light, then the dark scheme.
import { describe, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { type ConsoleEnv, checkedAt, consoleForFile, findingsInBothSchemes, newContext, openPage, type PageFindings, signInContext } from '../support/console'
import { makeJpeg } from '../support/images'
import type { RegisteredAccount } from '../support/service'

let env: ConsoleEnv
let account: RegisteredAccount
const run = consoleForFile('test/console/a11y.test.ts', { rateLimits: false, account: true }, async (started) => {
  ;({ env, account } = started)
  // Something to show: a generation (the chart, the recent list) and a second, labelled key.
  const url = env.images.route('/a11y.jpg', { kind: 'bytes', body: makeJpeg(320, 240) })
  expect((await env.service.api.post('/api/alt-text', { image_url: url }, account.apiKey)).status).toBe(200)
  expect((await env.service.api.post('/api/keys', { label: 'staging CMS', expires_in_days: 30 }, account.apiKey)).status).toBe(201)
})

type Check = { name: string; path: string; signedIn: boolean; prepare?: (page: Page) => Promise<void> }

const CHECKS: Check[] = [
  { name: 'sign in', path: '/sign-in', signedIn: false },
  {
    name: 'sign in, with an error',
    path: '/sign-in',
    signedIn: false,
    prepare: async (page) => {
      await page.fill('#email', 'nobody@example.com')
      await page.fill('#password', 'not the password')
      await page.click('main form button[type=submit]')
      await page.locator('main [role=alert].error:not(.empty)').waitFor()
    },
  },
  { name: 'sign up', path: '/sign-up', signedIn: false },
  { name: 'forgot password', path: '/forgot-password', signedIn: false },
  { name: 'reset password', path: '/reset-password?token=abc', signedIn: false },
  { name: 'overview', path: '/', signedIn: true },
  {
    name: 'overview, the table open',
    path: '/',
    signedIn: true,
    prepare: async (page) => {
      await page.click('.chart summary')
      await page.locator('.chart table').waitFor()
    },
  },
  { name: 'keys', path: '/keys', signedIn: true },
  {
    name: 'keys, a new key shown once',
    path: '/keys',
    signedIn: true,
    prepare: async (page) => {
      await page.fill('#key-label', 'a11y check')
      await page.click('button:has-text("Create the key")')
      await page.locator('.once-key input').waitFor()
    },
  },
  {
    name: 'keys, the revoke dialog',
    path: '/keys',
    signedIn: true,
    prepare: async (page) => {
      await page.locator('.cards li button:has-text("Revoke")').first().click()
      await page.locator('dialog[open]').waitFor()
    },
  },
  { name: 'try it', path: '/try', signedIn: true },
  {
    name: 'try it, a result',
    path: '/try',
    signedIn: true,
    prepare: async (page) => {
      await page.check('input[name=source][value=url]')
      await page.fill('#image-url', env.images.url('/a11y.jpg'))
      await page.click('button:has-text("Describe the image")')
      await page.locator('.result').waitFor()
    },
  },
  {
    name: 'try it, an error',
    path: '/try',
    signedIn: true,
    prepare: async (page) => {
      await page.check('input[name=source][value=url]')
      await page.fill('#image-url', 'http://example.invalid/a.jpg')
      await page.click('button:has-text("Describe the image")')
      await page.locator('main form [role=alert].error:not(.empty)').waitFor()
    },
  },
  { name: 'recent', path: '/recent', signedIn: true },
  { name: 'account', path: '/account', signedIn: true },
]

/** Found problems, by check and scheme: axe violations, sideways scrolling, script errors. */
async function checkAll(width: number): Promise<Record<string, PageFindings>> {
  const viewport = { width, scheme: 'light' } as const
  const contexts: Record<'in' | 'out', BrowserContext> = { in: await newContext(env, viewport), out: await newContext(env, viewport) }
  await signInContext(contexts.in, env, account)
  const found: Record<string, PageFindings> = {}
  try {
    for (const check of CHECKS) {
      const page = await contexts[check.signedIn ? 'in' : 'out'].newPage()
      page.setDefaultTimeout(8000)
      const findings = await findingsInBothSchemes(page, async () => {
        await openPage(page, check.path)
        await check.prepare?.(page)
      })
      for (const [scheme, finding] of Object.entries(findings)) found[`${check.name}, ${scheme}`] = finding
      await page.close()
    }
  } finally {
    await contexts.in.close()
    await contexts.out.close()
  }
  return found
}

describe.if(run)('the console is accessible', () => {
  for (const width of [1280, 320])
    test(`every page at ${width} px: no violation of ${checkedAt({ width, scheme: 'light' })} (light) nor of ${checkedAt({ width, scheme: 'dark' })} (dark), no sideways scrolling`, async () => {
      expect(await checkAll(width)).toEqual({})
    }, 180_000)

  test('at 200 % zoom (a 1280 px window is 640 CSS px wide) nothing scrolls sideways either', async () => {
    const context = await newContext(env, { width: 640, scheme: 'light' })
    await signInContext(context, env, account)
    const page = await context.newPage()
    for (const path of ['/', '/keys', '/try', '/recent', '/account']) {
      await openPage(page, path)
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(640)
    }
    await context.close()
  }, 60_000)

  test('focus is visible: a focused button and link have a 3 px outline', async () => {
    const context = await newContext(env)
    const page = await context.newPage()
    await openPage(page, '/sign-in')
    await page.focus('#email')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Tab')
    const outline = await page.evaluate(() => {
      const active = (globalThis as any).document.activeElement
      const style = (globalThis as any).getComputedStyle(active)
      return { tag: active.tagName, style: style.outlineStyle, width: style.outlineWidth }
    })
    expect(outline).toEqual({ tag: 'BUTTON', style: 'solid', width: '3px' })
    await context.close()
  })

  test('prefers-reduced-motion turns transitions off; prefers-color-scheme: dark gives the dark theme', async () => {
    const transition = async (reducedMotion: 'reduce' | undefined, scheme: 'light' | 'dark') => {
      const context = await newContext(env, { width: 1280, scheme }, { reducedMotion })
      const page = await context.newPage()
      await openPage(page, '/sign-in')
      const styles = await page.evaluate(() => {
        const doc = (globalThis as any).document
        return {
          transition: (globalThis as any).getComputedStyle(doc.querySelector('main button')).transitionDuration,
          background: (globalThis as any).getComputedStyle(doc.documentElement).backgroundColor,
        }
      })
      await context.close()
      return styles
    }
    expect((await transition(undefined, 'light')).transition).toBe('0.15s')
    expect((await transition('reduce', 'light')).transition).toBe('0s')
    expect((await transition(undefined, 'light')).background).toBe('rgb(255, 255, 255)')
    expect((await transition(undefined, 'dark')).background).toBe('rgb(21, 23, 26)')
  }, 30_000)
})
