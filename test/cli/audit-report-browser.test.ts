// The evidence pack's report.html in Debian's Chromium: no WCAG 2.2 A/AA violation (axe-core) with pages of
// every status, a page that could not be read and groups by folder and host; the outcome filter works
// with no script at all (CSS :has), the text filter once the inline script runs, and a count is announced.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { axeViolations, chromiumInstalled, launchChromium } from '../support/browser'
import { audit, pageServer, siteCopy } from './audit-support'

let browser: Browser

beforeAll(async () => {
  if (chromiumInstalled()) browser = await launchChromium()
})
afterAll(() => browser?.close())

/** The outcome of each row the reader can see. */
/** An element as the page sees it (the tests compile without the DOM's types). */
type Shown = { offsetParent: unknown; dataset: Record<string, string> }

const visibleOutcomes = (page: Page) =>
  page.$$eval('tr[data-o]', (rows) => (rows as unknown as Shown[]).filter((row) => row.offsetParent !== null).map((row) => row.dataset.o!))

const visiblePages = (page: Page) =>
  page.$$eval('.page', (pages) => (pages as unknown as Shown[]).filter((p) => p.offsetParent !== null).map((p) => p.dataset.name!))

/** A site with an image of every status, in two folders, and a page URL that cannot be fetched. */
function siteWithEveryStatus(site: string) {
  mkdirSync(join(site, 'guide'), { recursive: true })
  const long = 'A very long description of the harbour at dawn, '.repeat(4).trim()
  writeFileSync(
    join(site, 'statuses.html'),
    [
      '<html lang="en"><body>',
      '<img src="img/kite.jpg">',
      '<a href="/"><img src="img/logo.png" alt=""></a>',
      '<img src="img/team.jpg" alt="IMG_2041.JPG">',
      `<img src="img/kite.jpg" alt="${long}">`,
      '<img src="img/team.jpg" alt="Twelve club members with their kites on the beach.">',
      '<img src="img/divider.png" alt="">',
      '</body></html>',
    ].join('\n'),
  )
  writeFileSync(join(site, 'guide', 'harbour.html'), '<html lang="en"><body><img src="../img/kite.jpg" alt="A red kite over the harbour wall."></body></html>')
}

describe.skipIf(!chromiumInstalled())('report.html in Chromium', () => {
  test('zero axe-core violations, with and without script; the outcome filter works without script, the text filter with it', async () => {
    const copy = siteCopy()
    const server = pageServer({ '/broken': () => new Response('down', { status: 500 }) })
    try {
      siteWithEveryStatus(copy.site)
      const res = await audit(['--check', 'site', `${server.url}/broken`, '--evidence', 'pack', '-q'], {}, copy.dir)
      expect(res.code).toBe(1)
      const url = `file://${join(copy.dir, 'pack', 'report.html')}`

      // With the script: every row shown at first, no violation.
      const page = await browser.newPage()
      page.setDefaultTimeout(5000)
      await page.goto(url)
      expect(await page.locator('h2.group, .group > h2').allTextContents()).toEqual([
        'site',
        'site/blog',
        'site/guide',
        `127.0.0.1:${new URL(server.url).port}`,
      ])
      const all = await visibleOutcomes(page)
      expect(new Set(all)).toEqual(new Set(['needs-work', 'good', 'decorative']))
      // Every status the lint gives is on the page.
      expect(new Set(await page.locator('td .status').allTextContents())).toEqual(
        new Set(['Missing alt', 'Empty alt', 'Poor alt', 'Long alt', 'Good alt', 'Decorative']),
      )
      expect(await page.locator('#text-filter').isVisible()).toBe(true)
      expect(await axeViolations(page)).toEqual([])

      await page.getByRole('radio', { name: /^Good \(\d+\)$/u }).check()
      expect(new Set(await visibleOutcomes(page))).toEqual(new Set(['good']))
      expect(await page.locator('#filter-count').textContent()).toBe(`${all.filter((o) => o === 'good').length} of ${all.length} images shown`)
      // A page with no good image is hidden with its rows; a group with none too.
      expect(await visiblePages(page)).not.toContain('site/blog/post.html')

      await page.getByRole('radio', { name: /^Not checked \(1\)$/u }).check()
      expect(await visibleOutcomes(page)).toEqual([])
      expect(await visiblePages(page)).toEqual([`${server.url}/broken`])

      await page.getByRole('radio', { name: 'All', exact: true }).check()
      await page.getByRole('searchbox', { name: /^Filter by text/u }).fill('harbour wall')
      expect(await visiblePages(page)).toEqual(['site/guide/harbour.html'])
      expect(await page.locator('#filter-count').textContent()).toBe(`1 of ${all.length} images shown`)
      expect(await axeViolations(page)).toEqual([])
      await page.close()

      // Without script: everything readable, the text field stays hidden, the outcome radios filter by CSS alone.
      const context = await browser.newContext({ javaScriptEnabled: false })
      const plain = await context.newPage()
      plain.setDefaultTimeout(5000)
      await plain.goto(url)
      expect(await plain.locator('#text-filter').isVisible()).toBe(false)
      expect((await visibleOutcomes(plain)).sort()).toEqual([...all].sort())
      await plain.getByRole('radio', { name: /^Needs work \(\d+\)$/u }).check()
      expect(new Set(await visibleOutcomes(plain))).toEqual(new Set(['needs-work']))
      expect(await visiblePages(plain)).not.toContain('site/guide/harbour.html')
      await context.close()
      // axe-core needs script to run: the page as a reader without script gets it (the script taken out) is checked instead.
      const html = readFileSync(join(copy.dir, 'pack', 'report.html'), 'utf8')
      writeFileSync(join(copy.dir, 'pack', 'static.html'), html.replace(/<script>[\s\S]*?<\/script>/u, ''))
      const still = await browser.newPage()
      await still.goto(`file://${join(copy.dir, 'pack', 'static.html')}`)
      expect(await still.locator('#text-filter').isVisible()).toBe(false)
      expect(await axeViolations(still)).toEqual([])
      await still.close()
    } finally {
      server.stop()
      copy.cleanup()
    }
  }, 60_000)
})
