// Batches, what a body may cost: its shape is checked while it arrives (nesting and values, in any
// field, metadata included), a large body takes its memory from the service's decode budget or is
// refused at once (so concurrent large bodies cannot pass it), a body that stops arriving gives that
// memory back, and uploaded images waiting in the database are bounded per account and for the service.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { IntakeUsage } from '../../src/intake/types'
import { MAX_BATCH_JSON_VALUES, MAX_BATCH_METADATA_BYTES, MAX_JSON_DEPTH, UPLOAD_RECEIVE_SECONDS } from '../../src/shared/limits'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { expectApiError } from '../support/assertions'
import { makePng } from '../support/images'
import { type ApiResponse, type RegisteredAccount, startTestService, type TestService, waitUntil } from '../support/service'
import { batchClient } from './support'

const JSON_HEADERS = { 'content-type': 'application/json' }
const IMAGE_URL = 'https://127.0.0.1:9/a.png'

/** `{"items":[<one url item>],` + `middle` + `}` as bytes, without building a string of the middle. */
function batchBytes(middle: Uint8Array, item = `{"image_url":"${IMAGE_URL}"}`): Uint8Array {
  return Buffer.concat([Buffer.from(`{"items":[${item}],`), middle, Buffer.from('}')])
}

/** `"<field>":` followed by `depth` nested arrays. */
function nestedField(field: string, depth: number): Uint8Array {
  return Buffer.concat([Buffer.from(`"${field}":`), Buffer.alloc(depth, '['), Buffer.alloc(depth, ']')])
}

const send = (service: TestService, key: string, body: Uint8Array): Promise<ApiResponse> =>
  service.api.request('POST', '/api/batches', { rawBody: body as unknown as string, key, headers: JSON_HEADERS })

describe('the shape of the body', () => {
  let env: AltTextEnv
  beforeAll(async () => {
    env = await startAltTextEnv()
  })
  afterAll(async () => {
    await env.stop()
  })
  const nothingCreated = async () => expect((await batchClient(env.service.api, env.key).list()).body.items).toEqual([])

  test(`100 000 nested arrays in an unknown field: 400 invalid_request naming the limit of ${MAX_JSON_DEPTH} levels`, async () => {
    const res = await send(env.service, env.key, batchBytes(nestedField('junk', 100_000)))
    expectApiError(res, 400, 'invalid_request', `${MAX_JSON_DEPTH} levels`)
    // Refused before the rest arrived: the rest must not be read as a next request on the connection.
    expect(res.headers.get('connection')).toBe('close')
    await nothingCreated()
  })

  test('30 MB of nested arrays, and of nested objects: 400, not gigabytes of memory', async () => {
    const arrays = batchBytes(nestedField('junk', 15 * 1024 * 1024))
    expectApiError(await send(env.service, env.key, arrays), 400, 'invalid_request', `${MAX_JSON_DEPTH} levels`)
    const depth = 5 * 1024 * 1024
    const objects = batchBytes(Buffer.concat([Buffer.from('"junk":'), Buffer.from('{"a":'.repeat(depth)), Buffer.from('1'), Buffer.alloc(depth, '}')]))
    expectApiError(await send(env.service, env.key, objects), 400, 'invalid_request', `${MAX_JSON_DEPTH} levels`)
    await nothingCreated()
  })

  test('metadata nested 10 million deep: 400 invalid_request, never 500', async () => {
    const depth = 10_000_000
    const body = Buffer.concat([
      Buffer.from(`{"items":[{"image_url":"${IMAGE_URL}","metadata":{"a":`),
      Buffer.alloc(depth, '['),
      Buffer.alloc(depth, ']'),
      Buffer.from('}}]}'),
    ])
    expectApiError(await send(env.service, env.key, body), 400, 'invalid_request', `${MAX_JSON_DEPTH} levels`)
    await nothingCreated()
  })

  test(`metadata as deep as the limit allows is taken; one level more is refused`, async () => {
    // The body, items, the item and metadata are four levels; the rest is the metadata's own.
    const inner = MAX_JSON_DEPTH - 4
    const item = (levels: number) => `{"image_url":"${env.serve(makePng(12, 12))}","metadata":{"a":${'['.repeat(levels)}${']'.repeat(levels)}}}`
    const fits = await send(env.service, env.key, Buffer.from(`{"items":[${item(inner)}]}`))
    expect(fits.status).toBe(202)
    expectApiError(await send(env.service, env.key, Buffer.from(`{"items":[${item(inner + 1)}]}`)), 400, 'invalid_request', `${MAX_JSON_DEPTH} levels`)
  })

  test(`more than ${MAX_BATCH_JSON_VALUES} elements in an unknown field: 400 naming the limit`, async () => {
    const many = Buffer.concat([Buffer.from('"junk":['), Buffer.from('[],'.repeat(MAX_BATCH_JSON_VALUES + 10)), Buffer.from('[]]')])
    const res = await send(env.service, env.key, batchBytes(many))
    expectApiError(res, 400, 'invalid_request', String(MAX_BATCH_JSON_VALUES))
  })

  test('100 items with full metadata are far within the limits', async () => {
    // About 1 000 numbers per item: as many values as 2 KB of metadata can hold.
    const numbers = Array.from({ length: 999 }, () => 0)
    expect(JSON.stringify({ ids: numbers }).length).toBeLessThanOrEqual(MAX_BATCH_METADATA_BYTES)
    const url = env.serve(makePng(13, 13))
    const items = Array.from({ length: 100 }, () => ({ image_url: url, keywords: ['a', 'b', 'c'], metadata: { ids: numbers } }))
    const res = await batchClient(env.service.api, env.key).create({ items })
    expect(res.status).toBe(202)
    expect(res.body.total).toBe(100)
  })

  test('brackets, quotes and escapes inside strings are text, not structure', async () => {
    const tricky = `${'['.repeat(40_000)}\\"${'{'.repeat(100)}\\\\`
    const url = env.serve(makePng(14, 14))
    const res = await batchClient(env.service.api, env.key).create({ items: [{ image_url: url, metadata: { note: 'x]["' } }], note: tricky } as never)
    expect(res.status).toBe(202)
  })

  test('the service still answers', async () => {
    expect((await env.service.api.get('/health')).status).toBe(200)
  })
})

