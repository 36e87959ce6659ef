// One account holds at most its share of the intake (fetches and preparations in flight), over HTTP
// against the real service. Its images past the share wait their turn while other accounts are
// served; a wait that outlasts the request's deadline is a truthful 503 overloaded; a client that
// hangs up frees its share at once. The share is held by downloads from a host that never answers
// (or answers when the test says), so nothing here depends on timing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { IntakeUsage } from '../../src/intake/types.ts'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env.ts'
import { makePng } from '../support/images.ts'
import { waitUntil } from '../support/service.ts'

type Answer = { status: number; headers: Headers; body: { error: { code: string; message: string } } } | 'hung up'

let paths = 0

/** POST /api/alt-text that the test can hang up on; `done` settles with the answer, or 'hung up'. */
function abandonable(env: AltTextEnv, imageUrl: string, key: string): { hangUp(): void; done: Promise<Answer> } {
  const controller = new AbortController()
  const done = fetch(`${env.service.url}/api/alt-text`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ image_url: imageUrl }),
    signal: controller.signal,
  }).then(
    async (res): Promise<Answer> => ({ status: res.status, headers: res.headers, body: (await res.json()) as { error: { code: string; message: string } } }),
    () => 'hung up' as const,
  )
  return { hangUp: () => controller.abort(), done }
}

/** A URL whose host accepts the request and never answers, and its path (for the server's hit count). */
function hangingImage(env: AltTextEnv): { path: string; url: string } {
  const path = `/owner-share/hang-${++paths}`
  return { path, url: env.images.route(path, { kind: 'hang' }) }
}

describe('a share of two', () => {
  let env: AltTextEnv
  beforeAll(async () => {
    env = await startAltTextEnv({ overrides: { intakeOptions: { maxInFlightPerOwner: 2 } } })
  })
  afterAll(() => env.stop())

  test("the account's third and fourth image wait while another account is served", async () => {
    const owner = await env.service.api.register()
    const images = Array.from({ length: 4 }, () => hangingImage(env))
    const requests = images.map((image) => abandonable(env, image.url, owner.apiKey))
    const started = () => images.filter((image) => env.images.hits(image.path) > 0).length
    await waitUntil(() => started() === 2, 'two of the four downloads to start')

    const other = await env.service.api.register()
    expect((await env.generate({ image_url: env.serve(makePng(40, 30)) }, other.apiKey)).status).toBe(200)
    // Only the account's share ever reached the image host.
    expect(started()).toBe(2)
    for (const request of requests) request.hangUp()
    await Promise.all(requests.map((request) => request.done))
  })

  test('a client that hangs up mid-download frees its share at once: the next image of the account starts', async () => {
    const owner = await env.service.api.register()
    const [first, second, third] = [hangingImage(env), hangingImage(env), hangingImage(env)]
    const a = abandonable(env, first.url, owner.apiKey)
    const b = abandonable(env, second.url, owner.apiKey)
    await env.images.waitForRequest(first.path)
    await env.images.waitForRequest(second.path)
    const c = abandonable(env, third.url, owner.apiKey)
    // Another account's image, sent after the third, is served while the third still waits.
    const other = await env.service.api.register()
    expect((await env.generate({ image_url: env.serve(makePng(41, 30)) }, other.apiKey)).status).toBe(200)
    expect(env.images.hits(third.path)).toBe(0)

    a.hangUp()
    expect(await a.done).toBe('hung up')
    expect(await env.images.slowResponses(first.path)[0]!.ended).toBe('client-gone')
    await env.images.waitForRequest(third.path)
    b.hangUp()
    c.hangUp()
    await Promise.all([b.done, c.done])
  })
})

describe('a wait past the deadline', () => {
  const DEADLINE_MS = 1500
  let env: AltTextEnv
  let usage: IntakeUsage = { decodeBytes: 0, waiting: 0 }
  beforeAll(async () => {
    env = await startAltTextEnv({
      overrides: { generationDeadlineMs: DEADLINE_MS, intakeOptions: { maxInFlightPerOwner: 1, observe: (now) => (usage = now) } },
    })
  })
  afterAll(() => env.stop())

  test('is 503 overloaded with Retry-After, not a model timeout; a download cut by the deadline stays 400', async () => {
    const owner = await env.service.api.register()
    // The first image arrives when the test says; meanwhile its download holds the account's share.
    let answer!: () => void
    const answered = new Promise<void>((resolve) => (answer = resolve))
    const slowPath = '/owner-share/when-told.png'
    const slow = env.images.route(slowPath, {
      kind: 'handler',
      fn: async () => {
        await answered
        return new Response(makePng(30, 20), { headers: { 'content-type': 'image/png' } })
      },
    })
    const first = abandonable(env, slow, owner.apiKey)
    await env.images.waitForRequest(slowPath)
    // The second (whose deadline is later) waits for the share, then holds it with a download that never ends.
    const hanging = hangingImage(env)
    const second = abandonable(env, hanging.url, owner.apiKey)
    await waitUntil(() => usage.waiting === 1, 'the second image to wait for the share')
    answer()
    await env.images.waitForRequest(hanging.path)

    // So the first image, fetched, waits to be prepared until its own deadline.
    const waited = await first.done
    expect(waited).not.toBe('hung up')
    if (waited === 'hung up') return
    expect(waited.status).toBe(503)
    expect(waited.body.error.code).toBe('overloaded')
    expect(waited.body.error.message).toMatch(/^this account already had 1 image being fetched or prepared, and this one had to wait past the deadline/)
    expect(waited.headers.get('retry-after')).toBe('5')
    expect(env.ollama.chatRequests()).toHaveLength(0)

    const cut = await second.done
    expect(cut).not.toBe('hung up')
    if (cut === 'hung up') return
    expect(cut.status).toBe(400)
    expect(cut.body.error).toMatchObject({ code: 'invalid_image_url', message: expect.stringMatching(/did not arrive before the deadline/) })
  })
})
