// The intake doing its job: fetching each format from a real local HTTPS origin (loopback,
// allow-listed), following redirects, and preparing images for the model.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { blake3 } from '@napi-rs/blake-hash'
import { Transformer } from '@napi-rs/image'
import { generate } from 'selfsigned'
import { createImageIntake, type FetchedImage } from '../../src/intake/index.ts'
import type { ImageIntakeOptions } from '../../src/intake/index.ts'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server.ts'
import { decodeGif, makeAnimatedGif, makeJpeg, makePng, makeWebp } from '../support/images.ts'
import {
  expectRefusal,
  fakeResolver,
  JPEG_MAGIC,
  makeAnimatedWebp,
  pixelAt,
  PNG_MAGIC,
  startsWithBytes,
  withExifOrientation,
  loopbackIntakeFor,
} from './fixtures.ts'

let server: HttpsImageServer

beforeAll(async () => {
  server = await startHttpsImageServer()
})
afterAll(async () => {
  await server.stop()
})

const deadline = (): AbortSignal => new AbortController().signal

const loopbackIntake = (extra: Partial<ImageIntakeOptions> = {}) => loopbackIntakeFor(server, extra)

describe('fetch', () => {
  const formats = [
    ['png', () => makePng(120, 80), 120, 80],
    ['jpeg', () => makeJpeg(64, 48), 64, 48],
    ['gif', () => makeAnimatedGif(50, 40, 3), 50, 40],
    ['webp', () => makeWebp(33, 77), 33, 77],
  ] as const

  test.each(formats)('fetches a %s, sniffs it and reads its dimensions', async (format, make, width, height) => {
    const bytes = make()
    // A misleading Content-Type changes nothing: the bytes decide.
    const url = server.route(`/happy/${format}`, { kind: 'bytes', body: bytes, contentType: 'application/octet-stream' })
    const image = await loopbackIntake().fetch(url, deadline())
    expect(image.format).toBe(format)
    expect(image.width).toBe(width)
    expect(image.height).toBe(height)
    expect(image.bytes).toEqual(bytes)
    expect(image.contentHash).toBe(blake3(Buffer.from(bytes)).toString('hex'))
    expect(image.finalUrl).toBe(url)
  })

  test('a host name resolved by the resolver is connected to at the checked address', async () => {
    const url = server.route('/happy/by-name.png', { kind: 'bytes', body: makePng(10, 10) })
    const resolver = fakeResolver({ localhost: ['127.0.0.1'] })
    const intake = loopbackIntake({ resolve: resolver })
    const image = await intake.fetch(url.replace('127.0.0.1', 'localhost'), deadline())
    expect(image.format).toBe('png')
    expect(image.finalUrl).toStartWith('https://localhost:')
    expect(resolver.calls).toEqual(['localhost'])
  })

  test('a name only the fake resolver knows reaches the local server (the lookup is pinned)', async () => {
    // images.test exists nowhere else, so a TLS handshake with the local server proves the
    // connection went to the address the resolver gave; the certificate (for localhost and
    // 127.0.0.1) then rightly fails to match the name.
    const path = '/happy/pinned.png'
    server.route(path, { kind: 'bytes', body: makePng(10, 10) })
    const resolver = fakeResolver({ 'images.test': ['127.0.0.1'] })
    const intake = loopbackIntake({ resolve: resolver })
    const port = new URL(server.origin).port
    await expectRefusal(intake.fetch(`https://images.test:${port}${path}`, deadline()), /^the image host could not be reached$/, /TLS certificate not accepted/)
    expect(resolver.calls).toEqual(['images.test'])
  })

  test('the connection goes to the checked address, while Host and the certificate check use the name', async () => {
    const seen: { host: string | null } = { host: null }
    const path = '/happy/host-header.png'
    server.route(path, {
      kind: 'handler',
      fn: (request) => {
        seen.host = request.headers.get('host')
        return new Response(makePng(10, 10), { headers: { 'content-type': 'image/png' } })
      },
    })
    const port = new URL(server.origin).port
    const image = await loopbackIntake().fetch(`https://localhost:${port}${path}`, deadline())
    expect(image.format).toBe('png')
    expect(seen.host).toBe(`localhost:${port}`)
  })

  test('when the first checked address refuses the connection, the next one is tried', async () => {
    // Nothing listens on 127.0.0.2 (the server is bound to 127.0.0.1); both are loopback.
    const url = server.route('/happy/second-address.png', { kind: 'bytes', body: makePng(10, 10) })
    const resolver = fakeResolver({ localhost: ['127.0.0.2', '127.0.0.1'] })
    const intake = loopbackIntake({ resolve: resolver, allowPrivateHosts: ['127.0.0.0/8'] })
    const image = await intake.fetch(url.replace('127.0.0.1', 'localhost'), deadline())
    expect(image.format).toBe('png')
    expect(resolver.calls).toEqual(['localhost'])
  })

  test('the extra CA may be a bundle of several certificates', async () => {
    const other = await generate([{ name: 'commonName', value: 'Some Other CA' }], { keyType: 'ec', curve: 'P-256' })
    const url = server.route('/happy/bundle.png', { kind: 'bytes', body: makePng(10, 10) })
    const intake = loopbackIntake({ extraCaPem: `${other.cert}\n${server.caPem}` })
    expect((await intake.fetch(url, deadline())).format).toBe('png')
  })

  test('an allow-listed host name may resolve to a private address', async () => {
    const url = server.route('/happy/allowed-name.png', { kind: 'bytes', body: makePng(10, 10) })
    const intake = loopbackIntake({ allowPrivateHosts: ['localhost'] })
    expect((await intake.fetch(url.replace('127.0.0.1', 'localhost'), deadline())).format).toBe('png')
  })

  test('an allow-listed CIDR covers the address', async () => {
    const url = server.route('/happy/allowed-cidr.png', { kind: 'bytes', body: makePng(10, 10) })
    const intake = loopbackIntake({ allowPrivateHosts: ['127.0.0.0/8'] })
    expect((await intake.fetch(url, deadline())).format).toBe('png')
  })

  test('follows 5 redirects of every kind, relative and absolute, checking each hop', async () => {
    const body = makeJpeg(20, 10)
    server.route('/happy/chain/final.jpg', { kind: 'bytes', body })
    server.route('/happy/chain/5', { kind: 'redirect', to: 'final.jpg', status: 308 })
    server.route('/happy/chain/4', { kind: 'redirect', to: '/happy/chain/5', status: 307 })
    server.route('/happy/chain/3', { kind: 'redirect', to: server.url('/happy/chain/4'), status: 303 })
    server.route('/happy/chain/2', { kind: 'redirect', to: './3', status: 302 })
    const first = server.route('/happy/chain/1', { kind: 'redirect', to: '2?x=1', status: 301 })
    const image = await loopbackIntake().fetch(first, deadline())
    expect(image.bytes).toEqual(body)
    expect(image.finalUrl).toBe(server.url('/happy/chain/final.jpg'))
    for (const hop of ['1', '2', '3', '4', '5', 'final.jpg']) expect(server.hits(`/happy/chain/${hop}`)).toBe(1)
  })

  test('the content hash is BLAKE3 of the whole body, also when hashed in several turns (over 2 MB) or streamed', async () => {
    // The hash function itself, against the BLAKE3 paper's test vector for the empty input.
    expect(blake3(Buffer.alloc(0)).toString('hex')).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262')
    // Noise does not compress: a ~4.8 MB PNG, so the per-turn hashing budget (2 MB) splits it.
    const rgba = new Uint8Array(1200 * 1000 * 4)
    for (let offset = 0; offset < rgba.length; offset += 65536) crypto.getRandomValues(rgba.subarray(offset, offset + 65536))
    const body = new Uint8Array(Transformer.fromRgbaPixels(rgba, 1200, 1000).pngSync())
    expect(body.length).toBeGreaterThan(4 * 1024 * 1024)
    const whole = server.route('/happy/noise.png', { kind: 'bytes', body })
    const streamed = server.route('/happy/noise-streamed.png', {
      kind: 'handler',
      // No Content-Length: read chunk by chunk, each hashed as it arrives.
      fn: () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              for (let offset = 0; offset < body.length; offset += 300_000) controller.enqueue(body.slice(offset, offset + 300_000))
              controller.close()
            },
          }),
          { headers: { 'content-type': 'image/png' } },
        ),
    })
    const expected = blake3(Buffer.from(body)).toString('hex')
    for (const url of [whole, streamed]) {
      const image = await loopbackIntake().fetch(url, deadline())
      expect(image.bytes).toEqual(body)
      expect(image.contentHash).toBe(expected)
    }
  })

  test('the maxBytes limit is inclusive: exactly maxBytes is fine', async () => {
    const body = makePng(40, 40)
    const url = server.route('/happy/exact-size.png', { kind: 'bytes', body })
    const image = await loopbackIntake({ maxBytes: body.length }).fetch(url, deadline())
    expect(image.bytes.length).toBe(body.length)
  })
})

