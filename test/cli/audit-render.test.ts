// test lane: browser
// alttext audit --render: a page's scripts insert images (after load, after a fetch), put them in open and
// closed shadow roots, and give role=img elements their backgrounds from a style sheet; the rendered
// audit finds them all, where reading the page's source finds none of them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { scanHtml } from '../../src/cli/audit/scan'
import type { HttpsImageServer } from '../support/https-image-server'
import { auditRendered, html, site } from './audit-render-support'

const PAGE = `<!doctype html><html lang="en"><head><title>Kites</title>
<style>.map { background-image: url(/bg.png); width: 10px; height: 10px; display: block }</style></head>
<body><h1>Kites</h1><img src="/a.png" alt="A red kite over the beach">
<div id="open"></div><div id="closed"></div>
<div id="declared"><template shadowrootmode="closed"><img src="/declared.png"></template></div>
<span role="img" class="map" aria-label="Map of the beach"></span>
<span role="img" class="map" id="unnamed"></span>
<script>
  document.getElementById('open').attachShadow({ mode: 'open' }).innerHTML = '<p>Open words</p><img src="/open.png">'
  document.getElementById('closed').attachShadow({ mode: 'closed' }).innerHTML = '<img src="/closed.png" alt="">'
  addEventListener('load', () => {
    const img = document.createElement('img')
    img.src = '/after-load.png'
    document.body.append(img)
    fetch('/one.json').then((r) => r.json()).then((one) => fetch(one.next)).then((r) => r.json()).then((two) => {
      const late = document.createElement('img')
      late.src = two.src
      late.alt = 'IMG_2041.JPG'
      document.body.append(late)
    })
  })
</script></body></html>`

let server: HttpsImageServer

beforeAll(async () => {
  server = await site()
  server.route('/', html(PAGE))
  server.route('/one.json', { kind: 'bytes', body: new TextEncoder().encode('{"next":"/two.json"}'), contentType: 'application/json' })
  // The second answer comes late: the network is busy until then, so the settle waits for it.
  server.route('/two.json', {
    kind: 'handler',
    fn: async () => {
      await Bun.sleep(300)
      return Response.json({ src: '/late.png' })
    },
  })
  server.route(
    '/links',
    html(
      '<!doctype html><html lang="en"><body><div id="nav"></div><script>document.getElementById("nav").innerHTML = \'<a href="/">home</a>\'</script></body></html>',
    ),
  )
})
afterAll(() => server.stop())

describe('alttext audit --render', () => {
  test('finds images inserted by scripts, in shadow roots (open and closed) and CSS backgrounds of role=img', async () => {
    const { code, stdout, stderr, json } = await auditRendered(server, ['--render', '--dry-run', '--json', '-', `${server.origin}/`])
    expect({ code, stderr: stderr.includes('rendered 1 page in Chromium') }).toEqual({ code: 0, stderr: true })
    const [page] = json().pages
    const found = page.images.map((image: { kind: string; src: string; status: string }) => [image.kind, image.src, image.status])
    expect(found).toEqual([
      ['img', '/a.png', 'ok'],
      ['img', '/open.png', 'missing'],
      ['img', '/closed.png', 'decorative'],
      ['img', '/declared.png', 'missing'],
      ['role-img', `${server.origin}/bg.png`, 'ok'],
      ['role-img', `${server.origin}/bg.png`, 'missing'],
      ['img', '/after-load.png', 'missing'],
      ['img', '/late.png', 'poor'],
    ])
    expect(page.note).toBeUndefined()
    expect(stdout).not.toContain('alttext-test-marker')
    expect(server.hits('/two.json')).toBeGreaterThanOrEqual(1)
  })

  test("the page's source alone holds only two of those images", () => {
    const scan = scanHtml(new TextEncoder().encode(PAGE), 'marker-x')
    expect(scan.images.map((image) => image.src)).toEqual(['/a.png', '/declared.png'])
  })

  test('--crawl follows the links a script inserted', async () => {
    const { code, json } = await auditRendered(server, ['--render', '--dry-run', '--crawl', '1', '--json', '-', `${server.origin}/links`])
    expect(code).toBe(0)
    expect(json().pages.map((page: { page: string }) => page.page)).toEqual([`${server.origin}/links`, `${server.origin}/`])
  })

  test('--help documents --render', async () => {
    const { code, stdout } = await auditRendered(server, ['--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('--render')
    expect(stdout).toContain('ALTTEXT_CHROMIUM')
  })
})

describe('scanner over serialised shadow roots', () => {
  test("a declarative shadow root's text is page text; a plain template's is not", () => {
    const bytes = new TextEncoder().encode(
      '<p>before</p><div><template shadowrootmode="open"><h2>Inside</h2><img src="x.png"></template></div><template><p>inert</p></template><p>after</p>',
    )
    const scan = scanHtml(bytes, 'marker-x')
    expect(scan.images.map((image) => image.src)).toEqual(['x.png'])
    expect(scan.text.replace(/\s+/g, ' ').trim()).toBe('before Inside after')
  })
})
