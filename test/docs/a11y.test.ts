// The API reference (/docs) and the error reference (/docs/errors) in Chromium, at 1280 px and at 320 px,
// in the light and the dark scheme: axe-core finds no violation of WCAG 2.0–2.2 A/AA nor of its best
// practices (landmarks, headings), in the states a reader brings about (a deep link, a "Try it" form
// sent and answered), nothing scrolls sideways, and the pages report no script error or CSP violation.
// Every rule runs at 1280 px, light; the other windows run the rules they change (support/console's rulesAt).
// Each state is brought about once per width and checked in the light, then the dark scheme.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { AXE_TAGS, launchChromium } from '../support/browser'
import { browserTestsEnabled, checkedAt, findingsInBothSchemes, type PageFindings } from '../support/console'
import { startTestService, type TestService } from '../support/service'

const run = browserTestsEnabled('test/docs/a11y.test.ts')
let service: TestService
let browser: Browser

beforeAll(async () => {
  if (!run) return
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

type Check = { name: string; path: string; prepare?: (page: Page) => Promise<void> }

const CHECKS: Check[] = [
  { name: 'API reference', path: '/docs' },
  { name: 'API reference, a deep link to an operation', path: '/docs#createBatch' },
  {
    name: 'API reference, a "Try it" form sent and answered',
    path: '/docs#validateKey',
    prepare: async (page) => {
      const operation = page.locator('#validateKey')
      await operation.locator('summary:has-text("Try it")').click()
      await operation.locator('button[type=submit]').click()
      await operation.locator('[role=status] pre').waitFor()
    },
  },
  { name: 'error reference', path: '/docs/errors' },
  { name: 'error reference, a deep link to a code', path: '/docs/errors#rate_limited' },
]

async function checkAll(width: number): Promise<Record<string, PageFindings>> {
  const context = await browser.newContext({ viewport: { width, height: 800 }, colorScheme: 'light', baseURL: service.url })
  const found: Record<string, PageFindings> = {}
  try {
    for (const check of CHECKS) {
      const page = await context.newPage()
      page.setDefaultTimeout(10_000)
      const findings = await findingsInBothSchemes(page, async () => {
        await page.goto(check.path, { waitUntil: 'load' })
        await check.prepare?.(page)
      }, [...AXE_TAGS, 'best-practice'])
      for (const [scheme, finding] of Object.entries(findings)) found[`${check.name}, ${scheme}`] = finding
      await page.close()
    }
  } finally {
    await context.close()
  }
  return found
}

describe.if(run)('the documentation pages are accessible', () => {
  for (const width of [1280, 320])
    test(`at ${width} px: no violation of ${checkedAt({ width, scheme: 'light' })} (light) nor of ${checkedAt({ width, scheme: 'dark' })} (dark), no sideways scrolling, no script error`, async () => {
      expect(await checkAll(width)).toEqual({})
    }, 180_000)
})
