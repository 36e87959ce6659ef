// test lane: browser
// alttext audit --render with bad input: no Chromium or a wrong one, a page that never stops loading (a
// request that never answers, an endless stream), a page that crashes or navigates away, 100,000 images on
// one page, and --fix (the live DOM is no source file). Each is a usage error or a per-page result.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { findChromium } from '../../src/cli/audit/render/chromium'
import type { HttpsImageServer } from '../support/https-image-server'
import { manualInterrupts, runCli } from '../support/process'
import { auditRendered, CHROMIUM, html, PNG, renderer, scanned, site, urlSource } from './audit-render-support'

/** The Chromium processes this test process started (children whose name starts "chrom"). */
function chromiumChildren(): number {
  let count = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (parent === process.pid && name.startsWith('chrom')) count++
    } catch {
      // gone meanwhile
    }
  }
  return count
}

let server: HttpsImageServer

beforeAll(async () => {
  server = await site()
  server.route('/', html('<!doctype html><html lang="en"><body><img src="/a.png"></body></html>'))
  server.route('/hang', { kind: 'hang' })
  server.route('/stream', {
    kind: 'drip',
    body: new TextEncoder().encode('data: tick\n\n'),
    chunkBytes: 12,
    intervalMs: 50,
    contentType: 'text/event-stream',
    loop: true,
  })
  const waiting = (path: string) =>
    html(`<!doctype html><html lang="en"><body><img src="/a.png"><script>
      const img = document.createElement('img'); img.src = '/b.png'; document.body.append(img)
      fetch('${path}').then(() => { const never = document.createElement('img'); never.src = '/c.png'; document.body.append(never) })
    </script></body></html>`)
  server.route('/long-poll', waiting('/hang'))
  server.route('/streaming', waiting('/stream'))
  server.route(
    '/away',
    html(
      '<!doctype html><html lang="en"><body><img src="/a.png"><script>addEventListener("load", () => { location.href = "/elsewhere" })</script></body></html>',
    ),
  )
  server.route('/elsewhere', html('<!doctype html><html lang="en"><body><img src="/b.png"><img src="/c.png"></body></html>'))
  server.route(
    '/redirecting',
    html('<!doctype html><html lang="en"><body><img src="/a.png"><script>location.replace("/elsewhere")</script><img src="/b.png"></body></html>'),
  )
  server.route('/crash', html('<!doctype html><html lang="en"><body><img src="/a.png"></body></html>'))
  server.route(
    '/many',
    html(`<!doctype html><html lang="en"><body><main></main><script>
      const main = document.querySelector('main'); const chunk = document.createDocumentFragment()
      for (let i = 0; i < 100000; i++) { const img = document.createElement('img'); img.src = '/a.png'; chunk.append(img) }
      main.append(chunk)
    </script></body></html>`),
  )
  server.route('/missing-page', html('<!doctype html><p>gone</p>', 404))
  server.route('/picture', { kind: 'bytes', body: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]) })
})
afterAll(() => server.stop())

describe('no Chromium to run', () => {
  test('ALTTEXT_CHROMIUM naming no executable is a usage error saying how to get one', async () => {
    const { code, stderr } = await auditRendered(server, ['--render', '--dry-run', `${server.origin}/`], { ALTTEXT_CHROMIUM: '/nonexistent/chromium' })
    expect(code).toBe(2)
    expect(stderr).toContain('ALTTEXT_CHROMIUM is "/nonexistent/chromium", which is not an executable file')
    expect(stderr).toContain('apt install chromium')
    expect(server.hits('/')).toBe(0)
  })

  test('ALTTEXT_CHROMIUM naming a program that is no browser: cannot start it', async () => {
    const { code, stderr } = await auditRendered(server, ['--render', '--dry-run', `${server.origin}/`], { ALTTEXT_CHROMIUM: '/bin/true' })
    expect(code).toBe(2)
    expect(stderr).toContain('cannot start Chromium at /bin/true')
  })

  test('none on the PATH nor in the usual places: the error says how to install or point at one', () => {
    expect(() => findChromium({ PATH: '/nonexistent' }, [])).toThrow(/none was found .*apt install chromium.*ALTTEXT_CHROMIUM/)
    expect(() => findChromium({ ALTTEXT_CHROMIUM: 'chromium' }, [])).toThrow('must be an absolute path')
    expect(findChromium({ PATH: '/nonexistent:/usr/bin' }, [])).toBe(CHROMIUM)
  })
})