/** A request whose body is sent in parts, the rest when the test says: it holds what the server took for it. */
async function partialRequest(url: string, key: string, body: Uint8Array, firstPart: number) {
  const { hostname, port } = new URL(url)
  const received: Uint8Array[] = []
  const { promise: closed, resolve } = Promise.withResolvers<void>()
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data: (_socket, data) => void received.push(new Uint8Array(data)),
      close: () => resolve(),
      error: () => resolve(),
    },
  })
  const head = [
    'POST /api/batches HTTP/1.1',
    `Host: ${hostname}`,
    `X-API-Key: ${key}`,
    'Content-Type: application/json',
    `Content-Length: ${body.length}`,
    'Connection: close',
  ]
  socket.write(`${head.join('\r\n')}\r\n\r\n`)
  socket.write(body.subarray(0, firstPart))
  socket.flush()
  return {
    finish() {
      socket.write(body.subarray(firstPart))
      socket.flush()
    },
    /** The status line's code, once the server answered and closed. */
    async status(): Promise<number> {
      await closed
      return Number(Buffer.concat(received).toString('latin1').split(' ')[1] ?? 0)
    },
    async text(): Promise<string> {
      await closed
      return Buffer.concat(received).toString('utf8')
    },
  }
}

/** A valid batch of `size` bytes: one URL item and a long unknown string. */
function paddedBatch(size: number): Uint8Array {
  const head = Buffer.from(`{"items":[{"image_url":"${IMAGE_URL}"}],"pad":"`)
  return Buffer.concat([head, Buffer.alloc(size - head.length - 2, 'x'), Buffer.from('"}')])
}

