// test lane: browser
// alttext audit --render and what a page may reach: every request goes through the gate before anything is
// sent (a refused loopback port sees no connection at all, whatever way the page tries: image, style,
// fetch, XHR, frame, preconnect, beacon, WebSocket, a redirect), the gate's headers go only where it says,
// no file is read, no download is kept, no service worker runs, and certificates are checked.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RequestGate } from '../../src/cli/audit/render'
import { gatedFetch, httpOnlyGate } from '../../src/cli/audit/render/gate'
import type { HttpsImageServer } from '../support/https-image-server'
import { auditRendered, CHROMIUM, html, PNG, renderer, scanned, site, urlSource } from './audit-render-support'

/** A plain TCP listener on loopback: it counts connections, so even one that sends no request is seen. */
function refusedPort() {
  let connections = 0
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        connections++
        socket.end()
      },
      data() {},
    },
  })
  return { port: listener.port, connections: () => connections, stop: () => listener.stop(true) }
}

let server: HttpsImageServer
let other: HttpsImageServer
let refused: ReturnType<typeof refusedPort>
let secretDir: string
const SECRET = `secret-${crypto.randomUUID()}`
const TOKEN = `Bearer token-${crypto.randomUUID()}`

/** Refuses the refused port; gives the audited origin (only) its header. */
const gate = (): RequestGate => ({
  check: async (url) => (url.port === String(refused.port) ? 'a test address the gate refuses' : httpOnlyGate.check(url)),
  headersFor: (url): Record<string, string> => (url.origin === server.origin ? { authorization: TOKEN } : {}),
})

const seenHeaders: { path: string; authorization: string | null }[] = []

beforeAll(async () => {
  server = await site()
  other = await site()
  refused = refusedPort()
  secretDir = mkdtempSync(join(tmpdir(), 'alttext-render-secret-'))
  writeFileSync(join(secretDir, 'secret.txt'), SECRET)
  writeFileSync(join(secretDir, 'both.pem'), `${server.caPem}\n${other.caPem}`)
  const bad = `http://127.0.0.1:${refused.port}`
  server.route(
    '/leaky',
    html(`<!doctype html><html lang="en"><head>
      <link rel="preconnect" href="${bad}"><link rel="dns-prefetch" href="${bad}"><link rel="prefetch" href="${bad}/prefetch">
      <link rel="stylesheet" href="${bad}/style.css"><style>body { background: url(${bad}/bg.png) }</style></head>
      <body><img src="${bad}/direct.png"><img src="/to-refused"><img src="/a.png"><iframe src="${bad}/frame"></iframe>
      <a href="/" ping="${bad}/ping" id="link">home</a><video src="${bad}/v.mp4" autoplay muted></video>
      <script>
        fetch('${bad}/fetch').catch(() => {})
        fetch('/to-refused').catch(() => {})
        const xhr = new XMLHttpRequest(); xhr.open('GET', '${bad}/xhr'); xhr.send()
        navigator.sendBeacon('${bad}/beacon', 'x')
        try { new WebSocket('ws://127.0.0.1:${refused.port}/ws') } catch {}
        try { new EventSource('${bad}/events') } catch {}
        try { new Worker('${bad}/worker.js') } catch {}
        try { const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${refused.port}' }] }); pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)) } catch {}
        addEventListener('load', () => { document.getElementById('link').click(); const img = document.createElement('img'); img.src = '/b.png'; document.body.append(img) })
      </script></body></html>`),
  )
  server.route('/to-refused', { kind: 'redirect', to: `${bad}/redirected.png` })
  server.route('/start-refused', { kind: 'redirect', to: `${bad}/page` })
  for (const target of [server, other])
    target.route('/h.png', {
      kind: 'handler',
      fn: (request) => {
        seenHeaders.push({
          path: `${target === server ? 'audited' : 'other'}${new URL(request.url).pathname}`,
          authorization: request.headers.get('authorization'),
        })
        return new Response(PNG, { headers: { 'content-type': 'image/png' } })
      },
    })
  server.route('/to-other', { kind: 'redirect', to: `${other.origin}/h.png` })
  server.route('/headers', html(`<!doctype html><html lang="en"><body><img src="/h.png"><img src="${other.origin}/h.png"><img src="/to-other"></body></html>`))
  server.route(
    '/files',
    html(`<!doctype html><html lang="en"><body><img src="file://${secretDir}/secret.txt"><iframe src="file://${secretDir}/secret.txt"></iframe><p id="out">waiting</p>
      <script>fetch('file://${secretDir}/secret.txt').then((r) => r.text()).then((t) => { out.textContent = t }, () => { out.textContent = 'blocked' })</script></body></html>`),
  )
  server.route('/file.bin', {
    kind: 'bytes',
    body: new TextEncoder().encode(SECRET),
    contentType: 'application/octet-stream',
    headers: { 'content-disposition': 'attachment; filename="x.bin"' },
  })
  server.route(
    '/download',
    html(`<!doctype html><html lang="en"><body><a id="d" href="/file.bin" download>file</a><iframe src="/file.bin"></iframe><p id="sw">waiting</p>
      <script>
        document.getElementById('d').click()
        if (!('serviceWorker' in navigator)) sw.textContent = 'no service workers'
        else navigator.serviceWorker.register('/sw.js').then(() => { sw.textContent = 'registered' }, () => { sw.textContent = 'refused' })
      </script></body></html>`),
  )
  server.route('/sw.js', { kind: 'bytes', body: new TextEncoder().encode('self.addEventListener("fetch", () => {})'), contentType: 'text/javascript' })
})
afterAll(async () => {
  refused.stop()
  rmSync(secretDir, { recursive: true, force: true })
  await Promise.all([server.stop(), other.stop()])
})

