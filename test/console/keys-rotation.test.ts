// Rotating a key in the console with a grace period, in Chromium: the confirm dialog has a labelled choice
// of when the old key stops (at once by default); with a grace period the old key keeps working and the
// page says until when.
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { axeViolations } from '../support/browser'
import { type ConsoleEnv, consoleForFile, openPage, signInContext } from '../support/console'

// Chromium's start and an axe run take seconds on a loaded 2-core machine.
setDefaultTimeout(30_000)

let env: ConsoleEnv
let context: BrowserContext
let page: Page
let problems: string[]

const run = consoleForFile('test/console/keys-rotation.test.ts', { rateLimits: false, page: true }, (started) => ({ env, context, page, problems } = started))

const usageWith = (key: string) => env.service.api.get('/api/usage', key)

describe.if(run)('rotating a key in the console', () => {
  test('the dialog offers a labelled grace period; with one hour, the old key keeps working and the page says until when', async () => {
    const account = await env.service.api.register()
    await signInContext(context, env, account)
    await openPage(page, '/keys')
    const card = page.locator('.cards li', { hasText: account.prefix })
    await card.locator('button:has-text("Rotate")').click()
    const dialog = page.locator('dialog[open]')
    await dialog.waitFor()

    const choice = dialog.getByLabel('The old key stops working')
    expect(await choice.inputValue()).toBe('0')
    expect(await axeViolations(page)).toEqual([])
    await choice.selectOption({ label: 'In 1 hour' })
    const before = Date.now()
    await dialog.locator('button:has-text("Rotate the key")').click()

    const panel = page.locator('.once-key')
    await panel.locator('h2', { hasText: `replacing ${account.prefix}` }).waitFor()
    const rotated = await panel.locator('input').inputValue()
    expect((await usageWith(rotated)).status).toBe(200)
    expect((await usageWith(account.apiKey)).status).toBe(200)
    expect(await panel.locator('#old-key-until').textContent()).toContain(`The old key ${account.prefix} keeps working until`)

    // The service was asked for one hour: the old key's listed end is an hour after the rotation.
    const listed = (await env.service.api.get('/api/keys', rotated)).body.keys as { prefix: string; expires_at: string | null }[]
    const end = Date.parse(listed.find((k) => k.prefix === account.prefix)!.expires_at!)
    expect(end - before).toBeGreaterThan(3_590_000)
    expect(end - before).toBeLessThanOrEqual(3_600_000 + (Date.now() - before))
    expect(problems).toEqual([])
  })
})
