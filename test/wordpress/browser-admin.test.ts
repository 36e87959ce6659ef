// The plugin's admin screens in Chromium against a real WordPress and the real alttext service (fake
// model): the settings page (the key stays hidden, the connection test's words for a wrong and a good key),
// the bulk page (the estimate, then progress to the end), the media library's list, grid and modal, the
// edit-attachment screen and the block editor's image sidebar, each with Accept / Edit / Reject landing in
// WordPress and deciding the suggestion in alttext. axe-core finds no WCAG 2.0–2.2 A/AA violation in the
// plugin's own elements on each screen: WordPress 6.4's own markup has some (the admin menu's collapse
// button's name, the grid's list of checkboxes), so axe is limited to what the plugin renders there.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { axeViolations, launchChromium } from '../support/browser'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { makeJpeg } from '../support/images'
import { startTestService, type TestService, waitUntil } from '../support/service'
import { ADMIN, startWordPress, type WordPress } from '../support/wordpress'

const PROPOSED = 'A grey cat asleep on a sunny windowsill.'

let ollama: FakeOllama
let service: TestService
let wp: WordPress
let browser: Browser
let context: BrowserContext
let page: Page
/** The organisation key WordPress uses, and another that alttext refuses. */
let orgKey: string
let imageSize = 200

beforeAll(async () => {
  ollama = await startFakeOllama({ reply: PROPOSED })
  service = await startTestService({ env: { OLLAMA_HOST: ollama.url, ALTTEXT_MODEL: 'llava', ALTTEXT_RATE_LIMITS: 'off' } })
  const owner = await service.api.register()
  const org = await service.api.post('/api/orgs', { name: 'Blog' }, owner.apiKey)
  orgKey = (await service.api.post('/api/keys', { org_id: org.body.id }, owner.apiKey)).body.api_key
  wp = await startWordPress({ options: { alttext_service_url: service.url, alttext_api_key: orgKey, alttext_mode: 'suggest' } })
  browser = await launchChromium()
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } })
  // Loopback only: WordPress's pages name other hosts (emoji, avatars); those requests never leave.
  await context.route('**/*', (route) => {
    const host = new URL(route.request().url()).hostname
    return host === '127.0.0.1' || host === 'localhost' ? route.continue() : route.abort()
  })
  page = await context.newPage()
  await page.goto(`${wp.url}/wp-login.php`)
  await page.fill('#user_login', ADMIN.login)
  await page.fill('#user_pass', ADMIN.password)
  await page.click('#wp-submit')
  await page.waitForURL(/\/wp-admin\//)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await wp?.stop()
  await service?.stop()
  await ollama?.stop()
})

/** Uploads an image and waits (running WP-Cron, as visits would) until its suggestion is pending. */
async function pendingImage(name: string): Promise<{ id: number; suggestionId: string }> {
  imageSize += 8
  const uploaded = await wp.upload(makeJpeg(imageSize, 160), `${name}.jpg`, 'image/jpeg')
  expect(uploaded.status).toBe(201)
  let state: any
  await waitUntil(
    async () => {
      state = (await wp.rest(`/alttext/v1/attachments/${uploaded.id}`)).body
      if (state?.state !== 'pending') await wp.cron()
      return state?.state === 'pending'
    },
    `a pending suggestion for ${name}`,
    30_000,
  )
  expect(state.proposed_alt).toBe(PROPOSED)
  return { id: uploaded.id, suggestionId: state.suggestion_id }
}

const altOf = (id: number) => wp.wpJson<string>(`return get_post_meta(${id}, '_wp_attachment_image_alt', true);`)
const suggestion = async (id: string) => (await service.api.get(`/api/suggestions/${id}`, orgKey)).body

// Conditions awaited with a deadline (bun's expect has no retrying page matchers).
const hasText = (locator: Locator, text: string) =>
  waitUntil(async () => ((await locator.textContent()) ?? '').trim() === text, `"${text}" in ${locator}`, 15_000)
const containsText = (locator: Locator, text: string) =>
  waitUntil(async () => ((await locator.textContent()) ?? '').includes(text), `"${text}" in ${locator}`, 15_000)
