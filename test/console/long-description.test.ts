// Try it with "long description", in Chromium against the real service (fake model): the checkbox sends
// long_description; a complex image's long description is shown in a labelled read-only field that the
// preview image points at with aria-describedby, with a copy button; a simple image says there is none;
// the result passes axe-core and does not scroll sideways at every width and scheme the console is held to.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { A11Y_VIEWPORTS, type ConsoleEnv, consoleForFile, newContext, openPage, pageFindings, signInContext } from '../support/console'
import { LONG_DESCRIPTION } from '../support/fake-ollama'
import type { RegisteredAccount } from '../support/service'
import { makePng } from '../support/images'

let env: ConsoleEnv
let account: RegisteredAccount
const run = consoleForFile('test/console/long-description.test.ts', { account: true, rateLimits: false }, (started) => ({ env, account } = started))
const STEP_MS = 60_000
let height = 200

/** On /try: uploads a new PNG with the long-description box ticked and waits for the result. */
async function describeChart(page: Page) {
  await openPage(page, '/try')
  await page.setInputFiles('#image-file', { name: 'sales.png', mimeType: 'image/png', buffer: Buffer.from(makePng(300, ++height)) })
  await page.check('#long_description')
  await page.click('button:has-text("Describe the image")')
  await page.locator('.result').waitFor()
}

async function withPage<T>(work: (page: Page) => Promise<T>, viewport = A11Y_VIEWPORTS[0]!): Promise<T> {
  const context = await newContext(env, viewport)
  try {
    await signInContext(context, env, account)
    const page = await context.newPage()
    page.setDefaultTimeout(10_000)
    return await work(page)
  } finally {
    await context.close()
  }
}

describe.if(run)('try it: long descriptions', () => {
  test(
    'a complex image: the long description in a labelled field the preview points at; the curl command asks for it',
    async () => {
      env.ollama.behave({ complex: () => true })
      await withPage(async (page) => {
        await describeChart(page)
        expect(await page.locator('label[for=long-output]').textContent()).toBe('Long description')
        expect(await page.locator('#long-output').inputValue()).toBe(LONG_DESCRIPTION)
        expect(await page.getAttribute('.result img.preview', 'aria-describedby')).toBe('long-output')
        expect(await page.locator('button:has-text("Copy the long description")').count()).toBe(1)
        expect(await page.textContent('.result pre')).toContain('--form-string long_description=true')
        expect(await page.locator('main [role=status]', { hasText: 'A long description follows it.' }).count()).toBe(1)
      })
    },
    STEP_MS,
  )

  test(
    'a simple image: said plainly that there is none, and the preview points at nothing',
    async () => {
      env.ollama.behave({ complex: () => false })
      await withPage(async (page) => {
        await describeChart(page)
        expect(await page.textContent('#long-none')).toContain('No long description')
        expect(await page.locator('#long-output').count()).toBe(0)
        expect(await page.getAttribute('.result img.preview', 'aria-describedby')).toBeNull()
      })
    },
    STEP_MS,
  )

  test(
    'markup in the long description is shown as the plain text it became, and runs nothing',
    async () => {
      env.ollama.behave({ complex: () => true, longDescription: 'A chart of sales.<img src=x onerror="document.title=1"> January was 12, February 15.' })
      await withPage(async (page) => {
        const problems: string[] = []
        page.on('pageerror', (error) => problems.push(error.message))
        await describeChart(page)
        expect(await page.locator('#long-output').inputValue()).toBe('A chart of sales. January was 12, February 15.')
        expect(await page.locator('.result img:not(.preview)').count()).toBe(0)
        expect(await page.title()).not.toBe('1')
        expect(problems).toEqual([])
      })
      env.ollama.behave({ longDescription: LONG_DESCRIPTION })
    },
    STEP_MS,
  )

  test('the result passes axe-core and does not scroll sideways, wide and at 320 px, light and dark', async () => {
    env.ollama.behave({ complex: () => true })
    const found: Record<string, unknown> = {}
    for (const viewport of A11Y_VIEWPORTS) {
      const findings = await withPage((page) => pageFindings(page, () => describeChart(page), { viewport }), viewport)
      if (findings) found[`${viewport.width} ${viewport.scheme}`] = findings
    }
    expect(found).toEqual({})
  }, 120_000)
})
