// The screenshot of an `alttext audit` report for the README (docs/screenshots/audit-report.png).
// Starts the real service from source with a temporary database and the fake model of test/support,
// registers an account, runs `alttext audit` over a copy of the fixture site (test/fixtures/site) with
// --fix, and photographs the report page in Debian's Chromium at 1280 px. Everything is on loopback.
//
//   bun scripts/audit-screenshot.ts
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pngQuantize } from '@napi-rs/image'
import { audit, MODEL, siteCopy } from '../test/cli/audit-support'
import { chromiumInstalled, launchChromium } from '../test/support/browser'
import { startFakeOllama } from '../test/support/fake-ollama'
import { REPO_ROOT, spawnService } from '../test/support/process'

if (!chromiumInstalled()) throw new Error('the screenshot needs Chromium at /usr/bin/chromium (apt-get install chromium)')

const OUT = join(REPO_ROOT, 'docs', 'screenshots', 'audit-report.png')
const dir = mkdtempSync(join(tmpdir(), 'alttext-audit-screenshot-'))
const ollama = await startFakeOllama(MODEL)
const service = await spawnService({ ALTTEXT_DB: join(dir, 'alttext.db'), OLLAMA_HOST: ollama.url, ALTTEXT_RATE_LIMITS: 'off' })
const copy = siteCopy()
const browser = await launchChromium()
try {
  const registered = await fetch(`${service.url}/api/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ada@example.org', password: 'correct horse battery staple' }),
  })
  const { api_key: key } = (await registered.json()) as { api_key: string }
  const run = await audit(['site', '--fix', 'site-fixed', '-o', 'audit-report.html', '-q'], { ALTTEXT_URL: service.url, ALTTEXT_API_KEY: key }, copy.dir)
  if (run.code !== 0) throw new Error(`alttext audit exited ${run.code}: ${run.stderr}`)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' })
  const page = await context.newPage()
  await page.goto(`file://${join(copy.dir, 'audit-report.html')}`)
  await page.waitForLoadState('load')
  const png = await page.screenshot({ fullPage: true, animations: 'disabled', caret: 'hide' })
  const small = await pngQuantize(png, { maxQuality: 90, speed: 1 })
  writeFileSync(OUT, small)
  console.log(`${OUT.slice(REPO_ROOT.length + 1)}: ${(small.byteLength / 1024).toFixed(0)} KB`)
} finally {
  await browser.close()
  copy.cleanup()
  service.proc.kill()
  await service.exited
  await ollama.stop()
  rmSync(dir, { recursive: true, force: true })
}
