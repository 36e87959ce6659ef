// A real HTTPS origin on loopback with a certificate generated at test time, for
// exercising the service's image fetcher against TLS, redirects, slow and broken peers.
//
// Bun.serve handles every route except 'lying-length': Bun always rewrites
// Content-Length to the true body size (and drops it for streamed bodies), so a lie
// cannot be told through it. Those routes are served by a sidecar `node:https` listener
// (same certificate, also on 127.0.0.1), which writes the claimed header verbatim; the
// main origin answers them with a 307 to the sidecar. Use `url(path)` to get the
// direct address of any route.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer as createNodeHttpsServer, type Server as NodeHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generate } from 'selfsigned'

export type RedirectStatus = 301 | 302 | 303 | 307 | 308

export type RouteSpec =
  | {
      kind: 'bytes'
      body: Uint8Array
      /** Defaults to a type sniffed from magic bytes (png/jpeg/gif/webp), else application/octet-stream. */
      contentType?: string
      status?: number
      headers?: Record<string, string>
    }
  | { kind: 'redirect'; to: string; status?: RedirectStatus }
  | {
      kind: 'drip'
      body: Uint8Array
      chunkBytes: number
      intervalMs: number
      contentType?: string
      /** Start over at the end of `body` instead of finishing: an endless trickle. */
      loop?: boolean
    }
  /** Accepts the request and never sends headers, until the client aborts or stop(). */
  | { kind: 'hang' }
  /**
   * Sends `Content-Length: claimedLength` with `body`, then closes the connection, so a
   * larger claim reads as a premature EOF and a smaller one as trailing garbage.
   * Served by the node:https sidecar (see the file comment).
   */
  | { kind: 'lying-length'; body: Uint8Array; claimedLength: number; contentType?: string }
  | { kind: 'handler'; fn: (request: Request) => Response | Promise<Response> }

export type SlowResponseEnd = 'completed' | 'client-gone' | 'server-stopped'

/** A drip or hang response in flight; lets tests await the server noticing a disconnect. */
export interface SlowResponse {
  kind: 'drip' | 'hang'
  path: string
  /** Body bytes handed to the connection so far (always 0 for 'hang'). */
  bytesSent(): number
  /** Settles once the response is over, saying why. Never rejects. */
  ended: Promise<SlowResponseEnd>
}

export interface HttpsImageServer {
  /** https://127.0.0.1:PORT */
  origin: string
  /** PEM file holding the self-signed certificate (for NODE_EXTRA_CA_CERTS or a `ca` option). */
  caPath: string
  caPem: string
  /** Registers (or replaces) a route; returns the absolute URL that serves it directly. */
  route(path: string, spec: RouteSpec): string
  /** Absolute URL serving `path` directly (the sidecar's for 'lying-length' routes). */
  url(path: string): string
  /** Requests answered for `path` (query ignored), including 404s; redirect hops to the sidecar are not counted. */
  hits(path: string): number
  /**
   * Resolves once `hits(path) >= count` (immediately if already so); rejects after
   * `timeoutMs` or on stop(). Lets tests await "the request reached the server".
   */
  waitForRequest(path: string, count?: number, timeoutMs?: number): Promise<void>
  /** Drip/hang responses started for `path`, oldest first. */
  slowResponses(path: string): SlowResponse[]
  stop(): Promise<void>
}

const MAGIC_CONTENT_TYPES: ReadonlyArray<{ type: string; matches: (bytes: Uint8Array) => boolean }> = [
  { type: 'image/png', matches: (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 },
  { type: 'image/jpeg', matches: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', matches: (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38 },
  {
    type: 'image/webp',
    matches: (b) => b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50,
  },
]

function sniffContentType(bytes: Uint8Array): string {
  return MAGIC_CONTENT_TYPES.find((entry) => entry.matches(bytes))?.type ?? 'application/octet-stream'
}

function normalisePath(path: string): string {
  if (!path.startsWith('/')) throw new Error(`route paths start with "/", got ${JSON.stringify(path)}`)
  return path
}

interface TrackedSlowResponse extends SlowResponse {
  /** Ends the response now (idempotent); the first reason given wins. */
  finish(reason: SlowResponseEnd): void
}

interface HitWaiter {
  path: string
  count: number
  resolve: () => void
  reject: (error: Error) => void
  timer: ReturnType<typeof setTimeout>
}

function validateRoute(spec: RouteSpec): void {
  if (spec.kind === 'drip' && (!(spec.chunkBytes >= 1) || !(spec.intervalMs >= 0) || spec.body.length === 0)) {
    throw new RangeError('drip needs chunkBytes >= 1, intervalMs >= 0 and a non-empty body')
  }
  if (spec.kind === 'lying-length' && !(Number.isInteger(spec.claimedLength) && spec.claimedLength >= 0)) {
    throw new RangeError('lying-length needs a non-negative integer claimedLength')
  }
}

async function generateCertificate(): Promise<{ certPem: string; keyPem: string }> {
  const notBeforeDate = new Date(Date.now() - 60 * 60 * 1000) // tolerate small clock skew
  const notAfterDate = new Date(Date.now() + 24 * 60 * 60 * 1000)
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  })
  return { certPem: pems.cert, keyPem: pems.private }
}

