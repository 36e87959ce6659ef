// Refusals for images that are unusable for reasons other than where they live: status codes,
// wrong content, size, pixel count, truncation, slow or silent hosts, DNS failures.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { blake3 } from '@napi-rs/blake-hash'
import { createServer, type Server, type Socket } from 'node:net'
import { createImageIntake, DEFAULT_MAX_PIXELS, type FetchedImage } from '../../src/intake/index.ts'
import type { ImageIntake, ImageIntakeOptions } from '../../src/intake/index.ts'
import { inspectImage } from '../../src/intake/image-format.ts'
import { ApiError } from '../../src/shared/errors.ts'
import { startHttpsImageServer, type HttpsImageServer, type RouteSpec } from '../support/https-image-server.ts'
import { makeAnimatedGif, makeJpeg, makePng, makePngHeaderOnly, makeWebp, truncate } from '../support/images.ts'
import { expectRefusal, fakeResolver, loopbackIntakeFor } from './fixtures.ts'

let server: HttpsImageServer

beforeAll(async () => {
  server = await startHttpsImageServer()
})
afterAll(async () => {
  await server.stop()
})

const TEN_MB = 10 * 1024 * 1024
const noDeadline = (): AbortSignal => new AbortController().signal

const loopbackIntake = (extra: Partial<ImageIntakeOptions> = {}) => loopbackIntakeFor(server, extra)

/** A PNG streamed without Content-Length to an intake allowed one byte less: refused by the count. */
async function expectOneByteOverRefused(intake: (extra: Partial<ImageIntakeOptions>) => ImageIntake, path: string): Promise<void> {
  const body = makePng(40, 40)
  const url = server.route(path, {
    kind: 'handler',
    fn: () =>
      new Response(
        new ReadableStream({
          start: (controller) => {
            controller.enqueue(body)
            controller.close()
          },
        }),
      ),
  })
  await expectRefusal(intake({ maxBytes: body.length - 1 }).fetch(url, noDeadline()), new RegExp(`over the ${body.length - 1} bytes limit`))
}

const endlessDrip = (): RouteSpec => ({ kind: 'drip', body: makePng(200, 200), chunkBytes: 16, intervalMs: 20, loop: true })

/** Aborts a download once the host has the request: refused as past the deadline, and the connection torn down, not left open. */
async function expectAbortEndsConnection(intake: ImageIntake, path: string, route: RouteSpec): Promise<void> {
  const url = server.route(path, route)
  const controller = new AbortController()
  const fetching = intake.fetch(url, controller.signal)
  await server.waitForRequest(path)
  controller.abort()
  await expectRefusal(fetching, /^the image did not arrive before the deadline/)
  expect(await server.slowResponses(path)[0]!.ended).toBe('client-gone')
}

describe('the image host answers other than 2xx', () => {
  test.each([404, 500, 403, 204 + 96, 304])('%i is refused', async (status) => {
    const url = server.route(`/error/status-${status}`, { kind: 'bytes', body: makePng(5, 5), status })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), new RegExp(`^the image host answered ${status}$`))
  })

  test('an unknown path (the server says 404)', async () => {
    await expectRefusal(loopbackIntake().fetch(server.url('/error/nothing-here.png'), noDeadline()), /^the image host answered 404$/)
  })

  test('a redirect without a Location header', async () => {
    const url = server.route('/error/no-location', { kind: 'handler', fn: () => new Response(null, { status: 302 }) })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), /answered 302 without a Location header/)
  })
})

describe('the bytes are not a supported image, whatever the Content-Type says', () => {
  const cases: Array<[string, string, string]> = [
    ['xml', '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"/>', 'xml'],
    ['html', '<!doctype html><html><body>login page</body></html>', 'html'],
    ['text', 'Access Denied', 'text'],
  ]
  test.each(cases)('%s served as image/png', async (name, body, found) => {
    const url = server.route(`/error/${name}`, { kind: 'bytes', body: new TextEncoder().encode(body), contentType: 'image/png' })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), new RegExp(`^the image is not JPEG, PNG, GIF, WebP, AVIF or SVG \\(found: ${found}\\)$`))
  })

  test('a BMP served as image/jpeg', async () => {
    const bmp = new Uint8Array([0x42, 0x4d, 0x3a, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 0x28, 0, 0, 0])
    const url = server.route('/error/bmp', { kind: 'bytes', body: bmp, contentType: 'image/jpeg' })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), /\(found: bmp\)/)
  })

  test('an empty body', async () => {
    const url = server.route('/error/empty', { kind: 'bytes', body: new Uint8Array(0), contentType: 'image/png' })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), /^the image is empty/)
  })
})

