// The error reference in Chromium passes axe-core's WCAG 2.0–2.2 A/AA checks.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { axeViolations, launchChromium } from '../support/browser'
import { browserTestsEnabled } from '../support/console'
import { startTestService, type TestService } from '../support/service'

// Chromium's start and an axe run take seconds on a loaded 2-core machine.
setDefaultTimeout(30_000)

const run = browserTestsEnabled('test/docs/error-page.test.ts')
let service: TestService
let browser: Browser

beforeAll(async () => {
  if (!run) return
  service = await startTestService()
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

describe.if(run)('the error reference page', () => {
  test('/docs/errors has no WCAG 2.0–2.2 A/AA violations (axe-core)', async () => {
    const page = await browser.newPage()
    await page.goto(`${service.url}/docs/errors`)
    expect(await axeViolations(page)).toEqual([])
    await page.close()
  })
})