const focused = (locator: Locator) =>
  waitUntil(() => locator.evaluate((el) => el === (globalThis as any).document.activeElement), `focus on ${locator}`, 15_000)
const hasAttribute = (locator: Locator, name: string, value: string) =>
  waitUntil(async () => (await locator.getAttribute(name)) === value, `${name}="${value}" on ${locator}`, 15_000)

async function expectNoViolations(include: string) {
  expect(await page.locator(include).count()).toBeGreaterThan(0)
  expect((await axeViolations(page, undefined, { include })).filter((violation) => !isCoreThumbnail(violation))).toEqual([])
}

/**
 * WordPress's own grid thumbnail is a role=checkbox <li> holding its check button; axe reports that as
 * nested-interactive now and then while the grid renders. Core's markup, not the plugin's: the badge
 * is aria-hidden and its words are in the <li>'s label, which the test reads.
 */
const isCoreThumbnail = (violation: { id: string; targets: string[] }) =>
  violation.id === 'nested-interactive' && violation.targets.every((target) => /^li\[data-id="\d+"\]$/.test(target))

describe('Settings → Alt text', () => {
  const settingsUrl = () => `${wp.url}/wp-admin/options-general.php?page=alttext`

  test('saving a new key keeps it out of the page; the field says a key is set', async () => {
    await page.goto(settingsUrl())
    await expect(page.locator('#alttext_api_key-state').textContent()).resolves.toContain('A key is set')
    expect(await page.inputValue('#alttext_api_key')).toBe('')
    const replacement = `${orgKey}-replaced`
    await page.fill('#alttext_api_key', replacement)
    await page.click('#submit')
    await page.waitForURL(/settings-updated=true/)
    expect(await wp.wpJson('return get_option("alttext_api_key");')).toBe(replacement)
    expect(await page.content()).not.toContain(replacement)
    expect(await page.content()).not.toContain(orgKey)
    expect(await page.inputValue('#alttext_api_key')).toBe('')
    // Saving again with the field left empty keeps the key.
    await page.click('#submit')
    await page.waitForURL(/settings-updated=true/)
    expect(await wp.wpJson('return get_option("alttext_api_key");')).toBe(replacement)
    await expectNoViolations('#wpbody-content')
  }, 90_000)

  test('the connection test says the key is wrong, then that the connection works', async () => {
    // The key saved above is not one alttext knows.
    await page.goto(settingsUrl())
    await page.click('#alttext-test-connection')
    const result = page.locator('#alttext-test-result')
    await result.locator('.alttext-test-failed').waitFor()
    expect((await result.textContent())!.toLowerCase()).toContain('key')
    await expectNoViolations('#wpbody-content')

    await wp.wp(`update_option('alttext_api_key', '${orgKey}');`)
    await page.goto(settingsUrl())
    await page.click('#alttext-test-connection')
    await result.locator('.alttext-test-ok').waitFor()
    expect(await result.textContent()).toContain('The connection works.')
    expect(await result.locator('.alttext-check-failed').count()).toBe(0)
    await expectNoViolations('#wpbody-content')
  }, 90_000)
})