describe('size limits', () => {
  test('over 10 MB with an honest Content-Length is refused', async () => {
    const url = server.route('/error/big-honest', { kind: 'bytes', body: new Uint8Array(TEN_MB + 1) })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), /^the image is over the 10 MB limit$/)
  })

  test('over 10 MB streamed without Content-Length is refused by counting the bytes read', async () => {
    let chunksServed = 0
    const url = server.route('/error/big-stream', {
      kind: 'handler',
      // An endless stream: only the client's count can stop it.
      fn: () =>
        new Response(
          new ReadableStream<Uint8Array>({
            pull(controller) {
              chunksServed++
              controller.enqueue(new Uint8Array(256 * 1024))
            },
          }),
          { headers: { 'content-type': 'image/png' } },
        ),
    })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), /^the image is over the 10 MB limit$/)
    expect(chunksServed).toBeGreaterThanOrEqual(40) // it did read up to the limit
  })

  test('a small maxBytes counts exactly: one byte over is refused', async () => {
    await expectOneByteOverRefused(loopbackIntake, '/error/one-over')
  })

  test('a Content-Length that claims less than is sent does not let more through', async () => {
    const url = server.route('/error/claims-less', { kind: 'lying-length', body: new Uint8Array(TEN_MB + 1024), claimedLength: 1000 })
    // Whatever is read is at most the claim, and 1000 zero bytes are no image.
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), /not JPEG, PNG, GIF, WebP, AVIF or SVG|truncated|malformed HTTP response/)
  })

  test('a Content-Length that claims more than is sent reads as truncated', async () => {
    const png = makePng(30, 30)
    const url = server.route('/error/claims-more', { kind: 'lying-length', body: png, claimedLength: png.length + 5000 })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), /^the image is truncated/)
  })

  test('the 40000×40000 header-only PNG is refused by its pixel count', async () => {
    const bomb = makePngHeaderOnly(40000, 40000)
    expect(bomb.length).toBeLessThan(300)
    const url = server.route('/error/bomb.png', { kind: 'bytes', body: bomb })
    await expectRefusal(
      loopbackIntake().fetch(url, noDeadline()),
      new RegExp(`^the image is 40000×40000 pixels, over the limit of ${DEFAULT_MAX_PIXELS} pixels$`),
    )
  })

  test('the pixel cap is configurable and inclusive', async () => {
    const url = server.route('/error/cap.png', { kind: 'bytes', body: makePng(100, 100) })
    expect((await loopbackIntake({ maxPixels: 10_000 }).fetch(url, noDeadline())).width).toBe(100)
    await expectRefusal(loopbackIntake({ maxPixels: 9_999 }).fetch(url, noDeadline()), /100×100 pixels, over the limit of 9999 pixels/)
  })
})

describe('truncated images are refused', () => {
  test.each([
    ['jpeg', () => makeJpeg(200, 150)],
    ['png', () => makePng(200, 150)],
    ['gif', () => makeAnimatedGif(60, 40)],
    ['webp', () => makeWebp(200, 150)],
  ] as const)('a %s cut in half', async (format, make) => {
    const url = server.route(`/error/half.${format}`, { kind: 'bytes', body: truncate(make(), 0.5) })
    await expectRefusal(loopbackIntake().fetch(url, noDeadline()), /^the image is truncated or corrupt/)
  })
})

