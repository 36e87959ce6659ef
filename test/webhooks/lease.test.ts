// An attempt claims its delivery for ALTTEXT_BATCH_LEASE_SECONDS and renews the claim while it runs, so an
// attempt longer than the lease keeps it. A process killed (-9) during the last attempt of a delivery
// leaves no retry scheduled; once the claim's lease ends, the next process makes the attempt again, under
// the same Alttext-Delivery id: at least once, also for the last attempt.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makePng } from '../support/images'
import { spawnService } from '../support/process'
import { apiClient, startTestService, waitUntil } from '../support/service'
import { CRASH_TEST_LEASE_SECONDS as LEASE_SECONDS, crashTestParts, endedBatch, makeSecret, waitForDelivery } from './support'

const dir = mkdtempSync(join(tmpdir(), 'alttext-webhooks-lease-'))
const stops: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
  rmSync(dir, { recursive: true, force: true })
})

test('kill -9 during the last attempt: after its claim lapses the next process attempts it again, with the same delivery id', async () => {
  const { images, database, env } = await crashTestParts(dir, stops)

  // The receiver holds the first request unanswered (the process dies meanwhile), then answers 200.
  const received: Headers[] = []
  const { promise: never, resolve: release } = Promise.withResolvers<Response>()
  stops.push(async () => release(new Response('late')))
  const hook = images.route('/lease-hook', {
    kind: 'handler',
    fn: async (request) => {
      received.push(request.headers)
      return received.length === 1 ? never : new Response('ok')
    },
  })

  const first = await spawnService(env)
  stops.push(async () => {
    if (first.proc.exitCode === null && first.proc.signalCode === null) first.proc.kill(9)
    await first.exited
  })
  const api = apiClient(first.url)
  const { apiKey } = await api.register()
  await makeSecret(api, apiKey)
  const batchId = await endedBatch(api, apiKey, images.route('/lease-image.png', { kind: 'bytes', body: makePng(64, 48) }), hook)
  await waitUntil(() => received.length === 1, 'the first attempt to reach the receiver', 10_000)
  first.proc.kill(9)
  await first.exited

  // Make the attempt under way the delivery's ninth and last: no retry was scheduled for it.
  await database.query('UPDATE webhook_deliveries SET attempts = 9, next_attempt_at = NULL WHERE batch_id = ?', batchId)

  const lapsed = LEASE_SECONDS * 1000 + 1000
  const second = await startTestService({ env, overrides: { clock: () => Date.now() + lapsed, webhookPollMs: 50 } })
  stops.push(() => second.stop())
  const delivered = await waitForDelivery(second.api, apiKey, batchId, (d) => d.status === 'delivered')
  expect(delivered).toMatchObject({ attempts: 10, last_status: 200 })
  expect(received.map((headers) => headers.get('alttext-delivery'))).toEqual([delivered.id, delivered.id])
}, 60_000)

test('an attempt that outlasts the lease keeps its claim: its process renews it while the receiver is silent', async () => {
  // The lease (5 s) is shorter than the webhook timeout (10 s): only its renewals keep the claim.
  const { images, database, env } = await crashTestParts(mkdtempSync(join(dir, 'renewed-')), stops)
  const received: Headers[] = []
  const { promise: answer, resolve: release } = Promise.withResolvers<Response>()
  stops.push(async () => release(new Response('late')))
  const hook = images.route('/renewed-hook', {
    kind: 'handler',
    fn: async (request) => {
      received.push(request.headers)
      return answer
    },
  })
  const service = await startTestService({ env })
  stops.push(() => service.stop())
  const { apiKey } = await service.api.register()
  await makeSecret(service.api, apiKey)
  const batchId = await endedBatch(service.api, apiKey, images.route('/renewed-image.png', { kind: 'bytes', body: makePng(66, 48) }), hook)
  await waitUntil(() => received.length === 1, 'the attempt to reach the receiver', 10_000)
  const leaseUntil = async () =>
    (await database.query<{ lease_until: number | null }>('SELECT lease_until FROM webhook_deliveries WHERE batch_id = ?', batchId))[0]!.lease_until
  const claimedUntil = (await leaseUntil())!
  // While the receiver keeps the attempt waiting, its claim moves on (a third of the lease apart).
  await waitUntil(async () => ((await leaseUntil()) ?? 0) > claimedUntil, 'the claim to be renewed', 3 * LEASE_SECONDS * 1000)
  release(new Response('ok'))
  const delivered = await waitForDelivery(service.api, apiKey, batchId, (d) => d.status === 'delivered')
  expect(delivered).toMatchObject({ attempts: 1, last_status: 200 })
  expect(received).toHaveLength(1)
  // Recorded: the claim ended with it.
  expect(await leaseUntil()).toBeNull()
}, 60_000)
