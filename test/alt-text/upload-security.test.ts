// An upload is checked as it arrives: a body that will be too large is refused before it is read
// (Content-Length), one that becomes too large stops being read at once, and a stranger's or a broke
// account's upload is refused before its first byte is read. Every other route keeps its 64 KiB limit.
// Image bytes never reach the log.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_IMAGE_BYTES, MAX_UPLOAD_BODY_BYTES } from '../../src/shared/limits'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { expectApiError } from '../support/assertions'
import { makePng } from '../support/images'
import { base64, chunked, postForm, streamUntilAnswered } from './upload-support'

let env: AltTextEnv
/** A service whose accounts have 1 credit, to show 429 comes before the body is read. */
let poor: AltTextEnv

beforeAll(async () => {
  ;[env, poor] = await Promise.all([startAltTextEnv(), startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: '1' } })])
})
afterAll(async () => {
  await Promise.all([env.stop(), poor.stop()])
})

const MB = 1024 * 1024
const BOUNDARY = 'upload-test-boundary-7f3a'
/** 64 KiB of one byte: the body of a never-ending upload. */
const filler = (byte: number) => new Uint8Array(64 * 1024).fill(byte)

function head(key: string, contentType: string, framing: string): string {
  return `POST /api/alt-text HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nContent-Type: ${contentType}\r\n${framing}\r\n\r\n`
}

