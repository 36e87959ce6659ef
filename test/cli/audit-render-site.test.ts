// test lane: browser
// --render through the site's own gate, as a user runs it: the page is on an audited origin, so the
// user's --header and cookies reach it; a second loopback origin that the page pulls in is neither
// audited nor allowed (loopback is private), so none of the page's requests reach it, and --allow-private
// lets them through. Both servers listen on loopback only.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../support/process'
import { type CrawlSite, page, startCrawlSite } from './audit-crawl-support'
import { CHROMIUM, PNG } from './audit-render-support'

let site: CrawlSite
let other: CrawlSite
let cwd: string

beforeAll(async () => {
  site = await startCrawlSite()
  other = await startCrawlSite({ '/pixel.png': PNG, '/data.json': '{"src":"/late.png"}' })
  site.set('/late.png', PNG)
  site.set(
    '/',
    page(
      'Home',
      `<img src="/late.png" alt="">
<img src="${other.origin}/pixel.png">
<script>
  fetch('${other.origin}/data.json').catch(() => {})
  const img = document.createElement('img'); img.src = '/late.png'; document.body.append(img)
</script>`,
    ),
  )
  cwd = mkdtempSync(join(tmpdir(), 'alttext-render-site-'))
  writeFileSync(join(cwd, 'cookies.txt'), `# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tTRUE\t0\tsession\tcookie-secret-1\n`)
})

afterAll(async () => {
  await site?.stop()
  await other?.stop()
  rmSync(cwd, { recursive: true, force: true })
})

// Each test server has its own CA, made for the run: the command is given both.
const env = () => {
  const bundle = join(cwd, 'ca.pem')
  writeFileSync(bundle, `${readFileSync(site.server.caPath, 'utf8')}\n${readFileSync(other.server.caPath, 'utf8')}`)
  return { NODE_EXTRA_CA_CERTS: bundle, ALTTEXT_CHROMIUM: CHROMIUM }
}

describe('--render with the site gate', () => {
  test('the audited origin gets the header and cookie; another loopback origin is never reached', async () => {
    const before = other.requests.length
    const result = await runCli(
      ['audit', '--render', '--dry-run', '--json', '-', '-q', '--header', 'X-Audit-Token: header-secret-2', '--cookie-file', 'cookies.txt', `${site.origin}/`],
      env(),
      { cwd },
    )
    const report = JSON.parse(result.stdout)
    // The image the script inserted is found; the one on the other origin is listed by its address.
    const srcs = report.pages[0].images.map((image: { src: string }) => image.src)
    expect(srcs).toEqual(['/late.png', `${other.origin}/pixel.png`, '/late.png'])
    const home = site.requests.find((request) => request.path === '/')!
    expect(home.headers.get('x-audit-token')).toBe('header-secret-2')
    expect(home.headers.get('cookie')).toContain('session=cookie-secret-1')
    // Nothing of the page's went to the other origin: neither the image nor the fetch.
    expect(other.requests.length).toBe(before)
    for (const secret of ['header-secret-2', 'cookie-secret-1']) {
      expect(result.stdout).not.toContain(secret)
      expect(result.stderr).not.toContain(secret)
    }
  }, 60_000)

  test('--allow-private lets the page reach the other origin, without the private fields', async () => {
    const before = other.requests.length
    const result = await runCli(
      ['audit', '--render', '--dry-run', '--json', '-', '-q', '--header', 'X-Audit-Token: header-secret-2', '--allow-private', '127.0.0.1', `${site.origin}/`],
      env(),
      { cwd },
    )
    expect(JSON.parse(result.stdout).pages).toHaveLength(1)
    const reached = other.requests.slice(before)
    expect(reached.map((request) => request.path).sort()).toEqual(['/data.json', '/pixel.png'])
    for (const request of reached) {
      expect(request.headers.get('x-audit-token')).toBeNull()
      expect(request.headers.get('cookie')).toBeNull()
    }
  }, 60_000)
})
