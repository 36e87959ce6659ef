// The client commands' shared pieces on their own: the HTTP client against a scripted loopback server
// (what it sends, when it waits, what it never retries) and the progress reporter on a fake terminal.
import { afterAll, afterEach, beforeAll, describe, expect, jest, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient, type WaitNotice } from '../../src/cli/shared/client'
import { createProgress } from '../../src/cli/shared/progress'
import { loadClientConfig } from '../../src/config'
import { makePng } from '../support/images'

type Seen = { at: number; contentType: string; key: string | null; agent: string | null; fields: Record<string, string[]>; file?: Uint8Array; json?: any }
type Script = (seen: Seen, index: number) => Response

const PIXEL = makePng(2, 2)
const OK = { alt_text: 'A red kite over a beach.', cached: false, credits_remaining: 9 }
const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  Response.json({ error: { code, message: `${code} message`, docs: 'x' } }, { status, headers })

let server: ReturnType<typeof Bun.serve>
let script: Script = () => Response.json(OK)
let seen: Seen[] = []
let dir: string
let png: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-client-'))
  png = join(dir, 'pixel.png')
  writeFileSync(png, PIXEL)
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const contentType = request.headers.get('content-type') ?? ''
      const entry: Seen = { at: Date.now(), contentType, key: request.headers.get('x-api-key'), agent: request.headers.get('user-agent'), fields: {} }
      if (contentType.startsWith('multipart/form-data')) {
        const form = await request.formData()
        for (const [name, value] of form.entries()) {
          if (typeof value === 'string') entry.fields[name] = [...(entry.fields[name] ?? []), value]
          else entry.file = new Uint8Array(await value.arrayBuffer())
        }
      } else entry.json = await request.json()
      seen.push(entry)
      return script(entry, seen.length - 1)
    },
  })
})
afterAll(() => {
  server.stop(true)
  rmSync(dir, { recursive: true, force: true })
})
// A test that timed out on the fake clock must not leave it to the next ones.
afterEach(() => jest.useRealTimers())

const client = (extra: { onWait?: (notice: WaitNotice) => void; maxAttempts?: number; maxWaitSeconds?: number } = {}) =>
  createClient({ url: `http://127.0.0.1:${server.port}`, key: 'alt_test', userAgent: 'alttext-cli/test', ...extra })

const reset = (next: Script) => {
  seen = []
  script = next
}

describe('client: happy', () => {
  test('a local file goes up as multipart with the options as form fields and the key in X-API-Key', async () => {
    reset(() => Response.json(OK))
    const outcome = await client().describeImage({ file: png }, { language: 'de', max_length: 80, keywords: ['kite', 'beach'], detect_decorative: true })
    expect(outcome).toMatchObject({ ok: true, attempts: 1, body: { alt_text: OK.alt_text } })
    expect(seen[0]!.key).toBe('alt_test')
    expect(seen[0]!.agent).toBe('alttext-cli/test')
    expect(seen[0]!.fields).toEqual({ language: ['de'], max_length: ['80'], keywords: ['kite', 'beach'], detect_decorative: ['true'] })
    expect(seen[0]!.file).toEqual(PIXEL)
  })

  test('a URL goes as image_url in a JSON body', async () => {
    reset(() => Response.json(OK))
    const outcome = await client().describeImage({ url: 'https://images.test/a.png' }, { style: 'concise' })
    expect(outcome.ok).toBe(true)
    expect(seen[0]!.json).toEqual({ image_url: 'https://images.test/a.png', style: 'concise' })
  })
})