describe('slow and silent hosts end when the signal aborts', () => {
  test('a drip source that never finishes', async () => {
    await expectAbortEndsConnection(loopbackIntake(), '/error/drip', endlessDrip())
  })

  test('a host that accepts the request and never answers', async () => {
    await expectAbortEndsConnection(loopbackIntake(), '/error/hang', { kind: 'hang' })
  })

  test('AbortSignal.timeout ends a drip source', async () => {
    const path = '/error/drip-timeout'
    const url = server.route(path, { kind: 'drip', body: makePng(200, 200), chunkBytes: 8, intervalMs: 25, loop: true })
    await expectRefusal(loopbackIntake().fetch(url, AbortSignal.timeout(300)), /^the image did not arrive before the deadline/)
    expect(await server.slowResponses(path)[0]!.ended).toBe('client-gone')
  })

  test('an already aborted signal sends nothing', async () => {
    const path = '/error/never-asked.png'
    const url = server.route(path, { kind: 'bytes', body: makePng(5, 5) })
    await expectRefusal(loopbackIntake().fetch(url, AbortSignal.abort()), /deadline/)
    expect(server.hits(path)).toBe(0)
  })

  test('a slow resolver is cut off by the signal too', async () => {
    const controller = new AbortController()
    let resolverCalled!: () => void
    const called = new Promise<void>((resolve) => (resolverCalled = resolve))
    const intake = loopbackIntake({
      resolve: () => {
        resolverCalled()
        return new Promise(() => undefined) // never answers
      },
    })
    const fetching = intake.fetch('https://slow-dns.test/x.png', controller.signal)
    await called
    controller.abort()
    await expectRefusal(fetching, /deadline/)
  })

  describe('a host that accepts TCP but never completes TLS', () => {
    let silent: Server
    const sockets = new Set<Socket>()
    beforeAll(async () => {
      silent = createServer((socket) => {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
      })
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    })
    afterAll(async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))
    })

    test('is refused after the connect timeout', async () => {
      const port = (silent.address() as { port: number }).port
      const intake = loopbackIntake({ connectTimeoutMs: 200 })
      await expectRefusal(intake.fetch(`https://127.0.0.1:${port}/x.png`, noDeadline()), /^the image host could not be reached$/, /within 200 ms/)
    })
  })
})

// A download while no other is under way runs in the main thread; overlapping ones run in the fetch
// workers. The refusals above take the first path; these take the second (`hopInThread: 'never'`),
// where each refusal crosses a thread as a message.
describe('refusals from the fetch workers', () => {
  const viaWorkers = (extra: Partial<ImageIntakeOptions> = {}) => loopbackIntake({ hopInThread: 'never', ...extra })

  test('a non-2xx answer', async () => {
    const url = server.route('/error/workers/gone.png', { kind: 'bytes', body: makePng(4, 4), status: 410 })
    const refusal = await expectRefusal(viaWorkers().fetch(url, noDeadline()), /^the image host answered 410$/)
    expect(refusal.status).toBe(400)
  })

  test('over the limit, with an honest Content-Length and streamed', async () => {
    const honest = server.route('/error/workers/big-honest', { kind: 'bytes', body: new Uint8Array(TEN_MB + 1) })
    await expectRefusal(viaWorkers().fetch(honest, noDeadline()), /^the image is over the 10 MB limit$/)
    await expectOneByteOverRefused(viaWorkers, '/error/workers/one-over')
  })

  test('a body that ends before its Content-Length', async () => {
    const png = makePng(30, 30)
    const url = server.route('/error/workers/claims-more', { kind: 'lying-length', body: png, claimedLength: png.length + 5000 })
    await expectRefusal(viaWorkers().fetch(url, noDeadline()), /^the image is truncated/)
  })

  test("an abort mid-body ends the worker's connection", async () => {
    await expectAbortEndsConnection(viaWorkers(), '/error/workers/drip', endlessDrip())
  })

  test('a redirect is followed and each hop checked', async () => {
    const target = server.route('/error/workers/target.png', { kind: 'bytes', body: makePng(6, 6) })
    const url = server.route('/error/workers/redirect', { kind: 'redirect', to: target.replace('127.0.0.1', 'localhost') })
    const image = await viaWorkers({ allowPrivateHosts: ['127.0.0.1'] }).fetch(url, noDeadline())
    expect([image.format, image.finalUrl]).toEqual(['png', target.replace('127.0.0.1', 'localhost')])
    await expectRefusal(viaWorkers({ maxRedirects: 0 }).fetch(url, noDeadline()), /too many redirects/)
  })
})

