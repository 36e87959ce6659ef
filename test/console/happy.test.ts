// The walk a new person takes through the console, in Chromium against the real service (fake model,
// local HTTPS image host, loopback SMTP): sign up and see the key once, the overview, create / rotate /
// revoke a key, describe an uploaded JPEG and an image URL and copy the alt text, the recent list,
// change the password, sign out, sign in again, and reset the password through the mail.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import {
  ALT_TEXT_REPLY,
  type ConsoleEnv,
  clipboardText,
  consoleForFile,
  DECORATIVE_WIDTH,
  newContext,
  openPage,
  resetPathFromMail,
  signInContext,
} from '../support/console'
import { makeJpeg, makePng } from '../support/images'
import { uniqueEmail } from '../support/service'

let env: ConsoleEnv
let context: BrowserContext
let page: Page
let problems: string[]
const email = uniqueEmail('console')
let password = 'correct horse battery staple'
let firstKey = ''
let resetKey = ''
const jpeg = makeJpeg(800, 600)
/** Each step's own limit; the page's waits give up sooner, so a failing step fails alone, with its reason. */
const STEP_MS = 30_000

const run = consoleForFile('test/console/happy.test.ts', { page: true }, (started) => ({ env, context, page, problems } = started))

const heading = () => page.locator('main h1')
const usageWith = (key: string) => env.service.api.get('/api/usage', key)

/** Waits for the answer of "Describe the image"; an error shown instead fails the step with its words. */
async function described() {
  await page.locator('.result, main form [role=alert].error:not(.empty)').first().waitFor()
  const shown = await page.locator('main form [role=alert].error:not(.empty)').count()
  if (shown) throw new Error(`the page shows an error: ${await page.textContent('main form [role=alert].error:not(.empty)')}`)
}

async function go(link: string) {
  await page.click(`nav a:has-text("${link}")`)
  await page.locator('main h1', { hasText: link === 'Overview' ? 'Overview' : link }).waitFor()
}

