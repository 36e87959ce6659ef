import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { connect as tlsConnect } from 'node:tls'
import { startHttpsImageServer, type HttpsImageServer } from './https-image-server.ts'
import { makeAnimatedGif, makeJpeg, makePng } from './images.ts'

interface NodeHttpsResult {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** node:https GET; rejects with the TLS error when verification fails. */
function nodeHttpsGet(url: string, ca?: string): Promise<NodeHttpsResult> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('startHttpsImageServer', () => {
  let server: HttpsImageServer
  let withCa: { tls: { ca: string } }
  const png = makePng(32, 24)

  beforeAll(async () => {
    server = await startHttpsImageServer()
    withCa = { tls: { ca: server.caPem } }
    server.route('/img.png', { kind: 'bytes', body: png })
  })

  afterAll(async () => {
    await server.stop()
  })

  describe('TLS', () => {
    test('origin is https on loopback and caPath holds the PEM', () => {
      expect(server.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      expect(readFileSync(server.caPath, 'utf8')).toBe(server.caPem)
      expect(server.caPem).toContain('-----BEGIN CERTIFICATE-----')
    })

    test('certificate names 127.0.0.1, ::1 and localhost', () => {
      const cert = new X509Certificate(server.caPem)
      const altNames = cert.subjectAltName ?? ''
      expect(altNames).toContain('IP Address:127.0.0.1')
      expect(altNames).toMatch(/IP Address:(::1|0:0:0:0:0:0:0:1)\b/)
      expect(altNames).toContain('DNS:localhost')
      expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1')
      expect(cert.checkHost('localhost')).toBe('localhost')
      expect(cert.validToDate.getTime()).toBeGreaterThan(Date.now())
    })

    test('Bun fetch verifies with the CA and fails without it', async () => {
      const res = await fetch(`${server.origin}/img.png`, withCa)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('image/png')
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(png)

      const untrusted = await fetch(`${server.origin}/img.png`).then(
        () => null,
        (error: unknown) => error as { code?: string },
      )
      expect(untrusted?.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|CERT/)
    })

    test('node:https verifies with the CA and fails without it', async () => {
      const ok = await nodeHttpsGet(`${server.origin}/img.png`, server.caPem)
      expect(ok.status).toBe(200)
      expect(new Uint8Array(ok.body)).toEqual(png)

      const failure = await nodeHttpsGet(`${server.origin}/img.png`).then(
        () => null,
        (error: unknown) => error as { code?: string },
      )
      expect(failure?.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|CERT/)
    })

    test('hostname verification passes for the DNS name localhost', async () => {
      const port = Number(new URL(server.origin).port)
      const authorized = await new Promise<boolean>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: server.caPem }, () => {
          resolve(socket.authorized)
          socket.end()
        })
        socket.on('error', reject)
      })
      expect(authorized).toBe(true)
    })

    test('a child process trusts it through NODE_EXTRA_CA_CERTS=caPath', async () => {
      const child = Bun.spawn([process.execPath, '-e', `const r = await fetch(${JSON.stringify(`${server.origin}/img.png`)}); console.log(r.status);`], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: server.caPath },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
      expect({ exitCode, stdout: stdout.trim(), stderr }).toEqual({ exitCode: 0, stdout: '200', stderr: '' })
    })
  })

  describe('routes', () => {
    test('unknown paths are 404 and still counted', async () => {
      const before = server.hits('/nope')
      const res = await fetch(`${server.origin}/nope?x=1`, withCa)
      expect(res.status).toBe(404)
      await res.arrayBuffer()
      expect(server.hits('/nope')).toBe(before + 1)
    })

    test('bytes: status, headers and sniffed content types', async () => {
      server.route('/custom', {
        kind: 'bytes',
        body: new TextEncoder().encode('nope'),
        status: 451,
        contentType: 'text/plain',
        headers: { 'x-test': 'yes' },
      })
      const custom = await fetch(`${server.origin}/custom`, withCa)
      expect(custom.status).toBe(451)
      expect(custom.headers.get('x-test')).toBe('yes')
      expect(custom.headers.get('content-type')).toBe('text/plain')
      expect(await custom.text()).toBe('nope')

      server.route('/photo', { kind: 'bytes', body: makeJpeg(8, 8) })
      server.route('/anim', { kind: 'bytes', body: makeAnimatedGif(8, 8) })
      const photo = await fetch(`${server.origin}/photo`, withCa)
      const anim = await fetch(`${server.origin}/anim`, withCa)
      expect(photo.headers.get('content-type')).toBe('image/jpeg')
      expect(anim.headers.get('content-type')).toBe('image/gif')
      await Promise.all([photo.arrayBuffer(), anim.arrayBuffer()])
    })

    test('redirect is followed by fetch and visible with redirect: manual', async () => {
      expect(server.route('/old', { kind: 'redirect', to: '/img.png', status: 301 })).toBe(`${server.origin}/old`)
      const hitsBefore = server.hits('/img.png')

      const followed = await fetch(`${server.origin}/old`, withCa)
      expect(followed.status).toBe(200)
      expect(followed.redirected).toBe(true)
      expect(followed.url).toBe(`${server.origin}/img.png`)
      expect(new Uint8Array(await followed.arrayBuffer())).toEqual(png)

      const manual = await fetch(`${server.origin}/old`, { ...withCa, redirect: 'manual' })
      expect(manual.status).toBe(301)
      expect(manual.headers.get('location')).toBe('/img.png')

      expect(server.hits('/old')).toBe(2)
      expect(server.hits('/img.png')).toBe(hitsBefore + 1)
    })

    test('handler routes get the Request; a throwing handler is a 500', async () => {
      server.route('/echo', {
        kind: 'handler',
        fn: async (request) => new Response(`${request.method} ${request.headers.get('x-probe')} ${await request.text()}`),
      })
      const echoed = await fetch(`${server.origin}/echo`, {
        ...withCa,
        method: 'POST',
        headers: { 'x-probe': 'p1' },
        body: 'payload',
      })
      expect(await echoed.text()).toBe('POST p1 payload')

      server.route('/boom', {
        kind: 'handler',
        fn: () => {
          throw new Error('kaput')
        },
      })
      const boom = await fetch(`${server.origin}/boom`, withCa)
      expect(boom.status).toBe(500)
      expect(await boom.text()).toContain('kaput')
    })

    test('waitForRequest resolves on arrival and rejects on timeout', async () => {
      const arrival = server.waitForRequest('/arrive')
      const res = await fetch(`${server.origin}/arrive`, withCa)
      await res.arrayBuffer()
      await arrival
      await server.waitForRequest('/arrive') // already satisfied
      await expect(server.waitForRequest('/arrive', 2, 30)).rejects.toThrow(/1 of 2 requests/)
    })
  })

  describe('slow peers', () => {
    test('drip delivers the whole body in timed chunks, then completes', async () => {
      const body = makePng(16, 16)
      server.route('/drip-all', { kind: 'drip', body, chunkBytes: Math.ceil(body.length / 4), intervalMs: 5 })
      const res = await fetch(`${server.origin}/drip-all`, withCa)
      expect(res.headers.get('content-type')).toBe('image/png')
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(body)
      const [drip] = server.slowResponses('/drip-all')
      expect(await drip?.ended).toBe('completed')
      expect(drip?.bytesSent()).toBe(body.length)
    })

    test('an endless drip ends when the client aborts', async () => {
      server.route('/drip-forever', {
        kind: 'drip',
        body: new Uint8Array(64).fill(0xab),
        chunkBytes: 8,
        intervalMs: 5,
        loop: true,
      })
      const abort = new AbortController()
      const res = await fetch(`${server.origin}/drip-forever`, { ...withCa, signal: abort.signal })
      const reader = res.body?.getReader()
      if (!reader) throw new Error('no body')
      // Read past one full cycle of the body to show it really loops.
      let received = 0
      while (received <= 64) {
        const { value, done } = await reader.read()
        if (done) throw new Error('endless drip ended by itself')
        received += value.length
      }
      abort.abort()
      await expect(reader.read()).rejects.toThrow()

      const [drip] = server.slowResponses('/drip-forever')
      expect(await drip?.ended).toBe('client-gone')
      expect(drip?.bytesSent()).toBeGreaterThan(64)
    })

    test('hang never answers until the client aborts', async () => {
      server.route('/hang', { kind: 'hang' })
      const abort = new AbortController()
      const pending = fetch(`${server.origin}/hang`, { ...withCa, signal: abort.signal }).then(
        () => 'answered',
        (error: unknown) => (error as Error).name,
      )
      await server.waitForRequest('/hang')
      const [hang] = server.slowResponses('/hang')
      expect(hang?.kind).toBe('hang')
      abort.abort()
      expect(await pending).toBe('AbortError')
      expect(await hang?.ended).toBe('client-gone')
    })
  })

  describe('lying Content-Length', () => {
    test('a claim larger than the body reads as a premature end of stream', async () => {
      const body = makePng(8, 8)
      const url = server.route('/short-body', { kind: 'lying-length', body, claimedLength: body.length + 1000 })
      expect(url).toBe(server.url('/short-body'))
      expect(url).not.toBe(`${server.origin}/short-body`) // served by the node:https sidecar

      const res = await fetch(url, withCa)
      expect(res.headers.get('content-length')).toBe(String(body.length + 1000))
      await expect(res.arrayBuffer()).rejects.toThrow()

      const raw = await nodeHttpsGet(url, server.caPem).then(
        () => 'complete',
        (error: unknown) => (error as { code?: string }).code ?? String(error),
      )
      expect(raw).toMatch(/ECONNRESET|ABORTED|PREMATURE/i)
    })

    test('a claim smaller than the body cuts the body at the claim', async () => {
      const body = makePng(8, 8)
      const url = server.route('/long-body', { kind: 'lying-length', body, claimedLength: 10 })
      const res = await fetch(url, withCa)
      expect(res.headers.get('content-length')).toBe('10')
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(body.subarray(0, 10))
    })

    test('the main origin redirects lying routes to the sidecar; hits count where served', async () => {
      const body = new Uint8Array(20).fill(7)
      server.route('/lie-via-origin', { kind: 'lying-length', body, claimedLength: 5 })
      const res = await fetch(`${server.origin}/lie-via-origin`, withCa)
      expect(res.redirected).toBe(true)
      expect(res.url).toBe(server.url('/lie-via-origin'))
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(body.subarray(0, 5))
      expect(server.hits('/lie-via-origin')).toBe(1)
    })
  })
})

