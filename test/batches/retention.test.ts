// Retention: an ended batch and its results are deleted ALTTEXT_BATCH_RETENTION_DAYS after it ended (the
// runner purges at start and hourly); until then it stays. Business time is moved with the clock override.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type FakeOllama, startFakeOllama } from '../support/fake-ollama'
import { type HttpsImageServer, startHttpsImageServer } from '../support/https-image-server'
import { makePng } from '../support/images'
import { startTestService, waitUntil } from '../support/service'
import { batchClient } from './support'

const DAY = 86_400_000

let ollama: FakeOllama
let images: HttpsImageServer
let dir: string

beforeAll(async () => {
  ;[ollama, images] = await Promise.all([startFakeOllama({ reply: 'A lighthouse on a rocky coast at dusk.' }), startHttpsImageServer()])
  dir = mkdtempSync(join(tmpdir(), 'alttext-batch-retention-'))
})
afterAll(async () => {
  await Promise.all([ollama.stop(), images.stop()])
  rmSync(dir, { recursive: true, force: true })
})

const serviceAt = (now: number) =>
  startTestService({
    dir,
    env: {
      OLLAMA_HOST: ollama.url,
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: images.caPath,
      ALTTEXT_RATE_LIMITS: 'off',
      ALTTEXT_BATCH_RETENTION_DAYS: '7',
    },
    overrides: { clock: () => now },
  })

test('an ended batch stays for ALTTEXT_BATCH_RETENTION_DAYS, then it is deleted with its items', async () => {
  const t0 = Date.UTC(2026, 10, 2)
  const first = await serviceAt(t0)
  const account = await first.api.register()
  const created = await batchClient(first.api, account.apiKey).create({
    items: [{ image_url: images.route('/kept.png', { kind: 'bytes', body: makePng(20, 20) }) }],
  })
  await batchClient(first.api, account.apiKey).ended(created.body.id)
  await first.stop()

  const sixDays = await serviceAt(t0 + 6 * DAY)
  expect((await batchClient(sixDays.api, account.apiKey).get(created.body.id)).status).toBe(200)
  await sixDays.stop()

  const eightDays = await serviceAt(t0 + 8 * DAY)
  const client = batchClient(eightDays.api, account.apiKey)
  // The purge at start runs beside the first requests: await it.
  await waitUntil(async () => (await client.get(created.body.id)).status === 404, 'the purge')
  expect((await client.list()).body.items).toEqual([])
  expect(eightDays.logs.some((line) => line.msg === 'ended batches deleted after their retention time' && line.deleted === 1)).toBe(true)
  await eightDays.stop()
})