/** A multipart body whose image part never ends, sent chunked: only the server's limit can stop it. */
function endlessMultipart(key: string) {
  const opening = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`)
  const data = filler(0x41)
  return {
    head: head(key, `multipart/form-data; boundary=${BOUNDARY}`, 'Transfer-Encoding: chunked'),
    piece: (offset: number) => (offset === 0 ? chunked(Buffer.concat([opening, data])) : chunked(data)),
  }
}

describe('a body that grows too large stops being read at once', () => {
  // The client would send 100 MB; the server must answer long before.
  const TOTAL = 100 * MB

  test('multipart: 413 payload_too_large after the image passes 10 MB, before the client has sent the rest', async () => {
    const { head: start, piece } = endlessMultipart(env.key)
    const sent = await streamUntilAnswered(env.service.url, start, TOTAL, piece)
    expect(sent.status).toBe(413)
    expect(sent.text).toContain('"code":"payload_too_large"')
    expect(sent.finished).toBe(false)
    // Read up to the limit (and what the sockets held), not the 100 MB.
    expect(sent.sentBeforeAnswer).toBeGreaterThan(MAX_IMAGE_BYTES)
    expect(sent.sentBeforeAnswer).toBeLessThan(TOTAL / 2)
  })

  test('base64 JSON: 413 payload_too_large once the decoded image passes 10 MB', async () => {
    const letters = filler(0x41) // "AAAA…": valid base64, decodes to zero bytes
    const sent = await streamUntilAnswered(env.service.url, head(env.key, 'application/json', 'Transfer-Encoding: chunked'), TOTAL, (offset) =>
      chunked(offset === 0 ? Buffer.concat([Buffer.from('{"image_base64":"'), letters]) : letters),
    )
    expect(sent.status).toBe(413)
    expect(sent.text).toContain('over the limit of 10 MB (counted after decoding)')
    expect(sent.finished).toBe(false)
    expect(sent.sentBeforeAnswer).toBeLessThan(TOTAL / 2)
  })

  test('a declared Content-Length over the route limit: 413 before any of the body is sent', async () => {
    const declared = MAX_UPLOAD_BODY_BYTES + 1
    const sent = await streamUntilAnswered(
      env.service.url,
      head(env.key, `multipart/form-data; boundary=${BOUNDARY}`, `Content-Length: ${declared}`),
      0,
      () => new Uint8Array(0),
    )
    expect(sent.status).toBe(413)
    expect(sent.text).toContain('over the limit of 15 MB')
  })

  test('the service still serves uploads afterwards', async () => {
    const res = await env.generate({ image_base64: base64(makePng(31, 17)) })
    expect(res.status).toBe(200)
  })
})

describe('refused before the body is read', () => {
  test('no key: 401 while the client is still sending', async () => {
    const { head: start, piece } = endlessMultipart(`alt_${'0'.repeat(64)}`)
    const sent = await streamUntilAnswered(env.service.url, start.replace(/X-API-Key: \S+\r\n/, ''), 100 * MB, piece)
    expect(sent.status).toBe(401)
    expect(sent.text).toContain('missing_api_key')
    expect(sent.sentBeforeAnswer).toBeLessThan(MAX_IMAGE_BYTES)
  })

  test('an unknown key: 401 invalid_api_key while the client is still sending', async () => {
    const { head: start, piece } = endlessMultipart(`alt_${'0'.repeat(64)}`)
    const sent = await streamUntilAnswered(env.service.url, start, 100 * MB, piece)
    expect(sent.status).toBe(401)
    expect(sent.text).toContain('invalid_api_key')
    expect(sent.sentBeforeAnswer).toBeLessThan(MAX_IMAGE_BYTES)
  })

  test('no credit left: 429 quota_exceeded while the client is still sending', async () => {
    expect((await poor.generate({ image_base64: base64(makePng(30, 30)) })).status).toBe(200) // the one credit
    const { head: start, piece } = endlessMultipart(poor.key)
    const sent = await streamUntilAnswered(poor.service.url, start, 100 * MB, piece)
    expect(sent.status).toBe(429)
    expect(sent.text).toContain('quota_exceeded')
    expect(sent.sentBeforeAnswer).toBeLessThan(MAX_IMAGE_BYTES)
  })
})

describe('every other route keeps its 64 KiB limit', () => {
  const json = (size: number) => JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(size) })

  test('register, login and key creation refuse a body over 64 KiB that the alt-text route would take', async () => {
    for (const path of ['/api/register', '/api/login']) {
      expectApiError(
        await env.service.api.request('POST', path, { rawBody: json(70 * 1024), headers: { 'content-type': 'application/json' } }),
        413,
        'payload_too_large',
      )
    }
    const keyed = await env.service.api.request('POST', '/api/keys', {
      rawBody: json(65 * 1024),
      key: env.key,
      headers: { 'content-type': 'application/json' },
    })
    expectApiError(keyed, 413, 'payload_too_large')
    expect(keyed.body.error.message).toContain('64 KiB')
  })

  test('a multipart upload to another route is refused as not JSON', async () => {
    const form = new FormData()
    form.append('image', new Blob([makePng(10, 10)]), 'a.png')
    const res = await fetch(`${env.service.url}/api/keys`, { method: 'POST', headers: { 'x-api-key': env.key }, body: form })
    expect(res.status).toBe(415)
  })
})

describe('the log', () => {
  test('holds no image bytes, base64 or file names, only what the request was', async () => {
    const png = makePng(45, 45)
    const encoded = base64(png)
    expect((await env.generate({ image_base64: encoded, context: 'log check' })).status).toBe(200)
    expect((await postForm(env, { image: { bytes: makePng(46, 46), filename: 'secret-holiday-photo.png' } })).status).toBe(200)
    expect((await env.generate({ image_base64: `${encoded.slice(0, 40)}@@@` })).status).toBe(400)
    const log = env.service.logText()
    expect(log).not.toContain(encoded.slice(0, 24))
    expect(log).not.toContain(encoded.slice(100, 124))
    expect(log).not.toContain('secret-holiday-photo')
    expect(log).toContain('"source":"upload"')
  })
})

describe("one account's burst of uploads waits in the sockets, not in memory", () => {
  let one: AltTextEnv
  const seen = { changes: 0, waiting: 0 }
  beforeAll(async () => {
    one = await startAltTextEnv({
      env: { ALTTEXT_MAX_IMAGES_PER_ACCOUNT: '1' },
      overrides: {
        intakeOptions: {
          observe: (usage) => {
            seen.changes++
            seen.waiting = usage.waiting
          },
        },
      },
    })
  })
  afterAll(() => one.stop())

  /** Polls a condition the server reaches on its own (bounded: a server that never does fails the test). */
  async function until(condition: () => boolean, what: string) {
    const giveUp = performance.now() + 5000
    while (!condition()) {
      if (performance.now() > giveUp) throw new Error(`never happened: ${what}`)
      await Bun.sleep(5)
    }
  }

  test('with one place per account, a second upload is not read until the first is prepared; other accounts go on', async () => {
    const png = makePng(40, 30)
    const body = Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
      png,
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ])
    const { hostname, port } = new URL(one.service.url)
    let answer = ''
    const answered = Promise.withResolvers<void>()
    const socket = await Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        data(_s, data) {
          answer += Buffer.from(data).toString('latin1')
          if (answer.includes('"alt_text"')) answered.resolve()
        },
      },
    })
    // The first upload: all but its closing boundary, so it holds the account's place while it is read.
    const before = seen.changes
    socket.write(
      Buffer.concat([
        Buffer.from(head(one.key, `multipart/form-data; boundary=${BOUNDARY}`, `Content-Length: ${body.length}`)),
        body.subarray(0, body.length - 20),
      ]),
    )
    await until(() => seen.changes > before, 'the first upload took its place')

    let secondDone = false
    const second = postForm(one, { image: { bytes: makePng(41, 30), type: 'image/png' } }).then((res) => {
      secondDone = true
      return res
    })
    await until(() => seen.waiting === 1, 'the second upload waits for a place')
    // Another account is not held up by this one's uploads.
    const other = await one.service.api.register()
    expect((await postForm(one, { image: { bytes: makePng(42, 30), type: 'image/png' } }, other.apiKey)).status).toBe(200)
    expect(secondDone).toBe(false)

    socket.write(body.subarray(body.length - 20))
    await answered.promise
    socket.end()
    expect(answer).toStartWith('HTTP/1.1 200')
    expect((await second).status).toBe(200)
    expect(seen.waiting).toBe(0)
  })
})