export async function startHttpsImageServer(): Promise<HttpsImageServer> {
  const { certPem, keyPem } = await generateCertificate()
  const certDir = await mkdtemp(join(tmpdir(), 'alttext-https-'))
  const caPath = join(certDir, 'ca.pem')
  await writeFile(caPath, certPem)

  const routes = new Map<string, RouteSpec>()
  const hitCounts = new Map<string, number>()
  const slowByPath = new Map<string, TrackedSlowResponse[]>()
  const liveSlow = new Set<TrackedSlowResponse>()
  let stopping = false

  let hitWaiters: HitWaiter[] = []

  const countHit = (path: string): void => {
    const hits = (hitCounts.get(path) ?? 0) + 1
    hitCounts.set(path, hits)
    hitWaiters = hitWaiters.filter((waiter) => {
      if (waiter.path !== path || hits < waiter.count) return true
      clearTimeout(waiter.timer)
      waiter.resolve()
      return false
    })
  }

  function trackSlow(kind: 'drip' | 'hang', path: string, onFinish: (reason: SlowResponseEnd) => void, bytesSent: () => number): TrackedSlowResponse {
    let settle!: (reason: SlowResponseEnd) => void
    const ended = new Promise<SlowResponseEnd>((resolve) => {
      settle = resolve
    })
    let finished = false
    const tracked: TrackedSlowResponse = {
      kind,
      path,
      bytesSent,
      ended,
      finish(reason) {
        if (finished) return
        finished = true
        liveSlow.delete(tracked)
        onFinish(reason)
        settle(reason)
      },
    }
    liveSlow.add(tracked)
    const list = slowByPath.get(path) ?? []
    list.push(tracked)
    slowByPath.set(path, list)
    return tracked
  }

  function dripResponse(request: Request, path: string, spec: Extract<RouteSpec, { kind: 'drip' }>): Response {
    let offset = 0
    let sent = 0
    let finished = false
    let timer: ReturnType<typeof setInterval> | undefined
    let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined

    const tracked = trackSlow(
      'drip',
      path,
      (reason) => {
        finished = true
        clearInterval(timer)
        request.signal.removeEventListener('abort', onAbort)
        if (reason === 'server-stopped') {
          try {
            controllerRef?.error(new Error('HTTPS test server stopped'))
          } catch {
            // stream already closed or cancelled
          }
        }
      },
      () => sent,
    )
    const onAbort = (): void => tracked.finish('client-gone')
    request.signal.addEventListener('abort', onAbort)

    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controllerRef = controller
        const pushChunk = (): void => {
          const chunk = spec.body.slice(offset, Math.min(offset + spec.chunkBytes, spec.body.length))
          offset += chunk.length
          sent += chunk.length
          controller.enqueue(chunk)
          if (offset >= spec.body.length) {
            if (spec.loop) {
              offset = 0
            } else {
              tracked.finish('completed')
              controller.close()
            }
          }
        }
        // First chunk right away so headers go out; the rest trickle.
        pushChunk()
        if (!finished) timer = setInterval(pushChunk, spec.intervalMs)
      },
      cancel() {
        tracked.finish('client-gone')
      },
    })
    return new Response(body, {
      headers: { 'content-type': spec.contentType ?? sniffContentType(spec.body) },
    })
  }

  function hangResponse(request: Request, path: string): Promise<Response> {
    return new Promise<Response>((resolve) => {
      const onAbort = (): void => tracked.finish('client-gone')
      const tracked = trackSlow(
        'hang',
        path,
        () => {
          request.signal.removeEventListener('abort', onAbort)
          // Nobody reads this: the client left, or stop(true) is tearing the socket down.
          resolve(new Response(null, { status: 503 }))
        },
        () => 0,
      )
      if (request.signal.aborted) tracked.finish('client-gone')
      else request.signal.addEventListener('abort', onAbort)
    })
  }

  // Sidecar for 'lying-length' only: node:https leaves a caller-set Content-Length alone.
  const sidecar: NodeHttpsServer = createNodeHttpsServer({ cert: certPem, key: keyPem }, (request, response) => {
    const path = new URL(request.url ?? '/', 'https://127.0.0.1').pathname
    countHit(path)
    const spec = routes.get(path)
    if (spec?.kind !== 'lying-length') {
      response.writeHead(404, { 'content-type': 'text/plain', connection: 'close' })
      response.end('not found')
      return
    }
    response.writeHead(200, {
      'content-type': spec.contentType ?? sniffContentType(spec.body),
      'content-length': String(spec.claimedLength),
      connection: 'close',
    })
    // Closing after the body makes a too-large claim a premature EOF rather than an
    // endless wait, and leaves surplus bytes of a too-small claim dangling.
    response.write(spec.body, () => response.socket?.end())
  })
  await new Promise<void>((resolve, reject) => {
    sidecar.once('error', reject)
    sidecar.listen(0, '127.0.0.1', () => {
      sidecar.off('error', reject)
      resolve()
    })
  })
  const sidecarOrigin = `https://127.0.0.1:${(sidecar.address() as AddressInfo).port}`
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls: { cert: certPem, key: keyPem },
    async fetch(request) {
      const path = new URL(request.url).pathname
      const spec = routes.get(path)
      if (spec?.kind === 'lying-length') {
        return new Response(null, { status: 307, headers: { location: `${sidecarOrigin}${path}` } })
      }
      countHit(path)
      if (!spec) return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } })
      switch (spec.kind) {
        case 'bytes':
          return new Response(spec.body, {
            status: spec.status ?? 200,
            headers: { 'content-type': spec.contentType ?? sniffContentType(spec.body), ...spec.headers },
          })
        case 'redirect':
          return new Response(null, { status: spec.status ?? 302, headers: { location: spec.to } })
        case 'drip':
          return dripResponse(request, path, spec)
        case 'hang':
          return hangResponse(request, path)
        case 'handler':
          try {
            return await spec.fn(request)
          } catch (error) {
            return new Response(`handler threw: ${String(error)}`, { status: 500 })
          }
      }
    },
  })

  const origin = `https://127.0.0.1:${server.port}`

  const url = (path: string): string => `${routes.get(path)?.kind === 'lying-length' ? sidecarOrigin : origin}${normalisePath(path)}`

  return {
    origin,
    caPath,
    caPem: certPem,
    route(path, spec) {
      validateRoute(spec)
      routes.set(normalisePath(path), spec)
      return url(path)
    },
    url,
    hits: (path) => hitCounts.get(path) ?? 0,
    waitForRequest(path, count = 1, timeoutMs = 5000) {
      if ((hitCounts.get(path) ?? 0) >= count) return Promise.resolve()
      if (stopping) return Promise.reject(new Error('HTTPS test server is stopped'))
      return new Promise<void>((resolve, reject) => {
        const waiter: HitWaiter = {
          path,
          count,
          resolve,
          reject,
          timer: setTimeout(() => {
            hitWaiters = hitWaiters.filter((other) => other !== waiter)
            reject(new Error(`${path} got ${hitCounts.get(path) ?? 0} of ${count} requests within ${timeoutMs} ms`))
          }, timeoutMs),
        }
        hitWaiters.push(waiter)
      })
    },
    slowResponses: (path) => [...(slowByPath.get(path) ?? [])],
    async stop() {
      if (stopping) return
      stopping = true
      for (const waiter of hitWaiters) {
        clearTimeout(waiter.timer)
        waiter.reject(new Error('HTTPS test server stopped while waiting for a request'))
      }
      hitWaiters = []
      for (const tracked of [...liveSlow]) tracked.finish('server-stopped')
      sidecar.closeAllConnections()
      await Promise.all([server.stop(true), new Promise<void>((resolve) => sidecar.close(() => resolve()))])
      await rm(certDir, { recursive: true, force: true })
    },
  }
}