describe('Media → Alt text (bulk)', () => {
  test('shows the estimate and the credits before it starts, then the progress to the end', async () => {
    // Images that reach the library while no service is set: none of them has a suggestion or alt text.
    await wp.wp(`update_option('alttext_service_url', '');`)
    for (const name of ['bulk-one', 'bulk-two']) {
      imageSize += 8
      expect((await wp.upload(makeJpeg(imageSize, 120), `${name}.jpg`, 'image/jpeg')).status).toBe(201)
    }
    await wp.wp(`update_option('alttext_service_url', '${service.url}');`)
    const before = (await wp.rest('/alttext/v1/bulk')).body
    expect(before.remaining_images).toBeGreaterThanOrEqual(2)

    await page.goto(`${wp.url}/wp-admin/upload.php?page=alttext-bulk`)
    await hasText(page.locator('#alttext-bulk-remaining'), before.remaining_images.toLocaleString('en-US'))
    await hasText(page.locator('#alttext-bulk-estimate'), before.estimate_credits.toLocaleString('en-US'))
    const credits = before.credits_remaining === null ? 'No limit' : before.credits_remaining.toLocaleString('en-US')
    await hasText(page.locator('#alttext-bulk-credits'), credits)
    await expectNoViolations('#wpbody-content')

    await page.click('#alttext-bulk-start')
    // Focus moves to the button that can be pressed next, not to the page's top.
    await waitUntil(
      () => page.evaluate(() => ['alttext-bulk-cancel', 'alttext-bulk-status'].includes((globalThis as any).document.activeElement?.id ?? '')),
      'focus on Cancel or the status',
      15_000,
    )
    const status = page.locator('#alttext-bulk-status')
    await waitUntil(
      async () => {
        const text = (await status.textContent()) ?? ''
        if (!text.startsWith('Finished')) await wp.cron()
        return text.startsWith('Finished')
      },
      'the bulk run to finish',
      60_000,
    )
    const after = (await wp.rest('/alttext/v1/bulk')).body
    expect(after.state).toBe('done')
    expect(after.done + after.failed).toBe(after.total)
    expect(await page.locator('#alttext-bulk-status').getAttribute('aria-live')).toBe('polite')
    expect(await page.$eval('#alttext-bulk-progress', (p: any) => [p.value, p.max])).toEqual([after.total, after.total])
    // Start again only when something is left to do.
    expect(await page.locator('#alttext-bulk-start').isDisabled()).toBe(!(after.remaining_images > 0))
    await expectNoViolations('#wpbody-content')
  }, 90_000)
})

describe('the media library', () => {
  test('list view: the column shows the suggestion, and Accept writes it and decides it in alttext', async () => {
    const image = await pendingImage('list-accept')
    await page.goto(`${wp.url}/wp-admin/upload.php?mode=list`)
    const cell = page.locator(`#post-${image.id} td.column-alttext .alttext-suggestion[data-alttext-ready]`)
    await hasText(cell.locator('.alttext-proposed-text'), PROPOSED)
    await expectNoViolations('#the-list td.column-alttext')

    await cell.locator('button.alttext-accept').click()
    await containsText(cell.locator('.alttext-result'), 'Accepted')
    expect(await altOf(image.id)).toBe(PROPOSED)
    expect(await suggestion(image.suggestionId)).toMatchObject({ status: 'accepted', final_alt: PROPOSED })
    // Focus stays in the cell (on its new state), and the result was said in a status region.
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.closest('.alttext-suggestion') !== null)).toBe(true)
    await expectNoViolations('#the-list td.column-alttext')
  }, 90_000)

  test('grid view: a badge marks the pending suggestion; in the modal, Edit accepts another text', async () => {
    const image = await pendingImage('grid-edit')
    await page.goto(`${wp.url}/wp-admin/upload.php?mode=grid`)
    const thumbnail = page.locator(`.attachments .attachment[data-id="${image.id}"]`)
    await hasText(thumbnail.locator('.alttext-badge'), 'Suggestion')
    expect(await thumbnail.getAttribute('aria-label')).toContain('alt text suggestion waiting for review')
    await expectNoViolations(`.attachments .attachment[data-id="${image.id}"]`)

    await thumbnail.click()
    const field = page.locator('.media-modal .alttext-suggestion[data-alttext-ready]')
    await hasText(field.locator('.alttext-proposed-text'), PROPOSED)
    await expectNoViolations('.media-modal .compat-item')

    await field.locator('button.alttext-edit').click()
    const text = field.locator('textarea.alttext-edit-text')
    await focused(text)
    const edited = 'A grey cat asleep in the sun on a windowsill.'
    await text.fill(edited)
    await field.locator('button.alttext-save').click()
    await containsText(field.locator('.alttext-result'), 'Accepted')
    expect(await altOf(image.id)).toBe(edited)
    expect(await suggestion(image.suggestionId)).toMatchObject({ status: 'edited', final_alt: edited })
    // The modal's own alt text field shows the text now, and the thumbnail's badge is gone.
    expect(await page.inputValue('.media-modal [data-setting="alt"] textarea')).toBe(edited)
    await page.keyboard.press('Escape')
    await thumbnail.locator('.alttext-badge').waitFor({ state: 'detached' })
  }, 90_000)

  test('edit-attachment screen: Reject leaves the alt text and rejects the suggestion in alttext', async () => {
    const image = await pendingImage('edit-reject')
    await page.goto(`${wp.url}/wp-admin/post.php?post=${image.id}&action=edit`)
    const field = page.locator('.alttext-suggestion[data-alttext-ready]')
    await hasText(field.locator('.alttext-proposed-text'), PROPOSED)
    await expectNoViolations('.compat-attachment-fields')

    await field.locator('button.alttext-reject').click()
    await containsText(field.locator('.alttext-result'), 'Rejected')
    expect(await altOf(image.id)).toBe('')
    expect((await suggestion(image.suggestionId)).status).toBe('rejected')
    await expectNoViolations('.compat-attachment-fields')
  }, 90_000)

  test('the keyboard alone: Tab to Edit, Enter, type, Tab to Cancel, Enter: focus is back on Edit', async () => {
    const image = await pendingImage('keyboard')
    await page.goto(`${wp.url}/wp-admin/post.php?post=${image.id}&action=edit`)
    const field = page.locator('.alttext-suggestion[data-alttext-ready]')
    await field.locator('button.alttext-edit').focus()
    await page.keyboard.press('Enter')
    await focused(field.locator('textarea.alttext-edit-text'))
    await hasAttribute(field.locator('button.alttext-edit'), 'aria-expanded', 'true')
    await page.keyboard.type(' Indoors.')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await focused(field.locator('button.alttext-edit'))
    await field.locator('.alttext-editor').waitFor({ state: 'hidden' })
    expect((await suggestion(image.suggestionId)).status).toBe('pending')
  }, 90_000)
})