describe('client: waiting', () => {
  /**
   * On bun:test's clock (Date and timers, the server's too): steps of 100 ms, loopback traffic let through
   * between them, until `done` (a wait set after many steps still gets its steps).
   */
  /** Lets the event loop run (sockets, files) without moving the fake clock, until `done`. */
  async function yieldUntil(done: () => boolean) {
    while (!done()) await new Promise((resolve) => setImmediate(resolve))
  }

  /**
   * Moves the fake clock 100 ms a turn, at most `ms` in all, while not `done`; then lets the event loop run
   * until `done` without moving it. The clock moves only for the wait being tested: moved while a request
   * is in flight (a loaded machine takes many turns for one), it would fire the request's own time-out.
   */
  async function waitOut(ms: number, done: () => boolean) {
    for (let moved = 0; moved < ms && !done(); moved += 100) {
      await new Promise((resolve) => setImmediate(resolve))
      jest.advanceTimersByTime(100)
    }
    await yieldUntil(done)
  }

  test('429 rate_limited is waited out for its Retry-After, then sent again', async () => {
    jest.useFakeTimers()
    try {
      const notices: WaitNotice[] = []
      reset((_, index) => (index === 0 ? problem(429, 'rate_limited', { 'retry-after': '1' }) : Response.json(OK)))
      let outcome: unknown
      const pending = client({ onWait: (notice) => notices.push(notice) })
        .describeImage({ file: png }, {})
        .then((result) => (outcome = result))
      await yieldUntil(() => notices.length > 0)
      // Retry-After 1 s, and up to 350 ms of jitter.
      await waitOut(2000, () => outcome !== undefined)
      await pending
      expect(outcome).toMatchObject({ ok: true, attempts: 2 })
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(1000)
      expect(notices).toEqual([{ seconds: 1, status: 429, code: 'rate_limited', attempt: 1 }])
    } finally {
      jest.useRealTimers()
    }
  })

  test('one worker told to wait holds back the others too', async () => {
    // On bun:test's clock (Date and timers, the server's too): the second is stepped through, not slept.
    jest.useFakeTimers()
    try {
      reset((_, index) => (index === 0 ? problem(503, 'overloaded', { 'retry-after': '1' }) : Response.json(OK)))
      const told = Promise.withResolvers<void>()
      const c = client({ onWait: () => told.resolve() })
      const first = c.describeImage({ file: png }, {})
      // Once the first request has been told to wait, a second one must wait for the same second.
      await told.promise
      const second = c.describeImage({ file: png }, {})
      // 100 ms at a time, loopback traffic let through in between: a request not held back arrives early.
      for (let step = 0; step < 20 && seen.length < 3; step++) {
        await new Promise((resolve) => setImmediate(resolve))
        jest.advanceTimersByTime(100)
      }
      expect((await second).ok).toBe(true)
      expect((await first).ok).toBe(true)
      expect(Math.min(seen[1]!.at, seen[2]!.at) - seen[0]!.at).toBeGreaterThanOrEqual(1000)
    } finally {
      jest.useRealTimers()
    }
  })

  test('RateLimit-Remaining: 0 pauses the next request until the window resets', async () => {
    reset((_, index) => Response.json(OK, { headers: index === 0 ? { 'ratelimit-remaining': '0', 'ratelimit-reset': '1' } : {} }))
    jest.useFakeTimers()
    try {
      const c = client()
      for (let i = 0; i < 2; i++) {
        let answered = false
        const pending = c.describeImage({ file: png }, {}).then(() => (answered = true))
        // The second request waits out the window (1 s); the first waits for nothing.
        await waitOut(i === 0 ? 0 : 2000, () => answered)
        await pending
      }
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(900)
    } finally {
      jest.useRealTimers()
    }
  })
})

describe('client: errors', () => {
  test('a 400 is never retried', async () => {
    reset(() => problem(400, 'invalid_image'))
    const outcome = await client().describeImage({ file: png }, {})
    expect(outcome).toMatchObject({ ok: false, status: 400, code: 'invalid_image', message: 'invalid_image message', attempts: 1 })
    expect(seen).toHaveLength(1)
  })

  test('429 quota_exceeded is not retried (its Retry-After is the end of the month)', async () => {
    reset(() => problem(429, 'quota_exceeded', { 'retry-after': '1' }))
    const outcome = await client().describeImage({ file: png }, {})
    expect(outcome).toMatchObject({ ok: false, status: 429, code: 'quota_exceeded', attempts: 1 })
  })

  test('a Retry-After longer than the run waits fails the image at once', async () => {
    reset(() => problem(503, 'overloaded', { 'retry-after': '3600' }))
    const outcome = await client({ maxWaitSeconds: 60 }).describeImage({ file: png }, {})
    expect(outcome).toMatchObject({ ok: false, status: 503, code: 'overloaded', attempts: 1 })
    if (!outcome.ok) expect(outcome.message).toContain('3600 s')
  })

  test('attempts are bounded', async () => {
    reset(() => problem(503, 'overloaded', { 'retry-after': '0' }))
    const outcome = await client({ maxAttempts: 3 }).describeImage({ file: png }, {})
    expect(outcome).toMatchObject({ ok: false, code: 'overloaded', attempts: 3 })
    expect(seen).toHaveLength(3)
  })

  test('a refused connection is retried a few times, then reported', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const port = closed.port
    closed.stop(true)
    const c = createClient({ url: `http://127.0.0.1:${port}`, key: 'k', userAgent: 'ua', maxNetworkAttempts: 2 })
    const outcome = await c.describeImage({ file: png }, {})
    expect(outcome).toMatchObject({ ok: false, status: 0, code: 'network_error', attempts: 2 })
  })

  test('a missing local file is reported as such, without retries', async () => {
    reset(() => Response.json(OK))
    const outcome = await client().describeImage({ file: join(dir, 'missing.png') }, {})
    expect(outcome).toMatchObject({ ok: false, code: 'file_unreadable', attempts: 1 })
    expect(seen).toHaveLength(0)
  })
})

