// The overview's figures for today: "Calls today" and the chart's day must be the same count, whether the
// calls came with a key or from the console's session, and whatever else the key was used for.
import { describe, expect, test } from 'bun:test'
import { type ConsoleEnv, consoleForFile, newContext, openPage, signInContext } from '../support/console'
import { makeJpeg } from '../support/images'
import type { RegisteredAccount } from '../support/service'

let env: ConsoleEnv
let account: RegisteredAccount
const run = consoleForFile('test/console/overview.test.ts', { rateLimits: false, account: true }, (started) => ({ env, account } = started))

describe.if(run)('the overview', () => {
  test('"Calls today" is the chart’s count for today: key and session calls alike, other key requests not', async () => {
    const image = Buffer.from(makeJpeg(320, 240)).toString('base64')
    // With the key: one new description and two reads of the usage (which are not alt-text calls).
    expect((await env.service.api.post('/api/alt-text', { image_base64: image }, account.apiKey)).status).toBe(200)
    expect((await env.service.api.get('/api/usage', account.apiKey)).status).toBe(200)
    expect((await env.service.api.get('/api/usage', account.apiKey)).status).toBe(200)
    const context = await newContext(env)
    await signInContext(context, env, account)
    const page = await context.newPage()
    await openPage(page, '/')
    // With the session, from the console's own page: the same image again, a cached answer.
    const status = await page.evaluate(
      async (body) => {
        const response = await fetch('/api/alt-text', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
        return response.status
      },
      { image_base64: image },
    )
    expect(status).toBe(200)
    await openPage(page, '/')
    const callsToday = await page.locator('.facts div', { hasText: 'Calls today' }).locator('dd').textContent()
    const lastRow = await page.locator('.chart tbody tr').last().locator('td').allTextContents()
    const chartToday = lastRow.reduce((sum, cell) => sum + Number(cell), 0)
    const summary = (await page.locator('.chart > p').first().textContent()) ?? ''
    expect(chartToday).toBe(2)
    expect(summary).toContain('with 2 calls')
    expect(callsToday).toBe(String(chartToday))
    await context.close()
  }, 30_000)
})