function fetched(bytes: Uint8Array, format: FetchedImage['format'], width: number, height: number): FetchedImage {
  return { bytes, contentHash: blake3(Buffer.from(bytes)).toString('hex'), format, width, height, finalUrl: 'https://example.invalid/x' }
}

describe('prepare', () => {
  const intake = createImageIntake({ allowPrivateHosts: [] })

  test('a 3000×2000 JPEG becomes a 1024×683 JPEG', async () => {
    const prepared = await intake.prepare(fetched(makeJpeg(3000, 2000), 'jpeg', 3000, 2000))
    expect(prepared.mime).toBe('image/jpeg')
    expect(startsWithBytes(prepared.data, JPEG_MAGIC)).toBe(true)
    expect([prepared.width, prepared.height]).toEqual([1024, 683])
  })

  test('a tall PNG keeps its aspect ratio and becomes PNG', async () => {
    const prepared = await intake.prepare(fetched(makePng(1000, 3000), 'png', 1000, 3000))
    expect(prepared.mime).toBe('image/png')
    expect(startsWithBytes(prepared.data, PNG_MAGIC)).toBe(true)
    expect([prepared.width, prepared.height]).toEqual([341, 1024])
  })

  test('a WebP becomes PNG', async () => {
    const prepared = await intake.prepare(fetched(makeWebp(2048, 512), 'webp', 2048, 512))
    expect(prepared.mime).toBe('image/png')
    expect(startsWithBytes(prepared.data, PNG_MAGIC)).toBe(true)
    expect([prepared.width, prepared.height]).toEqual([1024, 256])
  })

  test('EXIF orientation is applied, so a portrait photo stays portrait', async () => {
    const sideways = withExifOrientation(makeJpeg(3000, 2000), 6) // stored landscape, shown rotated 90°
    const prepared = await intake.prepare(fetched(sideways, 'jpeg', 3000, 2000))
    expect([prepared.width, prepared.height]).toEqual([683, 1024])
    const upright = await intake.prepare(fetched(withExifOrientation(makeJpeg(60, 30), 1), 'jpeg', 60, 30))
    expect([upright.width, upright.height]).toEqual([60, 30])
  })

  test('small images are not upscaled', async () => {
    for (const [bytes, format] of [
      [makePng(30, 20), 'png'],
      [makeJpeg(30, 20), 'jpeg'],
      [makeWebp(30, 20), 'webp'],
      [makeAnimatedGif(30, 20), 'gif'],
    ] as const) {
      const prepared = await intake.prepare(fetched(bytes, format, 30, 20))
      expect([prepared.width, prepared.height]).toEqual([30, 20])
    }
  })

  test('an animated GIF gives its first frame, as PNG', async () => {
    const gif = makeAnimatedGif(48, 24, 3)
    const frames = decodeGif(gif).frames
    const firstFramePixel = Array.from(frames[0]!.rgba.subarray(0, 3))
    const secondFramePixel = Array.from(frames[1]!.rgba.subarray(0, 3))
    expect(firstFramePixel).not.toEqual(secondFramePixel)

    const prepared = await intake.prepare(fetched(gif, 'gif', 48, 24))
    expect(prepared.mime).toBe('image/png')
    expect(startsWithBytes(prepared.data, PNG_MAGIC)).toBe(true)
    expect([prepared.width, prepared.height]).toEqual([48, 24])
    expect(await pixelAt(prepared.data, 0, 0)).toEqual(firstFramePixel)
    // A pixel in the first frame's other stripe colour too.
    expect(await pixelAt(prepared.data, 4, 0)).toEqual(Array.from(frames[0]!.rgba.subarray(16, 19)))
  })

  test('a GIF larger than maxSide is downscaled after decoding in the worker', async () => {
    const small = createImageIntake({ allowPrivateHosts: [], maxSide: 32 })
    const prepared = await small.prepare(fetched(makeAnimatedGif(128, 64), 'gif', 128, 64))
    expect([prepared.width, prepared.height]).toEqual([32, 16])
  })

  test('an animated WebP gives its first frame', async () => {
    const webp = makeAnimatedWebp(20, 10, [
      [255, 0, 0],
      [0, 0, 255],
    ])
    const prepared = await intake.prepare(fetched(webp, 'webp', 20, 10))
    expect(prepared.mime).toBe('image/png')
    const [red, green, blue] = await pixelAt(prepared.data, 5, 5)
    expect(red).toBeGreaterThan(240)
    expect(green).toBeLessThan(16)
    expect(blue).toBeLessThan(16)
  })

  test('fetch then prepare, end to end', async () => {
    const url = server.route('/happy/e2e.gif', { kind: 'bytes', body: makeAnimatedGif(2000, 100) })
    const local = loopbackIntake()
    const prepared = await local.prepare(await local.fetch(url, deadline()), deadline())
    // Its two frames side by side, each 510×25, with the separator.
    expect([prepared.mime, prepared.width, prepared.height, prepared.keyFrames]).toEqual(['image/png', 1024, 25, 2])
  })
})