describe.if(run)('a new person in the console', () => {
  test(
    'an unknown visitor of / lands on the sign-in page, and signs up from there',
    async () => {
      await openPage(page, '/')
      await page.waitForURL('**/sign-in')
      expect(await heading().textContent()).toBe('Sign in')
      await page.click('main a:has-text("Sign up")')
      await heading().filter({ hasText: 'Sign up' }).waitFor()
      await page.fill('#email', email)
      await page.fill('#password', password)
      await page.click('main form button[type=submit]')
      const key = page.locator('.once-key input')
      await key.waitFor()
      firstKey = await key.inputValue()
      expect(firstKey).toMatch(/^alt_[0-9a-f]{64}$/)
      expect(await page.textContent('.once-key')).toContain("you won't see it again")
      await page.click('.once-key button:has-text("Copy the key")')
      await page.locator('.once-key [role=status]', { hasText: 'Copied' }).waitFor()
      expect(await clipboardText(page)).toBe(firstKey)
      expect((await usageWith(firstKey)).status).toBe(200)
    },
    STEP_MS,
  )

  test(
    'the overview shows the plan, the credits, the period end, calls today, and first steps instead of an empty chart',
    async () => {
      await page.click('.once-key button:has-text("Continue to the overview")')
      await heading().filter({ hasText: 'Overview' }).waitFor()
      expect(new URL(page.url()).pathname).toBe('/')
      const facts = page.locator('main .facts')
      await facts.waitFor()
      const text = await facts.textContent()
      expect(text).toContain('Plan')
      expect(text).toContain('Free')
      expect(text).toContain('50 of 50')
      expect(text).toContain('Period ends')
      expect(await page.$eval('#credits-meter', (meter) => (meter as unknown as { value: number; max: number }).value)).toBe(0)
      expect(await page.textContent('label[for=credits-meter]')).toBe('Credits used: 0 of 50')
      // Nothing to chart yet: the first steps, at the top, instead of an empty chart.
      const steps = page.locator('main .first-steps')
      await steps.waitFor()
      // At the top: before the period's figures.
      expect(await steps.evaluate((panel) => Boolean(panel.compareDocumentPosition(panel.ownerDocument.querySelector('.facts')!) & 4))).toBe(true)
      expect(await steps.locator('h2').textContent()).toBe('First steps')
      expect(await steps.locator('a').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('href')]))).toEqual([
        ['Try an image', '/try'],
        ['Make an API key', '/keys'],
      ])
      expect(await steps.locator('pre code').textContent()).toStartWith(`curl -sS ${env.url}/api/alt-text \\\n  -H "X-API-Key: $ALTTEXT_API_KEY"`)
      await steps.locator('button:has-text("Copy the curl command")').click()
      expect(await clipboardText(page)).toBe((await steps.locator('pre code').textContent()) ?? '')
      expect(await page.locator('.chart').count()).toBe(0)
      // A key, once shown, is never shown again: the overview has no key in it.
      expect(await page.content()).not.toContain(firstKey)
    },
    STEP_MS,
  )

  test(
    'keys: create one with a label and an expiry, rotate it, revoke it',
    async () => {
      await go('API keys')
      await page.locator('.cards li').first().waitFor()
      expect(await page.locator('.cards li').count()).toBe(1)
      await page.fill('#key-label', 'staging CMS')
      await page.selectOption('#key-expiry', '30')
      await page.click('button:has-text("Create the key")')
      const shown = page.locator('.once-key input')
      await shown.waitFor()
      const created = await shown.inputValue()
      expect(created).toMatch(/^alt_[0-9a-f]{64}$/)
      expect((await usageWith(created)).status).toBe(200)
      const card = page.locator('.cards li', { hasText: 'staging CMS' })
      await card.waitFor()
      expect(await card.textContent()).toContain(created.slice(0, 12))
      expect(await card.textContent()).not.toContain('Expiresnever')
      await page.click('.once-key button:has-text("I have saved it")')
      expect(await page.locator('.once-key').count()).toBe(0)

      await card.locator('button:has-text("Rotate")').click()
      const dialog = page.locator('dialog[open]')
      await dialog.waitFor()
      expect(await dialog.textContent()).toContain('staging CMS')
      await dialog.locator('button:has-text("Rotate the key")').click()
      await page.locator('.once-key h2', { hasText: 'replacing' }).waitFor()
      const rotated = await page.locator('.once-key input').inputValue()
      expect(rotated).not.toBe(created)
      expect((await usageWith(created)).status).toBe(401)
      expect((await usageWith(rotated)).status).toBe(200)

      await page
        .locator('.cards li', { hasText: rotated.slice(0, 12) })
        .locator('button:has-text("Revoke")')
        .click()
      await dialog.waitFor()
      await dialog.locator('button:has-text("Revoke the key")').click()
      await page.locator('main [role=status]', { hasText: `Key ${rotated.slice(0, 12)} is revoked.` }).waitFor()
      expect((await usageWith(rotated)).status).toBe(401)
      await page.locator('.cards li', { hasText: 'staging CMS' }).waitFor({ state: 'detached' })
      expect(await page.locator('.cards li').count()).toBe(1)
    },
    STEP_MS,
  )

  test(
    'try it: an uploaded JPEG is described; the alt text is copied; the curl command does the same call',
    async () => {
      await go('Try it')
      await page.setInputFiles('#image-file', { name: 'photo.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(jpeg) })
      expect(await page.getAttribute('.drop img.preview', 'src')).toStartWith('blob:')
      await page.fill('#keywords', 'kite, beach')
      await page.click('button:has-text("Describe the image")')
      await described()
      const output = page.locator('#alt-output')
      expect(await output.inputValue()).toBe(ALT_TEXT_REPLY)
      expect(await page.getAttribute('.result img.preview', 'alt')).toBe(ALT_TEXT_REPLY)
      expect(await page.getAttribute('.result img.preview', 'src')).toStartWith('blob:')
      expect(await page.textContent('#alt-length')).toBe(`${ALT_TEXT_REPLY.length} of at most 125 characters`)
      const result = (await page.textContent('.result')) ?? ''
      expect(result).toContain('1 credit used, 49 left.')
      expect(result).toContain('JPEG')
      await page.click('button:has-text("Copy the alt text")')
      await page.locator('.result [role=status]', { hasText: 'Copied' }).first().waitFor()
      expect(await clipboardText(page)).toBe(ALT_TEXT_REPLY)

      // The command shown, run by curl, makes the same call (the same bytes: a cache hit now).
      const curl = (await page.textContent('.result pre')) ?? ''
      expect(curl).toContain('-F image=@photo.jpg')
      expect(curl).toContain('--form-string keywords=kite')
      if (Bun.which('curl')) {
        const dir = mkdtempSync(join(tmpdir(), 'alttext-curl-'))
        try {
          writeFileSync(join(dir, 'photo.jpg'), jpeg)
          const proc = Bun.spawn(['bash', '-c', curl], { cwd: dir, env: { PATH: process.env.PATH ?? '', ALTTEXT_API_KEY: firstKey }, stdout: 'pipe' })
          const answer = JSON.parse(await new Response(proc.stdout).text())
          expect(answer.alt_text).toBe(ALT_TEXT_REPLY)
          expect(answer.cached).toBe(true)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    },
    STEP_MS,
  )

  test(
    'try it: an image URL is described too',
    async () => {
      const url = env.images.route('/harbour.jpg', { kind: 'bytes', body: makeJpeg(640, 480) })
      const before = (await usageWith(firstKey)).body.credits.remaining as number
      await page.check('input[name=source][value=url]')
      await page.fill('#image-url', url)
      await page.selectOption('#style', 'concise')
      await page.click('button:has-text("Describe the image")')
      await described()
      await page.locator('.result pre', { hasText: 'image_url' }).waitFor()
      expect(await page.locator('#alt-output').inputValue()).toBe(ALT_TEXT_REPLY)
      expect(await page.textContent('.result')).toContain(`1 credit used, ${before - 1} left.`)
      expect(await page.textContent('.result pre')).toContain(url)
      // No preview of another site's image: the page loads images only from itself and from local files.
      expect(await page.locator('.result img').count()).toBe(0)
    },
    STEP_MS,
  )

  test(
    'try it: text the image shows is named under the alt text',
    async () => {
      env.ollama.behave({ structured: { text_in_image: 'HARBOUR OPEN' } })
      try {
        const url = env.images.route('/sign.jpg', { kind: 'bytes', body: makeJpeg(600, 400) })
        await page.check('input[name=source][value=url]')
        await page.fill('#image-url', url)
        await page.click('button:has-text("Describe the image")')
        await described()
        await page.locator('.result', { hasText: 'Text in the image' }).waitFor()
        expect(await page.textContent('.result')).toContain('Text in the image: “HARBOUR OPEN”')
        expect(await page.locator('#alt-output').inputValue()).toContain('HARBOUR OPEN')
      } finally {
        env.ollama.behave({ structured: null })
      }
    },
    STEP_MS,
  )

  test(
    'try it: with "detect decorative", a decorative image gets an empty alt text, said plainly',
    async () => {
      await page.check('input[name=source][value=file]')
      await page.setInputFiles('#image-file', { name: 'divider.png', mimeType: 'image/png', buffer: Buffer.from(makePng(DECORATIVE_WIDTH, 20)) })
      await page.check('#detect_decorative')
      await page.click('button:has-text("Describe the image")')
      await described()
      const result = (await page.textContent('.result')) ?? ''
      expect(result).toContain('Decorative image.')
      expect(result).toContain('alt=""')
      expect(result).toContain('Why: a plain background pattern')
      expect(await page.getAttribute('.result img.preview', 'alt')).toBe('')
      expect(await page.locator('#alt-output').count()).toBe(0)
      expect(await page.textContent('.result pre')).toContain('--form-string detect_decorative=true')
      await page.uncheck('#detect_decorative')
    },
    STEP_MS,
  )

  test(
    'try it: a file dropped on the drop area is taken',
    async () => {
      await page.check('input[name=source][value=file]')
      const dropped = await page.evaluateHandle(
        (bytes) => {
          const g = globalThis as any
          const transfer = new g.DataTransfer()
          transfer.items.add(new g.File([new Uint8Array(bytes)], 'dropped.jpg', { type: 'image/jpeg' }))
          return transfer
        },
        [...makeJpeg(300, 200)],
      )
      await page.dispatchEvent('.drop', 'dragover', { dataTransfer: dropped })
      expect(await page.getAttribute('.drop', 'class')).toContain('dragging')
      await page.dispatchEvent('.drop', 'drop', { dataTransfer: dropped })
      await page.locator('.drop .chosen', { hasText: 'dropped.jpg' }).waitFor()
      expect(await page.getAttribute('.drop img.preview', 'src')).toStartWith('blob:')
      await page.click('button:has-text("Describe the image")')
      await described()
      expect(await page.locator('#alt-output').inputValue()).toBe(ALT_TEXT_REPLY)
      expect(await page.textContent('.result pre')).toContain('-F image=@dropped.jpg')
    },
    STEP_MS,
  )

  test(
    'recent lists the six descriptions (upload, curl, URL, text in the image, decorative, dropped), newest first, each with a copy button; delete one, then all',
    async () => {
      await go('Recent')
      const items = page.locator('.cards li')
      await items.first().waitFor()
      expect(await items.count()).toBe(6)
      expect(await items.nth(1).textContent()).toContain('Decorative')
      expect(await items.nth(2).textContent()).toContain('HARBOUR OPEN')
      expect(await items.nth(3).textContent()).toContain('from a URL')
      await items.nth(3).locator('button:has-text("Copy")').click()
      expect(await clipboardText(page)).toBe(ALT_TEXT_REPLY)

      // Delete one, then everything (after a confirmation).
      await items.first().locator('button:has-text("Delete")').click()
      await page.locator('main [role=status]', { hasText: 'Deleted the entry' }).waitFor()
      expect(await items.count()).toBe(5)
      expect((await env.service.api.get('/api/history', firstKey)).body.items.length).toBe(5)
      await page.click('button:has-text("Delete the whole history")')
      await page.locator('dialog[open] button:has-text("Delete everything")').click()
      await page.locator('main [role=status]', { hasText: 'Deleted 5 entries.' }).waitFor()
      expect(await page.textContent('main')).toContain('Nothing here yet.')
      expect((await env.service.api.get('/api/history', firstKey)).body.items).toEqual([])
    },
    STEP_MS,
  )

  test(
    'try it (after the recent list): several languages, each shown with its own alt text; the curl command sends languages',
    async () => {
      const german = 'Segelboote liegen bei Sonnenuntergang in einem kleinen Hafen mit einem Leuchtturm.'
      env.ollama.behave({ reply: ({ images }) => (images.length > 0 ? ALT_TEXT_REPLY : german) })
      try {
        await go('Try it')
        const url = env.images.route('/harbour-languages.jpg', { kind: 'bytes', body: makeJpeg(620, 410) })
        await page.check('input[name=source][value=url]')
        await page.fill('#image-url', url)
        await page.fill('#language', 'en, de')
        await page.click('button:has-text("Describe the image")')
        await described()
        await page.locator('.result h3', { hasText: 'Alt text per language' }).waitFor()
        expect(await page.locator('#alt-0').inputValue()).toBe(ALT_TEXT_REPLY)
        expect(await page.locator('#alt-1').inputValue()).toBe(german)
        expect(await page.getAttribute('#alt-1', 'lang')).toBe('de')
        expect(await page.textContent('.result pre')).toContain('"languages":["en","de"]')
      } finally {
        env.ollama.behave({ reply: ALT_TEXT_REPLY })
        await page.fill('#language', 'en')
      }
    },
    STEP_MS,
  )

  test(
    'account: change the password; sign out; sign in with the new one',
    async () => {
      await go('Account')
      expect(await page.textContent('main .facts')).toContain(email)
      await page.fill('#current_password', password)
      password = 'a new and longer password'
      await page.fill('#new_password', password)
      await page.fill('#repeat_password', password)
      await page.click('button:has-text("Change the password")')
      await page.locator('main [role=status]', { hasText: 'Your password is changed' }).waitFor()
      // Keys survive a password change.
      expect((await usageWith(firstKey)).status).toBe(200)

      await page.click('.who button:has-text("Sign out")')
      await heading().filter({ hasText: 'Sign in' }).waitFor()
      expect(await page.textContent('main')).toContain('You are signed out.')
      expect((await context.request.get(`${env.url}/api/session`)).status()).toBe(401)

      await page.fill('#email', email)
      await page.fill('#password', password)
      await page.click('main form button[type=submit]')
      await heading().filter({ hasText: 'Overview' }).waitFor()
      expect(await page.textContent('.who')).toContain(email)
    },
    STEP_MS,
  )

  test(
    'forgot password: the mailed link resets it, shows a new key once, and the new password signs in',
    async () => {
      await page.click('.who button:has-text("Sign out")')
      await heading().filter({ hasText: 'Sign in' }).waitFor()
      await page.click('main a:has-text("Forgot your password?")')
      await heading().filter({ hasText: 'Forgot your password?' }).waitFor()
      const asked = Date.now()
      await page.fill('#email', email)
      await page.click('main form button[type=submit]')
      await page.locator('main [role=status]', { hasText: 'reset link' }).waitFor()
      const path = await resetPathFromMail(env.smtp, email, asked)

      await openPage(page, path)
      expect(page.url()).not.toContain('token=')
      password = 'the password after the reset'
      await page.fill('#new_password', password)
      await page.click('#reset-form button[type=submit]')
      resetKey = await page.locator('.once-key input').inputValue()
      expect(resetKey).toMatch(/^alt_[0-9a-f]{64}$/)
      expect((await usageWith(resetKey)).status).toBe(200)
      expect((await usageWith(firstKey)).status).toBe(401)

      await page.click('main a:has-text("Sign in with the new password")')
      await heading().filter({ hasText: 'Sign in' }).waitFor()
      await page.fill('#email', email)
      await page.fill('#password', password)
      await page.click('main form button[type=submit]')
      await heading().filter({ hasText: 'Overview' }).waitFor()
    },
    STEP_MS,
  )

  test(
    'account: sign out everywhere ends this session and every other one',
    async () => {
      const other = await newContext(env)
      await signInContext(other, env, { email, password })
      await go('Account')
      await page.click('button:has-text("Sign out everywhere")')
      await heading().filter({ hasText: 'Sign in' }).waitFor()
      expect(await page.textContent('main')).toMatch(/Signed out everywhere \(2 sessions ended\)\./)
      expect((await other.request.get(`${env.url}/api/session`)).status()).toBe(401)
      await other.close()
    },
    STEP_MS,
  )

  test(
    'account: deleting it asks for the password and a confirmation, then says what went',
    async () => {
      await page.fill('#email', email)
      await page.fill('#password', password)
      await page.click('main form button[type=submit]')
      await heading().filter({ hasText: 'Overview' }).waitFor()
      await go('Account')
      await page.fill('#delete_password', password)
      await page.check('input[name=understood]')
      await page.click('button:has-text("Delete the account…")')
      const dialog = page.locator('dialog[open]')
      await dialog.waitFor()
      await dialog.locator('button:has-text("Delete my account")').click()
      await heading().filter({ hasText: 'Sign in' }).waitFor()
      expect(await page.textContent('main')).toMatch(/Your account is deleted, with \d+ API keys?, \d+ sessions? and \d+ history entr(y|ies)\./)
      expect((await usageWith(resetKey)).status).toBe(401)
      expect((await env.service.api.post('/api/login', { email, password })).status).toBe(401)
    },
    STEP_MS,
  )

  test(
    'nothing failed in the page on the way: no script error, no refused resource',
    () => {
      expect(problems).toEqual([])
    },
    STEP_MS,
  )
})