describe('stop()', () => {
  test('closes promptly with hanging and dripping connections open, and removes the PEM', async () => {
    const server = await startHttpsImageServer()
    const withCa = { tls: { ca: server.caPem } }
    server.route('/hang', { kind: 'hang' })
    server.route('/drip', { kind: 'drip', body: new Uint8Array(32), chunkBytes: 1, intervalMs: 10, loop: true })

    const hanging = fetch(`${server.origin}/hang`, withCa).then(
      () => 'answered',
      () => 'failed',
    )
    const dripping = await fetch(`${server.origin}/drip`, withCa)
    const dripBody = dripping.arrayBuffer().then(
      () => 'finished',
      () => 'failed',
    )
    const waitingForever = server.waitForRequest('/never').then(
      () => 'resolved',
      (error: unknown) => String(error),
    )
    await server.waitForRequest('/hang')

    const started = performance.now()
    await server.stop()
    expect(performance.now() - started).toBeLessThan(1000)

    expect(await hanging).toBe('failed')
    expect(await dripBody).toBe('failed')
    expect(await server.slowResponses('/hang')[0]?.ended).toBe('server-stopped')
    expect(await server.slowResponses('/drip')[0]?.ended).toBe('server-stopped')
    expect(await waitingForever).toMatch(/stopped/)
    expect(existsSync(server.caPath)).toBe(false)
    await server.stop() // idempotent
  })
})