describe('trusting NODE_EXTRA_CA_CERTS', () => {
  test('this process did not load the test CA, so the intake passes its own CA list', async () => {
    const { runtimeTrustsAll } = await import('../../src/intake/intake.ts')
    expect(runtimeTrustsAll(server.caPem)).toBe(false)
    expect(runtimeTrustsAll('no certificate here')).toBe(false)
  })

  test('a process started with it trusts the CA without a ca list, in this thread and in the workers; other CAs are still refused', async () => {
    const other = await startHttpsImageServer()
    try {
      const png = makePng(12, 9)
      const trusted = server.route('/happy/runtime-trust.png', { kind: 'bytes', body: png })
      const untrusted = other.route('/happy/untrusted.png', { kind: 'bytes', body: png })
      const script = `
        const { readFileSync } = await import('node:fs')
        const { createImageIntake, runtimeTrustsAll } = await import(${JSON.stringify(new URL('../../src/intake/intake.ts', import.meta.url).pathname)})
        const pem = readFileSync(process.env.NODE_EXTRA_CA_CERTS, 'utf8')
        const result = { trusts: runtimeTrustsAll(pem), trustsOther: runtimeTrustsAll(pem + ${JSON.stringify(other.caPem)}) }
        for (const hopInThread of ['when-alone', 'never']) {
          const intake = createImageIntake({ allowPrivateHosts: ['127.0.0.1'], extraCaPem: pem, hopInThread })
          result[hopInThread] = (await intake.fetch(${JSON.stringify(trusted)}, new AbortController().signal)).width
          result[hopInThread + ' other'] = await intake.fetch(${JSON.stringify(untrusted)}, new AbortController().signal).then(() => 'fetched', (error) => error.message + ' | ' + error.detail)
          await intake.close()
        }
        console.log(JSON.stringify(result))
      `
      const child = Bun.spawn([process.execPath, '-e', script], { env: { ...process.env, NODE_EXTRA_CA_CERTS: server.caPath }, stdout: 'pipe', stderr: 'pipe' })
      const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
      expect(err).toBe('')
      const result = JSON.parse(out)
      expect(result).toMatchObject({ trusts: true, trustsOther: false, 'when-alone': 12, never: 12 })
      expect(result['when-alone other']).toMatch(/^the image host could not be reached \| .*TLS certificate not accepted/)
      expect(result['never other']).toMatch(/^the image host could not be reached \| .*TLS certificate not accepted/)
    } finally {
      await other.stop()
    }
  })
})