describe('usage', () => {
  test('--render with --fix is refused: the live DOM is not the source file', async () => {
    const { code, stderr } = await auditRendered(server, ['--render', '--fix', 'out', `${server.origin}/`])
    expect(code).toBe(2)
    expect(stderr).toContain('--fix cannot write it back')
  })

  test('--render without a page URL is refused', async () => {
    const { code, stderr } = await auditRendered(server, ['--render', '--dry-run', '.'])
    expect(code).toBe(2)
    expect(stderr).toContain('--render loads page URLs')
  })
})

describe('pages that do not settle', () => {
  for (const [path, what] of [
    ['/long-poll', 'a request that never answers'],
    ['/streaming', 'an endless stream'],
  ] as const) {
    test(`${what}: scanned as it is at the cap, with a note`, async () => {
      const render = await renderer(server, { capMs: 2500 })
      try {
        const page = await render.fetchPage(urlSource(`${server.origin}${path}`))
        expect(page.error).toBeNull()
        expect(page.note).toMatch(
          new RegExp(
            `still loading after 2\\.5 s \\(1 request in flight, such as ${server.origin}/${path === '/long-poll' ? 'hang' : 'stream'}\\): scanned as it was then`,
          ),
        )
        expect(scanned(page).images.map((image) => image.src)).toEqual(['/a.png', '/b.png'])
      } finally {
        await render.close()
      }
      // The request left hanging was given up when the page was done.
      const slow = server.slowResponses(path === '/long-poll' ? '/hang' : '/stream')
      expect(await Promise.all(slow.map((response) => response.ended))).toEqual(slow.map(() => 'client-gone'))
    })
  }
})

describe('the run owns the browser', () => {
  test('Ctrl-C twice while a page is loading: the run stops (130) and Chromium is gone', async () => {
    const interrupts = manualInterrupts()
    const before = chromiumChildren()
    const cwd = mkdtempSync(join(tmpdir(), 'alttext-render-'))
    const running = runCli(
      ['audit', '--render', '--dry-run', '--json', '-', `${server.origin}/long-poll`],
      { NODE_EXTRA_CA_CERTS: server.caPath },
      { interrupts, cwd },
    )
    await server.waitForRequest('/hang', server.hits('/hang') + 1, 20_000)
    expect(chromiumChildren()).toBeGreaterThan(before)
    interrupts.fire()
    interrupts.fire()
    const { code, stdout } = await running
    expect(code).toBe(130)
    expect(JSON.parse(stdout).pages[0].error).toBe('not read: the run was stopped')
    expect(chromiumChildren()).toBe(before)
    rmSync(cwd, { recursive: true, force: true })
  })
})