describe('the gate', () => {
  test('every way a page reaches a refused address is stopped before a connection is made', async () => {
    const render = await renderer(server, { gate: gate() })
    let page: Awaited<ReturnType<typeof render.fetchPage>>
    try {
      page = await render.fetchPage(urlSource(`${server.origin}/leaky`))
      expect(render.stats().refused).toBeGreaterThanOrEqual(8)
      // What Chromium opens by itself (the preconnect, WebRTC) reached the sink instead.
      expect(render.stats().strayConnections).toBeGreaterThan(0)
    } finally {
      await render.close()
    }
    expect(page.error).toBeNull()
    expect(refused.connections()).toBe(0)
    expect(page.note).not.toContain('after 30 s')
    expect(page.note).toMatch(/\d+ requests refused and not sent, such as http:\/\/127\.0\.0\.1:\d+\//)
    // The allowed requests went through: the images, and the script's image after load.
    expect(server.hits('/a.png')).toBeGreaterThanOrEqual(1)
    expect(scanned(page).images.map((image) => image.src)).toContain('/b.png')
  })

  test('a page URL that redirects to a refused address is refused before any connection', async () => {
    const render = await renderer(server, { gate: gate() })
    try {
      const page = await render.fetchPage(urlSource(`${server.origin}/start-refused`))
      expect(page.error).toBe(`refused http://127.0.0.1:${refused.port}: a test address the gate refuses`)
    } finally {
      await render.close()
    }
    expect(refused.connections()).toBe(0)
  })

  test("the gate's headers go only to the addresses it gives them for, redirect hops included", async () => {
    seenHeaders.length = 0
    const render = await renderer(server, { gate: gate(), env: { NODE_EXTRA_CA_CERTS: join(secretDir, 'both.pem'), ALTTEXT_CHROMIUM: CHROMIUM } })
    try {
      const page = await render.fetchPage(urlSource(`${server.origin}/headers`))
      expect(page.error).toBeNull()
      expect(JSON.stringify(page)).not.toContain(TOKEN)
    } finally {
      await render.close()
    }
    expect(seenHeaders.sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { path: 'audited/h.png', authorization: TOKEN },
      { path: 'other/h.png', authorization: null },
      { path: 'other/h.png', authorization: null },
    ])
  })

  test('gatedFetch asks the gate at every hop, and sends nothing to a refused one', async () => {
    const asked: string[] = []
    const answer = await gatedFetch(
      new URL(`${server.origin}/to-refused`),
      { method: 'GET', headers: {} },
      {
        gate: {
          async check(url) {
            asked.push(url.href)
            return url.port === String(refused.port) ? 'no' : null
          },
          headersFor: () => ({}),
        },
        signal: new AbortController().signal,
        maxBytes: 1024,
        ca: [server.caPem, ...(await import('node:tls')).rootCertificates],
      },
    )
    expect(answer).toEqual({ ok: false, refused: true, error: `refused http://127.0.0.1:${refused.port}: no` })
    expect(asked).toEqual([`${server.origin}/to-refused`, `http://127.0.0.1:${refused.port}/redirected.png`])
    expect(refused.connections()).toBe(0)
  })
})

describe('what a rendered page cannot do', () => {
  test('no file is read: file: images, frames and fetches get nothing', async () => {
    const render = await renderer(server)
    try {
      const page = await render.fetchPage(urlSource(`${server.origin}/files`))
      const text = new TextDecoder().decode(page.bytes ?? new Uint8Array())
      expect(text).toContain('<p id="out">blocked</p>')
      expect(text).not.toContain(SECRET)
    } finally {
      await render.close()
    }
  })

  test('downloads are not kept and service workers do not register', async () => {
    const render = await renderer(server)
    try {
      const page = await render.fetchPage(urlSource(`${server.origin}/download`))
      expect(page.error).toBeNull()
      const text = new TextDecoder().decode(page.bytes ?? new Uint8Array())
      // Playwright's block makes register() a no-op: the script ran, and no worker script was fetched.
      expect(text).toMatch(/<p id="sw">(registered|refused|no service workers)<\/p>/)
      expect(text).not.toContain(SECRET)
    } finally {
      await render.close()
    }
    expect(server.hits('/sw.js')).toBe(0)
  })

  test('certificates are checked: without the test CA the HTTPS page is not read', async () => {
    server.route('/strict', html('<!doctype html><img src="/a.png">'))
    const { code, json } = await auditRendered(server, ['--render', '--dry-run', '--json', '-', `${server.origin}/strict`], { NODE_EXTRA_CA_CERTS: '' })
    expect(code).toBe(1)
    expect(json().pages[0].error).toMatch(/^cannot fetch https:\/\/127\.0\.0\.1:\d+: .*(certificate|self.signed)/i)
    expect(server.hits('/strict')).toBe(0)
  })
})
