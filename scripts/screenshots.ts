// Screenshots of every console page at 1280 px and at 320 px for docs/console.md and the README (docs/screenshots/*.png).
// Starts the real service (from source, or the built binary with --binary) with a temporary database,
// the fake model and the local HTTPS image host of test/support, walks the console in Debian's Chromium
// as a new person would, and writes palette PNGs (quantized, so they stay small). Everything is on loopback.
//
//   bun scripts/screenshots.ts            # bun src/main.ts serve
//   bun run build && bun scripts/screenshots.ts --binary   # dist/alttext serve
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pngQuantize } from '@napi-rs/image'
import type { Browser, Page } from 'playwright-core'
import { chromiumInstalled, launchChromium } from '../test/support/browser'
import { startFakeOllama } from '../test/support/fake-ollama'
import { startHttpsImageServer } from '../test/support/https-image-server'
import { makeJpeg, makePng } from '../test/support/images'
import { REPO_ROOT, spawnService } from '../test/support/process'

const OUT = join(REPO_ROOT, 'docs', 'screenshots')
const WIDTHS = [1280, 320] as const
const PASSWORD = 'correct horse battery staple'

if (!chromiumInstalled()) throw new Error('screenshots need Chromium at /usr/bin/chromium (apt-get install chromium)')

const dir = mkdtempSync(join(tmpdir(), 'alttext-screenshots-'))
const ollama = await startFakeOllama({ reply: 'Two children flying a red kite on a windy beach at sunset.' })
const images = await startHttpsImageServer()
const service = await spawnService(
  {
    ALTTEXT_DB: join(dir, 'alttext.db'),
    OLLAMA_HOST: ollama.url,
    NODE_EXTRA_CA_CERTS: images.caPath,
    ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
    ALTTEXT_RATE_LIMITS: 'off',
  },
  process.argv.includes('--binary') ? [join(REPO_ROOT, 'dist', 'alttext')] : undefined,
)
console.log(`walking the console of ${process.argv.includes('--binary') ? 'dist/alttext' : 'src/main.ts'} at ${service.url}`)
let browser: Browser | undefined

async function shot(page: Page, name: string, width: number): Promise<void> {
  await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
  // No caret or focus ring in the picture.
  await page.evaluate(() => (globalThis as any).document.activeElement?.blur?.())
  const png = await page.screenshot({ fullPage: true, animations: 'disabled', caret: 'hide' })
  const small = await pngQuantize(png, { maxQuality: 90, speed: 1 })
  const file = join(OUT, `${name}-${width}.png`)
  writeFileSync(file, small)
  console.log(`${file.slice(REPO_ROOT.length + 1)}: ${(small.byteLength / 1024).toFixed(0)} KB`)
}

async function walk(width: number): Promise<void> {
  const context = await browser!.newContext({ viewport: { width, height: width === 320 ? 640 : 800 }, baseURL: service.url, colorScheme: 'light' })
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  const email = `ada-${width}@example.org`

  await page.goto('/sign-in')
  await page.waitForSelector('main h1')
  await shot(page, 'sign-in', width)

  await page.goto('/sign-up')
  await page.fill('#email', email)
  await page.fill('#password', PASSWORD)
  await page.click('main form button[type=submit]')
  await page.waitForSelector('.once-key input')
  await shot(page, 'first-key', width)
  const key = await page.inputValue('.once-key input')
  await page.click('.once-key button:has-text("Continue")')
  await page.waitForSelector('main h1:has-text("Overview")')

  // Some use to show: a few descriptions by the API (one cached), and a second, labelled key.
  for (const [i, bytes] of [makeJpeg(900, 600), makePng(400, 300), makeJpeg(1200, 800)].entries()) {
    const url = images.route(`/${width}-${i}.img`, { kind: 'bytes', body: bytes })
    for (const _ of i === 0 ? [1, 2] : [1])
      await fetch(`${service.url}/api/alt-text`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ image_url: url, keywords: ['kite', 'beach'] }),
      })
  }
  await fetch(`${service.url}/api/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ label: 'staging CMS', expires_in_days: 90 }),
  })

  await page.goto('/')
  await page.waitForSelector('main h1:has-text("Overview")')
  await shot(page, 'overview', width)

  await page.click('nav a:has-text("API keys")')
  await page.waitForSelector('.cards li')
  await shot(page, 'keys', width)

  await page.click('nav a:has-text("Try it")')
  await page.setInputFiles('#image-file', { name: 'beach.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(makeJpeg(640, 400)) })
  await page.fill('#context', 'A blog post about a family day at the seaside')
  await page.fill('#keywords', 'kite, beach')
  await page.click('button:has-text("Describe the image")')
  await page.waitForSelector('.result, main form [role=alert].error:not(.empty)')
  await shot(page, 'try-it', width)

  await page.click('nav a:has-text("Recent")')
  await page.waitForSelector('main h1:has-text("Recent")')
  await shot(page, 'recent', width)

  await page.click('nav a:has-text("Account")')
  await page.waitForSelector('main h1:has-text("Account")')
  await shot(page, 'account', width)
  await context.close()
}

try {
  mkdirSync(OUT, { recursive: true })
  browser = await launchChromium()
  for (const width of WIDTHS) await walk(width)
} finally {
  await browser?.close()
  service.proc.kill('SIGTERM')
  await service.exited
  await Promise.all([ollama.stop(), images.stop()])
  rmSync(dir, { recursive: true, force: true })
}
