// The plugin's bulk run against a real WordPress and the real service (fake model): the estimate read
// from /api/usage before it starts, a PHP killed in the middle of an image (the run resumes and sends
// no image twice), and the quota (the run stops cleanly, and goes on when the credits come back).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { makePng } from '../support/images'
import { startTestService, type TestService, waitUntil } from '../support/service'
import { makeOrg, type Member } from '../webhooks/org-support'
import { startWordPress, type WordPress } from '../support/wordpress'

const CREDITS = 5
let now = Date.UTC(2026, 11, 7, 12, 0, 0)
let wp: WordPress
let ollama: FakeOllama
let service: TestService
let owner: Member
let size = 60

beforeAll(async () => {
  // Short chunks and a short WP-Cron lock: after a kill, the run's next chunk is due in seconds, not a minute.
  wp = await startWordPress({ constants: { WP_CRON_LOCK_TIMEOUT: 1, ALTTEXT_BULK_CHUNK_SECONDS: 1 } })
  ollama = await startFakeOllama({ reply: 'A lighthouse on a rocky point at dusk.' })
  service = await startTestService({
    env: { OLLAMA_HOST: ollama.url, ALTTEXT_MODEL: 'llava', ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_FREE_CREDITS: String(CREDITS) },
    overrides: { clock: () => now },
  })
  owner = (await makeOrg(service, 'Harbour blog')).owner
}, 120_000)

afterAll(async () => {
  await wp?.stop()
  await service?.stop()
  await ollama?.stop()
})

/** Images that reach the library while no service is set: none has a suggestion or an alt text yet. */
async function uploadUndescribed(count: number): Promise<number[]> {
  await wp.setOptions({ alttext_service_url: '' })
  const ids: number[] = []
  for (let i = 0; i < count; i++) {
    size += 1
    const res = await wp.upload(makePng(size, 24), `harbour-${size}.png`, 'image/png')
    expect(res.status).toBe(201)
    ids.push(res.id)
  }
  await wp.setOptions({ alttext_service_url: service.url, alttext_api_key: owner.key, alttext_mode: 'suggest' })
  return ids
}

const bulk = async () => (await wp.rest('/alttext/v1/bulk')).body
const attachment = async (id: number) => (await wp.rest(`/alttext/v1/attachments/${id}`)).body

/** Runs WP-Cron, as visits would, until the run is no longer running. */
async function runToEnd() {
  await waitUntil(
    async () => {
      await wp.cron()
      return (await bulk()).state !== 'running'
    },
    'the bulk run to stop running',
    30_000,
  )
  return bulk()
}

/** This site's suggestions in the service, per attachment: how many each image got. */
async function suggestionsPerAttachment(): Promise<Map<string, number>> {
  const listed = await service.api.get('/api/suggestions?mine=true&target_kind=wordpress-attachment&limit=100', owner.key)
  expect(listed.status).toBe(200)
  const counts = new Map<string, number>()
  for (const s of listed.body.suggestions) counts.set(String(s.target.ref), (counts.get(String(s.target.ref)) ?? 0) + 1)
  return counts
}

describe('bulk', () => {
  test('the estimate comes from /api/usage before anything is sent', async () => {
    const ids = await uploadUndescribed(3)
    const before = await bulk()
    expect(before).toMatchObject({ state: 'idle', remaining_images: 3, estimate_credits: 3, credits_remaining: CREDITS })
    expect(ollama.chatRequests().length + ollama.generateRequests().length).toBe(0)
    for (const id of ids) expect((await attachment(id)).state).toBe('none')
  }, 60_000)

  test('PHP killed in the middle of an image: the run resumes, and no image is sent twice', async () => {
    const ids = (await wp.wpJson(
      'return array_map("intval", get_posts(["post_type" => "attachment", "post_status" => "inherit", "fields" => "ids", "numberposts" => -1, "orderby" => "ID", "order" => "ASC"]));',
    )) as number[]
    expect(ids.length).toBe(3)
    // The model holds its answer: the first image is in flight when PHP dies.
    ollama.behave({ hang: true })
    expect((await wp.rest('/alttext/v1/bulk', { json: { action: 'start' } })).body.state).toBe('running')
    const chunk = wp.cron().catch(() => 'killed')
    await waitUntil(() => ollama.inFlight() === 1, 'the first image at the model')
    wp.kill()
    expect(await chunk).toBe('killed')
    // Whether the service finishes what the dead PHP asked or drops it, the resumed run must not make a second.
    ollama.behave({ hang: false })
    ollama.release()
    await waitUntil(() => ollama.inFlight() === 0, 'the model to be done with the first image')
    await wp.restart()

    const after = await runToEnd()
    expect(after).toMatchObject({ state: 'done', done: 3, failed: 0, total: 3, remaining_images: 0 })
    const counts = await suggestionsPerAttachment()
    expect([...counts.keys()].sort()).toEqual(ids.map(String).sort())
    for (const n of counts.values()) expect(n).toBe(1)
    for (const id of ids) expect(await attachment(id)).toMatchObject({ state: 'pending', proposed_alt: 'A lighthouse on a rocky point at dusk.' })
  }, 90_000)

  test('the quota: the run stops cleanly with the images done kept, and goes on when credits come back', async () => {
    // 3 of the 5 credits are used: 2 are left for 4 images.
    const ids = await uploadUndescribed(4)
    const estimate = await bulk()
    expect(estimate).toMatchObject({ remaining_images: 4, estimate_credits: 4, credits_remaining: 2 })
    const started = (await wp.rest('/alttext/v1/bulk', { json: { action: 'start' } })).body
    expect(started.message).toContain('2 credits are left for 4 images')
    const stopped = await runToEnd()
    expect(stopped).toMatchObject({ state: 'paused_quota', done: 2, failed: 0, remaining_images: 2 })
    expect(stopped.message).toContain('credits')
    const states = await Promise.all(ids.map(async (id) => (await attachment(id)).state))
    expect(states.filter((s) => s === 'pending').length).toBe(2)
    expect(states.filter((s) => s === 'none').length).toBe(2)

    // Next month: the same Start goes on with the two left, and nothing done is sent again.
    now = Date.UTC(2027, 0, 2, 12, 0, 0)
    expect((await bulk()).credits_remaining).toBe(CREDITS)
    expect((await wp.rest('/alttext/v1/bulk', { json: { action: 'start' } })).body.total).toBe(2)
    expect(await runToEnd()).toMatchObject({ state: 'done', done: 2, failed: 0, remaining_images: 0 })
    for (const n of (await suggestionsPerAttachment()).values()) expect(n).toBe(1)
    expect((await suggestionsPerAttachment()).size).toBe(7)
  }, 90_000)
})