describe('large bodies and the decode budget', () => {
  const BODY = 1024 * 1024
  // Room for one large body at a time (each takes 4 times its length).
  const BUDGET = 6 * 1024 * 1024
  let service: TestService
  let usage: IntakeUsage = { decodeBytes: 0, waiting: 0 }
  let alice: RegisteredAccount
  let bob: RegisteredAccount
  beforeAll(async () => {
    service = await startTestService({
      env: { ALTTEXT_RATE_LIMITS: 'off' },
      overrides: {
        intakeOptions: {
          decodeBudgetBytes: BUDGET,
          observe: (now) => {
            usage = now
          },
        },
      },
    })
    alice = await service.api.register()
    bob = await service.api.register()
  })
  afterAll(async () => {
    await service.stop()
  })

  test('a large body holds its memory while it arrives; another one meanwhile is refused at once with 503 overloaded', async () => {
    const body = paddedBatch(BODY)
    const first = await partialRequest(service.url, alice.apiKey, body, 1000)
    await waitUntil(() => usage.decodeBytes > 0, 'the first body to take its memory')
    expect(usage.decodeBytes).toBeGreaterThanOrEqual(4 * BODY)

    const second = await send(service, bob.apiKey, body)
    expectApiError(second, 503, 'overloaded')
    expect(second.headers.get('retry-after')).toBe('5')
    // A small body needs no budget, and the service answers as usual.
    expect((await batchClient(service.api, bob.apiKey).create({ items: [{ image_url: IMAGE_URL }] })).status).toBe(202)
    expect((await service.api.get('/health')).status).toBe(200)

    first.finish()
    expect(await first.status()).toBe(202)
    await waitUntil(() => usage.decodeBytes === 0, 'the memory to be given back')
    expect((await send(service, bob.apiKey, body)).status).toBe(202)
  })

  test('a body refused for its shape gives its memory back', async () => {
    const res = await send(service, alice.apiKey, batchBytes(nestedField('junk', BODY)))
    expectApiError(res, 400, 'invalid_request', `${MAX_JSON_DEPTH} levels`)
    await waitUntil(() => usage.decodeBytes === 0, 'the memory to be given back')
  })
})

describe('a large body that stops arriving', () => {
  let service: TestService
  let usage: IntakeUsage = { decodeBytes: 0, waiting: 0 }
  let alice: RegisteredAccount
  beforeAll(async () => {
    service = await startTestService({
      env: { ALTTEXT_RATE_LIMITS: 'off' },
      overrides: {
        batchReceiveMs: 300,
        intakeOptions: {
          decodeBudgetBytes: 6 * 1024 * 1024,
          observe: (now) => {
            usage = now
          },
        },
      },
    })
    alice = await service.api.register()
  })
  afterAll(async () => {
    await service.stop()
  })

  test(`is answered 400 when its time to arrive (${UPLOAD_RECEIVE_SECONDS} s in service) is over, and its memory is free again`, async () => {
    const body = paddedBatch(1024 * 1024)
    const stalled = await partialRequest(service.url, alice.apiKey, body, 1000)
    const answer = await stalled.text()
    expect(answer).toStartWith('HTTP/1.1 400')
    expect(answer).toContain('did not arrive within')
    await waitUntil(() => usage.decodeBytes === 0, 'the memory to be given back')
    expect((await send(service, alice.apiKey, body)).status).toBe(202)
  })
})

describe('uploaded images waiting in the database', () => {
  const png = makePng(40, 40)
  const base64 = Buffer.from(png).toString('base64')
  const perAccount = Math.floor(png.length * 2.5)
  const total = Math.floor(png.length * 3.5)
  let env: AltTextEnv
  let alice: RegisteredAccount
  let bob: RegisteredAccount
  beforeAll(async () => {
    // The model never answers until released, so every image stays in the database meanwhile.
    env = await startAltTextEnv({
      ollama: { hang: true },
      overrides: { batchImageLimits: { perAccountBytes: perAccount, totalBytes: total } },
    })
    alice = await env.service.api.register()
    bob = await env.service.api.register()
  })
  afterAll(async () => {
    await env.stop()
  })
  const items = (n: number) => Array.from({ length: n }, () => ({ image_base64: base64 }))

  test('are bounded per account (429 pending_images_limit) and for the service (503 overloaded); URLs are not counted', async () => {
    const mine = batchClient(env.service.api, alice.apiKey)
    const theirs = batchClient(env.service.api, bob.apiKey)
    const first = await mine.create({ items: items(2) })
    expect(first.status).toBe(202)

    const over = await mine.create({ items: items(1) })
    expectApiError(over, 429, 'pending_images_limit')
    expect(over.headers.get('retry-after')).toBe('30')
    expect((await mine.create({ items: [{ image_url: env.serve(makePng(15, 15)) }] })).status).toBe(202)

    expectApiError(await theirs.create({ items: items(2) }), 503, 'overloaded')
    expect((await theirs.create({ items: items(1) })).status).toBe(202)
    expect((await mine.list()).body.items).toHaveLength(2)
    expect((await theirs.list()).body.items).toHaveLength(1)

    // Once the items have run, their images are gone from the database and count no more.
    env.ollama.behave({ hang: false })
    env.ollama.release()
    await mine.ended(first.body.id)
    expect((await mine.create({ items: items(2) })).status).toBe(202)
  })
})
