// Shared by the webhook tests: a real loopback HTTPS receiver that checks every delivery's signature the
// way docs/webhooks.md tells receivers to, and batches that end with a webhook_url (made through the API).
import { verifyAlttextSignature } from '../../docs/examples/cms-receiver'
import type { Overrides } from '../../src/app'
import { engineDatabase } from '../support/database'
import { startFakeOllama } from '../support/fake-ollama'
import { type HttpsImageServer, startHttpsImageServer } from '../support/https-image-server'
import { advanceUntil, type ManualScheduler } from '../support/scheduler'
import { type Api, waitUntil } from '../support/service'

/** Small waits so a test sees retries at once; the service itself waits 30 s, 1 min, 2 min … */
export const FAST_WEBHOOKS: Overrides = { webhookRetryDelaysMs: [50, 100, 150], webhookPollMs: 50, webhookTimeoutMs: 2000 }

/** The receiver's check: the example receiver's own (docs/examples/cms-receiver.ts), so the docs' code is what the tests trust. */
export const verifySignature = (header: string | null, rawBody: string, secret: string, nowSeconds?: number): boolean =>
  verifyAlttextSignature(header, rawBody, secret, nowSeconds)

export type Received = { headers: Headers; body: string; json: any; verified: boolean }

export type Receiver = {
  url: string
  /** Every request received, in order. */
  received: Received[]
  /** The status the receiver answers next (200 by default). */
  answer(status: number): void
  /** The secret the receiver checks signatures with. */
  useSecret(secret: string): void
  waitFor(count: number, timeoutMs?: number): Promise<void>
}

let receivers = 0

export function startReceiver(server: HttpsImageServer): Receiver {
  const received: Received[] = []
  let status = 200
  let secret = ''
  const url = server.route(`/hook-${process.pid}-${++receivers}`, {
    kind: 'handler',
    fn: async (request) => {
      const body = await request.text()
      let json: unknown
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      received.push({ headers: request.headers, body, json, verified: verifySignature(request.headers.get('alttext-signature'), body, secret) })
      return new Response(status === 200 ? 'ok' : 'not now', { status })
    },
  })
  return {
    url,
    received,
    answer: (next) => {
      status = next
    },
    useSecret: (next) => {
      secret = next
    },
    waitFor: (count, timeoutMs = 10_000) => waitUntil(() => received.length >= count, `${count} webhook deliveries`, timeoutMs),
  }
}

/** Makes the account's webhook secret and returns it. */
export async function makeSecret(api: Api, key: string): Promise<string> {
  const res = await api.request('POST', '/api/webhook-secret', { key })
  if (res.status !== 201) throw new Error(`webhook secret: ${res.status} ${res.text}`)
  return res.body.secret as string
}

/** Creates a one-item batch that calls `webhookUrl` when it ends, and waits until it has ended. */
export async function endedBatch(api: Api, key: string, imageUrl: string, webhookUrl: string): Promise<string> {
  const created = await api.request('POST', '/api/batches', {
    key,
    body: { items: [{ image_url: imageUrl, metadata: { sku: 'A-1' } }], webhook_url: webhookUrl },
  })
  if (created.status !== 202) throw new Error(`batch: ${created.status} ${created.text}`)
  const id = created.body.id as string
  await waitUntil(async () => (await api.get(`/api/batches/${id}`, key)).body.status === 'completed', `batch ${id} to complete`, 10_000)
  return id
}

export async function deliveries(api: Api, key: string): Promise<any[]> {
  const res = await api.get('/api/webhook-deliveries', key)
  if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${res.text}`)
  return res.body.items
}

/**
 * Waits until the account's delivery of `batchId` satisfies `done`, and returns it. With a manual scheduler
 * (the service's), moves it `stepMs` between looks instead of waiting for the dispatcher's real timers.
 */
export async function waitForDelivery(
  api: Api,
  key: string,
  batchId: string,
  done: (delivery: any) => boolean,
  { timeoutMs = 10_000, scheduler, stepMs = 50 }: { timeoutMs?: number; scheduler?: ManualScheduler; stepMs?: number } = {},
): Promise<any> {
  let found: any
  const reached = async () => {
    found = (await deliveries(api, key)).find((d) => d.batch_id === batchId)
    return found !== undefined && done(found)
  }
  const what = `the delivery of ${batchId}`
  if (scheduler) await advanceUntil(scheduler, reached, what, { stepMs, timeoutMs })
  else await waitUntil(reached, what, timeoutMs)
  return found
}

/** What a crash test spawns its service processes with: a fake model, an image host and a database of the test's engine, each stopped by `stops`. */
/** ALTTEXT_BATCH_LEASE_SECONDS of the crash tests' processes. */
export const CRASH_TEST_LEASE_SECONDS = 5

export async function crashTestParts(dir: string, stops: (() => Promise<unknown>)[]) {
  const ollama = await startFakeOllama({ reply: 'A red kite over a beach.' })
  stops.push(() => ollama.stop())
  const images = await startHttpsImageServer()
  stops.push(() => images.stop())
  const database = await engineDatabase(dir)
  stops.push(() => database.close())
  const env = {
    ...database.env,
    OLLAMA_HOST: ollama.url,
    ALTTEXT_MODEL: 'llava',
    ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: images.caPath,
    ALTTEXT_RATE_LIMITS: 'off',
    // The shortest claim on an attempt (5 s): a killed process's lapses before the first retry is due (30 s).
    ALTTEXT_BATCH_LEASE_SECONDS: String(CRASH_TEST_LEASE_SECONDS),
  }
  return { images, database, env }
}