describe('workers', () => {
  test('every format arrives whole through the fetch workers, with its hash', async () => {
    const intake = loopbackIntake({ hopInThread: 'never' })
    for (const [name, bytes] of [
      ['png', makePng(120, 80)],
      ['gif', makeAnimatedGif(50, 40, 3)],
      ['webp', makeWebp(33, 77)],
    ] as const) {
      const url = server.route(`/happy/workers/${name}`, { kind: 'bytes', body: bytes })
      const image = await intake.fetch(url, deadline())
      expect(image.format).toBe(name)
      expect(image.bytes).toEqual(bytes)
      expect(image.contentHash).toBe(blake3(Buffer.from(bytes)).toString('hex'))
    }
  })

  test('overlapping downloads (one in this thread, the others in the workers) each get their own bytes', async () => {
    const intake = loopbackIntake()
    const bodies = Array.from({ length: 6 }, (_, i) => makePng(20 + i, 10 + i))
    const urls = bodies.map((body, i) => server.route(`/happy/overlap-${i}.png`, { kind: 'bytes', body }))
    const images = await Promise.all(urls.map((url) => intake.fetch(url, deadline())))
    images.forEach((image, i) => {
      expect(image.bytes).toEqual(bodies[i]!)
      expect(image.contentHash).toBe(blake3(Buffer.from(bodies[i]!)).toString('hex'))
    })
  })

  test('both worker entrypoints are found from source (downloads and GIF decoding run off the event loop)', async () => {
    const { missingWorkers } = await import('../../src/intake/index.ts')
    expect(missingWorkers()).toEqual([])
  })
})
