// Webhook retries survive a crash: the service is killed (-9) while an attempt is under way, and the
// attempt counted before it was sent leaves its retry scheduled in the database; a new process on the same
// database makes it when due (here at once: its clock runs 31 s ahead, past the first 30 s wait).
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../src/shared/limits'
import { makePng } from '../support/images'
import { spawnService } from '../support/process'
import { apiClient, startTestService, waitUntil } from '../support/service'
import { crashTestParts, endedBatch, makeSecret, verifySignature, waitForDelivery } from './support'

const dir = mkdtempSync(join(tmpdir(), 'alttext-webhooks-restart-'))
const stops: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
  rmSync(dir, { recursive: true, force: true })
})

test('kill -9 during an attempt: the retry is in the database and a new process delivers it; an ended batch not yet queued is queued at start', async () => {
  const { images, database, env } = await crashTestParts(dir, stops)

  // The receiver holds the first request unanswered (the process dies meanwhile), then answers 200.
  const received: { headers: Headers; body: string }[] = []
  const { promise: never, resolve: release } = Promise.withResolvers<Response>()
  stops.push(async () => release(new Response('late')))
  const hook = images.route('/restart-hook', {
    kind: 'handler',
    fn: async (request) => {
      received.push({ headers: request.headers, body: await request.text() })
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
  const secret = await makeSecret(api, apiKey)
  const batchId = await endedBatch(api, apiKey, images.route('/restart-image.png', { kind: 'bytes', body: makePng(64, 48) }), hook)
  await waitUntil(() => received.length === 1, 'the first attempt to reach the receiver', 10_000)
  first.proc.kill(9)
  await first.exited

  const [stored] = await database.query<{ status: string; attempts: number; last_attempt_at: number; next_attempt_at: number }>(
    'SELECT status, attempts, last_attempt_at, next_attempt_at FROM webhook_deliveries WHERE batch_id = ?',
    batchId,
  )
  expect(stored).toMatchObject({ status: 'pending', attempts: 1 })
  expect(stored!.next_attempt_at - stored!.last_attempt_at).toBe(WEBHOOK_RETRY_DELAYS_SECONDS[0] * 1000)

  const second = await startTestService({
    env,
    overrides: { clock: () => Date.now() + (WEBHOOK_RETRY_DELAYS_SECONDS[0] + 1) * 1000, webhookPollMs: 50 },
  })
  stops.push(() => second.stop())
  const delivered = await waitForDelivery(second.api, apiKey, batchId, (d) => d.status === 'delivered')
  expect(delivered).toMatchObject({ attempts: 2, last_status: 200 })
  expect(received.length).toBe(2)
  expect(received.map((r) => r.headers.get('alttext-delivery'))).toEqual([delivered.id, delivered.id])
  expect(received[0]!.body).toBe(received[1]!.body)
  const secondAttempt = received[1]!
  const t = Number(secondAttempt.headers.get('alttext-signature')!.match(/t=(\d+)/)![1])
  expect(verifySignature(secondAttempt.headers.get('alttext-signature'), secondAttempt.body, secret, t)).toBe(true)

  // A crash after the batch ended but before the dispatcher queued its delivery leaves webhook_state
  // 'pending' (set in the transaction that ended the batch): the next start queues and sends it.
  await second.stop()
  await database.query('DELETE FROM webhook_deliveries WHERE batch_id = ?', batchId)
  await database.query("UPDATE batches SET webhook_state = 'pending' WHERE id = ?", batchId)
  const third = await startTestService({ env, overrides: { webhookPollMs: 50 } })
  stops.push(() => third.stop())
  const queued = await waitForDelivery(third.api, apiKey, batchId, (d) => d.status === 'delivered')
  expect(queued.id).not.toBe(delivered.id)
  expect(queued.attempts).toBe(1)
  expect(received.length).toBe(3)
  expect(JSON.parse(received[2]!.body)).toEqual(JSON.parse(received[1]!.body))
  expect((await database.query<{ state: string }>('SELECT webhook_state AS state FROM batches WHERE id = ?', batchId))[0]?.state).toBe('queued')
}, 60_000)
