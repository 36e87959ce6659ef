// Webhook delivery slots are shared fairly between accounts: one account whose receivers hang holds at
// most its own share, so another account's delivery goes out at once instead of waiting for them.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT } from '../../src/shared/limits'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { waitUntil } from '../support/service'
import { endedBatch, makeSecret, startReceiver, waitForDelivery } from './support'

let env: AltTextEnv
let imageUrl: string

beforeAll(async () => {
  // The hanging receivers must stay hanging for the whole test: an attempt's timeout far beyond it (the
  // service stops them at the end), so nothing here waits for a timeout to pass.
  env = await startAltTextEnv({ overrides: { webhookTimeoutMs: 600_000, webhookPollMs: 50, webhookRetryDelaysMs: [50] } })
  imageUrl = env.serve(makePng(64, 48))
})
afterAll(() => env.stop())

test("24 hanging receivers of one account do not hold back another account's delivery", async () => {
  const hanging = `/hanging-receiver-${process.pid}`
  const hangingUrl = env.images.route(hanging, { kind: 'hang' })
  await makeSecret(env.service.api, env.key)
  await Promise.all(Array.from({ length: 24 }, () => endedBatch(env.service.api, env.key, imageUrl, hangingUrl)))
  const open = () => env.images.slowResponses(hanging)
  await waitUntil(() => open().length >= WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT, "the first account's attempts to reach its hanging receiver")

  const other = await env.service.api.register()
  const receiver = startReceiver(env.images)
  receiver.useSecret(await makeSecret(env.service.api, other.apiKey))
  const batchId = await endedBatch(env.service.api, other.apiKey, imageUrl, receiver.url)
  await receiver.waitFor(1)
  const delivered = await waitForDelivery(env.service.api, other.apiKey, batchId, (d) => d.status === 'delivered')
  expect(delivered.attempts).toBe(1)
  expect(receiver.received[0]!.verified).toBe(true)

  // It went out while every attempt of the first account was still hanging, and that account never held
  // more than its share of the slots.
  const started = open()
  expect(started.length).toBe(WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT)
  expect(await Promise.race([...started.map((r) => r.ended), Bun.sleep(0).then(() => 'hanging')])).toBe('hanging')
}, 30_000)