describe('resolution failures', () => {
  test('a name that does not resolve (ENOTFOUND)', async () => {
    const resolver = fakeResolver({})
    await expectRefusal(
      loopbackIntake({ resolve: resolver }).fetch('https://no-such-host.test/x.png', noDeadline()),
      /^the image host no-such-host.test cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/,
    )
    expect(resolver.calls).toEqual(['no-such-host.test'])
  })

  test('a resolver that answers with nothing', async () => {
    await expectRefusal(loopbackIntake({ resolve: fakeResolver({ 'empty.test': [] }) }).fetch('https://empty.test/x.png', noDeadline()), /cannot be resolved/)
  })

  test('a resolver that answers with something that is not an IP', async () => {
    const resolve = async () => [{ address: 'localhost', family: 4 as const }]
    await expectRefusal(
      loopbackIntake({ resolve, allowPrivateHosts: ['odd.test'] }).fetch('https://odd.test/x.png', noDeadline()),
      /^the image host odd\.test cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/,
      /not an IP address/,
    )
  })

  test('nothing listening on the checked address', async () => {
    // 127.0.0.2 is loopback too; nothing listens there on this port.
    const port = new URL(server.origin).port
    const intake = loopbackIntake({ allowPrivateHosts: ['127.0.0.0/8'], resolve: fakeResolver({ localhost: ['127.0.0.2'] }) })
    await expectRefusal(intake.fetch(`https://localhost:${port}/x.png`, noDeadline()), /^the image host could not be reached$/, /127\.0\.0\.2/)
  })
})

function declaredSize(bytes: Uint8Array): { width: number; height: number } {
  try {
    const { width, height } = inspectImage(bytes)
    return { width, height }
  } catch {
    return { width: 0, height: 0 } // damaged on purpose: the header fields do not matter here
  }
}

describe('prepare refuses what cannot be decoded', () => {
  const intake = createImageIntake({ allowPrivateHosts: [] })
  // As fetch() hands it on: prepare trusts the header fields, so they are the declared ones.
  const fetched = (bytes: Uint8Array, format: FetchedImage['format'], size = declaredSize(bytes)): FetchedImage => ({
    bytes,
    contentHash: blake3(Buffer.from(bytes)).toString('hex'),
    format,
    width: size.width,
    height: size.height,
    finalUrl: 'https://example.invalid/x',
  })

  test('a PNG whose compressed data is damaged', async () => {
    const png = makePng(64, 64)
    const damaged = png.slice()
    const idat = findChunk(damaged, 'IDAT')
    for (let i = idat + 2; i < idat + 40; i++) damaged[i] = damaged[i]! ^ 0x5a
    await expectRefusal(intake.prepare(fetched(damaged, 'png')), /^the image is truncated or corrupt \(it could not be decoded/)
  })

  test('a WebP whose bitstream is garbage', async () => {
    const webp = makeWebp(64, 64)
    const damaged = webp.slice()
    for (let i = 30; i < damaged.length; i++) damaged[i] = (i * 131) & 0xff
    await expectRefusal(intake.prepare(fetched(damaged, 'webp')), /^the image is truncated or corrupt/)
  })

  test('a GIF whose LZW data is garbage', async () => {
    const gif = makeAnimatedGif(16, 16)
    const damaged = gif.slice()
    // The first image descriptor follows the header, palette, loop and control extensions.
    const descriptor = damaged.indexOf(0x2c, 13 + 48 + 19)
    damaged[descriptor + 10] = 11 // LZW minimum code size out of range
    await expectRefusal(intake.prepare(fetched(damaged, 'gif')), /^the image is truncated or corrupt/)
  })

  test('truncated data never reaches prepare: the header check that fetch runs refuses it', () => {
    expect(() => inspectImage(truncate(makeJpeg(100, 100), 0.6))).toThrow(/ends/)
  })

  test('the header-only bomb is refused by pixels, not decoded', async () => {
    await expectRefusal(intake.prepare(fetched(makePngHeaderOnly(40000, 40000), 'png', { width: 40000, height: 40000 })), /40000×40000 pixels/)
  })

  test('an aborted signal is refused as not ready before the deadline, without decoding', async () => {
    const signal = AbortSignal.abort(new Error('deadline passed'))
    for (const image of [fetched(makePng(10, 10), 'png'), fetched(makeAnimatedGif(10, 10), 'gif')]) {
      const outcome = await intake.prepare(image, signal).catch((error: unknown) => error)
      expect(outcome).toBeInstanceOf(ApiError)
      expect(outcome).toMatchObject({ code: 'overloaded', status: 503, retryAfterSeconds: 5 })
      expect((outcome as ApiError).message).toMatch(/^the image could not be prepared before the deadline of this request/)
    }
  })
})

function findChunk(png: Uint8Array, type: string): number {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  let offset = 8
  while (offset < png.length) {
    const length = view.getUint32(offset)
    if (String.fromCharCode(...png.subarray(offset + 4, offset + 8)) === type) return offset + 8
    offset += 12 + length
  }
  throw new Error(`no ${type} chunk`)
}