describe('the block editor', () => {
  test("the image block's sidebar: Accept writes the attachment's and the block's alt text", async () => {
    const image = await pendingImage('block-accept')
    const src = await wp.wpJson<string>(`return wp_get_attachment_url(${image.id});`)
    const content = `<!-- wp:image {"id":${image.id},"sizeSlug":"full"} -->\n<figure class="wp-block-image size-full"><img src="${src}" alt="" class="wp-image-${image.id}"/></figure>\n<!-- /wp:image -->`
    const post = await wp.rest('/wp/v2/posts', { json: { title: 'A cat', content, status: 'draft' } })
    expect(post.status).toBe(201)
    await page.goto(`${wp.url}/wp-admin/post.php?post=${post.body.id}&action=edit`)
    await page.waitForFunction(() => (globalThis as any).wp?.data?.select('core/block-editor')?.getBlocks().length > 0, undefined, { timeout: 30_000 })
    // No welcome guide; the image block selected and the block tab of the sidebar open.
    const clientId = await page.evaluate(() => {
      const data = (globalThis as any).wp.data
      data.dispatch('core/preferences')?.set('core/edit-post', 'welcomeGuide', false)
      const block = data.select('core/block-editor').getBlocks()[0]
      data.dispatch('core/block-editor').selectBlock(block.clientId)
      data.dispatch('core/edit-post').openGeneralSidebar('edit-post/block')
      return block.clientId as string
    })
    const panel = page.locator('.alttext-panel')
    await hasText(panel.locator('.alttext-proposed-text'), PROPOSED)
    await expectNoViolations('.alttext-panel')

    await panel.getByRole('button', { name: 'Accept', exact: true }).click()
    await containsText(panel.locator('.alttext-result'), 'Accepted')
    const blockAlt = await page.evaluate((id) => (globalThis as any).wp.data.select('core/block-editor').getBlock(id).attributes.alt, clientId)
    expect(blockAlt).toBe(PROPOSED)
    expect(await altOf(image.id)).toBe(PROPOSED)
    expect(await suggestion(image.suggestionId)).toMatchObject({ status: 'accepted', final_alt: PROPOSED })
    await expectNoViolations('.alttext-panel')
  }, 90_000)
})