describe('pages that break', () => {
  test('a page that navigates away after loading: the page asked for is scanned, with a note (JSON, HTML, stderr)', async () => {
    const { code, json, stderr, files } = await auditRendered(
      server,
      ['--render', '--dry-run', '--json', '-', '-o', 'report.html', `${server.origin}/away`],
      {},
      ['report.html'],
    )
    expect(code).toBe(0)
    const [page] = json().pages
    expect(page.images.map((image: { src: string }) => image.src)).toEqual(['/a.png'])
    expect(page.note).toContain(`the page tried to go to ${server.origin}/elsewhere; not followed`)
    expect(stderr).toContain(`note: ${server.origin}/away: the page tried to go to`)
    expect(files['report.html']).toContain(`<p class="note">Note: the page tried to go to ${server.origin}/elsewhere; not followed`)
    expect(server.hits('/elsewhere')).toBe(0)
  })

  test('a page that goes elsewhere while it loads is scanned as far as it got, without waiting for the cap', async () => {
    const render = await renderer(server, { capMs: 20_000 })
    try {
      const page = await render.fetchPage(urlSource(`${server.origin}/redirecting`))
      expect(page.error).toBeNull()
      expect(page.note).toBe(`the page tried to go to ${server.origin}/elsewhere; not followed (the page asked for was scanned)`)
      expect(scanned(page).images.map((image) => image.src)).toEqual(['/a.png'])
    } finally {
      await render.close()
    }
    expect(server.hits('/elsewhere')).toBe(0)
  })

  test('a page whose renderer crashes is an error of that page; the next page is read', async () => {
    let crashes = 0
    const render = await renderer(server, {
      async launch(_executable, sinkPort) {
        const { chromiumArgs } = await import('../../src/cli/audit/render/chromium')
        const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: chromiumArgs(sinkPort) })
        const newContext = browser.newContext.bind(browser)
        browser.newContext = async (options) => {
          const context = await newContext(options)
          context.on('page', (page) =>
            page.on('load', () => {
              if (!page.url().endsWith('/crash')) return
              crashes++
              void context.newCDPSession(page).then((session) => session.send('Page.crash').catch(() => {}))
            }),
          )
          return context
        }
        return browser
      },
    })
    try {
      const crashed = await render.fetchPage(urlSource(`${server.origin}/crash`))
      expect({ error: crashed.error, crashes }).toEqual({ error: 'the page crashed in Chromium', crashes: 1 })
      const next = await render.fetchPage(urlSource(`${server.origin}/`))
      expect(next.error).toBeNull()
      expect(scanned(next).images).toHaveLength(1)
    } finally {
      await render.close()
    }
  })

  test('a page of 30 images: at most 6 of its requests are fetched at once (bodies held are bounded)', async () => {
    let open = 0
    let most = 0
    server.route('/slow.png', {
      kind: 'handler',
      fn: async () => {
        open++
        most = Math.max(most, open)
        await Bun.sleep(50)
        open--
        return new Response(PNG, { headers: { 'content-type': 'image/png', 'cache-control': 'no-store' } })
      },
    })
    server.route(
      '/thirty',
      html(`<!doctype html><html lang="en"><body>${Array.from({ length: 30 }, (_, i) => `<img src="/slow.png?${i}">`).join('')}</body></html>`),
    )
    const render = await renderer(server)
    try {
      const page = await render.fetchPage(urlSource(`${server.origin}/thirty`))
      expect(scanned(page).images).toHaveLength(30)
    } finally {
      await render.close()
    }
    expect(server.hits('/slow.png')).toBe(30)
    expect(most).toBeGreaterThan(1)
    expect(most).toBeLessThanOrEqual(6)
  })

  test('100,000 images inserted by a script are all reported', async () => {
    const { code, json } = await auditRendered(server, ['--render', '--dry-run', '--json', 'audit.json', '--json', '-', `${server.origin}/many`])
    expect(code).toBe(0)
    const [page] = json().pages
    expect(page.error).toBeNull()
    expect(page.images).toHaveLength(100_000)
    expect(json().totals.missing).toBe(100_000)
  }, 60_000)

  test('a page that is missing or no HTML is an error of that page; the audit goes on', async () => {
    const { code, json } = await auditRendered(server, [
      '--render',
      '--dry-run',
      '--json',
      '-',
      `${server.origin}/missing-page`,
      `${server.origin}/picture`,
      `${server.origin}/`,
    ])
    expect(code).toBe(1)
    expect(json().pages.map((page: { page: string; error: string | null }) => [page.page.slice(server.origin.length), page.error])).toEqual([
      ['/', null],
      ['/missing-page', 'HTTP 404'],
      ['/picture', 'not an HTML page (image/png)'],
    ])
  })
})