describe('client configuration', () => {
  test('flags win over the environment; the URL loses its trailing slash', () => {
    expect(loadClientConfig({ ALTTEXT_URL: 'http://a.test/', ALTTEXT_API_KEY: 'k1' })).toEqual({ url: 'http://a.test', key: 'k1' })
    expect(loadClientConfig({ ALTTEXT_URL: 'http://a.test', ALTTEXT_API_KEY: 'k1' }, { url: 'https://b.test:8443', key: 'k2' })).toEqual({
      url: 'https://b.test:8443',
      key: 'k2',
    })
  })

  test('no key, or a URL that is no http(s) base, is a configuration error that names the variable', () => {
    expect(() => loadClientConfig({})).toThrow('ALTTEXT_API_KEY')
    expect(() => loadClientConfig({ ALTTEXT_API_KEY: 'k', ALTTEXT_URL: 'ftp://x' })).toThrow('ALTTEXT_URL')
    expect(() => loadClientConfig({ ALTTEXT_API_KEY: 'k' }, { url: 'http://u:secret@x' })).toThrow('--url')
    expect(() => loadClientConfig({ ALTTEXT_API_KEY: 'k' }, { url: 'http://u:secret@x' })).not.toThrow('secret')
  })
})

describe('progress', () => {
  const fake = (isTTY: boolean) => {
    let text = ''
    return { stream: { isTTY, columns: 100, write: (chunk: string) => (text += chunk) }, text: () => text }
  }

  test('not a terminal: one plain line per item and a summary', () => {
    const out = fake(false)
    let clock = 0
    const progress = createProgress({ stream: out.stream, noun: 'image', now: () => clock })
    progress.start(3, 2)
    clock = 1000
    progress.item('a.png', { ok: true })
    progress.item('b.png', { ok: false, detail: 'invalid_image: truncated' })
    clock = 2000
    const summary = progress.finish()
    expect(out.text()).toBe(
      '3 images to do, 2 already done (skipped)\n[1/3] ok a.png\n[2/3] failed b.png: invalid_image: truncated\n1 done, 1 failed, 2 skipped (done before), 1 not started in 2s\n',
    )
    expect(summary).toEqual({ total: 3, done: 1, failed: 1, skipped: 2, seconds: 2 })
  })

  test('one item: "1 image to do", not "1 images"', () => {
    const out = fake(false)
    const progress = createProgress({ stream: out.stream, noun: 'image', now: () => 0 })
    progress.start(1, 1)
    progress.item('a.png', { ok: true })
    progress.finish()
    expect(out.text()).toStartWith('1 image to do, 1 already done (skipped)\n')
  })

  test('a terminal: one line redrawn in place with count, rate, ETA and failures; failures above it', () => {
    const out = fake(true)
    let clock = 0
    const progress = createProgress({ stream: out.stream, noun: 'image', now: () => clock })
    progress.start(10, 0)
    clock = 2000
    progress.item('a.png', { ok: true })
    progress.item('b.png', { ok: false, detail: 'boom' })
    progress.finish()
    const text = out.text()
    expect(text).toContain('\r\x1b[2K[')
    expect(text).toContain('failed b.png: boom\n')
    expect(text).toContain('2/10 1.0/s ETA 8s 1 failed')
    expect(text.endsWith('1 done, 1 failed, 8 not started in 2s\n')).toBe(true)
  })

  test('quiet: failures and the summary only', () => {
    const out = fake(true)
    const progress = createProgress({ stream: out.stream, noun: 'image', quiet: true, now: () => 0 })
    progress.start(2, 0)
    progress.item('a.png', { ok: true })
    progress.item('b.png', { ok: false, detail: 'boom' })
    progress.note('waiting')
    progress.finish()
    expect(out.text()).toBe('[2/2] failed b.png: boom\n1 done, 1 failed in 0s\n')
  })
})
