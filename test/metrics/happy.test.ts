// GET /metrics over HTTP, read by a real Prometheus text parser: its values follow the traffic sent —
// requests by route template and status, a generation with its stages and its credit, a queue refusal, a
// cache hit, a batch item and its webhook — and every app has a registry of its own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { type Scrape, scrape } from '../support/metrics'
import { startTestService } from '../support/service'
import { endedBatch, FAST_WEBHOOKS, makeSecret, startReceiver, waitForDelivery } from '../webhooks/support'

let env: AltTextEnv
const metrics = () => scrape(env.service.url)

beforeAll(async () => {
  // One model slot and a deadline under twice the queue's first estimate of a generation (1 s): while the
  // slot is held, the next request cannot expect to finish in time and is refused at once.
  env = await startAltTextEnv({ env: { ALTTEXT_MODEL_CONCURRENCY: '1' }, overrides: { generationDeadlineMs: 1900, ...FAST_WEBHOOKS } })
})
afterAll(() => env.stop())

/** Waits for the access-log line of each response: the metrics of a request are counted in the same hook, after it is sent. */
async function served(...responses: { headers: Headers }[]): Promise<void> {
  for (const res of responses) await env.service.accessLine(res.headers.get('x-request-id')!)
}

const ALT_TEXT = { method: 'POST', route: '/api/alt-text' }
const stageCount = (m: Scrape, stage: string, kind = 'interactive') => m.count('alttext_generation_stage_seconds', { stage, kind })

// First in this file: the refusal needs a queue that has not yet seen a (fast) generation.
describe('a generation, a refusal and a cache hit', () => {
  test('are counted by status, stage, cache result, refusal and credit', async () => {
    const before = await metrics()
    env.ollama.behave({ hang: true })
    const held = env.generate({ image_url: env.serve(makePng(41, 31)) })
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
    const refused = await env.generate({ image_url: env.serve(makePng(42, 32)) })
    expect(refused.status).toBe(503)
    expect(refused.body.error.code).toBe('overloaded')
    env.ollama.behave({ hang: false })
    env.ollama.release()
    // Released in time it is a 200; on a very slow machine its deadline may come first (504). Either is counted.
    const first = await held
    expect([200, 504]).toContain(first.status)

    const repeated = env.serve(makePng(43, 33))
    const fresh = await env.generate({ image_url: repeated })
    const hit = await env.generate({ image_url: repeated })
    expect([fresh.status, hit.status]).toEqual([200, 200])
    expect([fresh.body.cached, hit.body.cached]).toEqual([false, true])
    await served(first, refused, fresh, hit)

    const after = await metrics()
    const delta = (name: string, labels?: Record<string, string>) => after.value(name, labels) - before.value(name, labels)
    const statuses = [first.status, refused.status, fresh.status, hit.status]
    for (const status of new Set(statuses)) {
      expect(delta('alttext_http_requests_total', { ...ALT_TEXT, status: String(status) })).toBe(statuses.filter((s) => s === status).length)
    }
    expect(after.count('alttext_http_request_duration_seconds', ALT_TEXT) - before.count('alttext_http_request_duration_seconds', ALT_TEXT)).toBe(4)
    expect(delta('alttext_queue_refusals_total')).toBe(1)
    expect(delta('alttext_cache_lookups_total', { result: 'hit' })).toBe(1)
    expect(delta('alttext_cache_lookups_total', { result: 'miss' })).toBe(3)
    expect(delta('alttext_credits_charged_total')).toBe(first.status === 200 ? 2 : 1)
    expect(stageCount(after, 'fetch') - stageCount(before, 'fetch')).toBe(4)
    // The cache lookup and the charge are quick steps, counted elsewhere (cache lookups, credits), not timed here.
    expect(stageCount(after, 'cache')).toBe(0)
    expect(stageCount(after, 'charge')).toBe(0)
    expect(stageCount(after, 'prepare') - stageCount(before, 'prepare')).toBe(3)
    expect(stageCount(after, 'queue') - stageCount(before, 'queue')).toBe(3)
    expect(stageCount(after, 'model') - stageCount(before, 'model')).toBe(2)
  })
})

describe('the exposition', () => {
  test('is the Prometheus text format, for a loopback client without a token, never cached', async () => {
    const m = await metrics()
    expect(m.status).toBe(200)
    expect(m.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(m.headers.get('cache-control')).toBe('no-store')
    const types = Object.fromEntries(m.families.map((f) => [f.name, f.type]))
    expect(types).toMatchObject({
      alttext_http_requests_total: 'COUNTER',
      alttext_http_request_duration_seconds: 'HISTOGRAM',
      alttext_generation_stage_seconds: 'HISTOGRAM',
      alttext_cache_lookups_total: 'COUNTER',
      alttext_credits_charged_total: 'COUNTER',
      alttext_queue_refusals_total: 'COUNTER',
      alttext_queue_waiting: 'GAUGE',
      alttext_queue_running: 'GAUGE',
      alttext_queue_capacity: 'GAUGE',
      alttext_model_host_up: 'GAUGE',
      alttext_model_host_in_flight: 'GAUGE',
      alttext_batch_items: 'GAUGE',
      alttext_batch_items_recorded_total: 'COUNTER',
      alttext_webhook_attempts_total: 'COUNTER',
      alttext_rate_limit_fallback_total: 'COUNTER',
      alttext_language_retries_total: 'COUNTER',
      alttext_accounts: 'GAUGE',
      process_resident_memory_bytes: 'GAUGE',
      process_cpu_seconds_total: 'COUNTER',
      alttext_event_loop_delay_seconds: 'SUMMARY',
    })
  })

  test('states: queue, model host, accounts, memory, event loop', async () => {
    const before = (await metrics()).value('alttext_accounts')
    await env.service.api.register()
    const m = await metrics()
    expect(before).toBeGreaterThanOrEqual(1)
    expect(m.value('alttext_accounts')).toBe(before + 1)
    expect(m.value('alttext_queue_capacity')).toBe(1)
    expect(m.value('alttext_queue_waiting', { kind: 'interactive' })).toBe(0)
    expect(m.value('alttext_queue_running', { kind: 'batch' })).toBe(0)
    expect(m.value('alttext_model_host_up', { host: env.ollama.url })).toBe(1)
    expect(m.value('alttext_model_host_in_flight', { host: env.ollama.url })).toBe(0)
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024)
    expect(m.value('process_cpu_seconds_total')).toBeGreaterThan(0)
    expect(m.value('process_start_time_seconds')).toBeGreaterThan(Date.now() / 1000 - 3600)
    // A summary: the quantiles since the previous scrape, the sum and count of every delay sampled.
    const [delay] = m.families.find((f) => f.name === 'alttext_event_loop_delay_seconds')!.metrics as {
      quantiles: Record<string, string>
      sum: string
      count: string
    }[]
    expect(Object.keys(delay!.quantiles).sort()).toEqual(['0.5', '0.99', '1'])
    const [p50, p99, max] = ['0.5', '0.99', '1'].map((q) => Number(delay!.quantiles[q]))
    expect(p50).toBeGreaterThanOrEqual(0)
    expect(p50).toBeLessThanOrEqual(p99!)
    expect(p99).toBeLessThanOrEqual(max!)
    expect(Number(delay!.count)).toBeGreaterThan(0)
    expect(Number(delay!.sum)).toBeGreaterThanOrEqual(0)
  })

  test('requests are counted by route template and status; an unknown path is "unmatched"', async () => {
    const before = await metrics()
    const health = await Promise.all([1, 2, 3].map(() => env.service.api.get('/health')))
    const unknown = await env.service.api.get(`/no/such/path/${crypto.randomUUID()}`)
    const batch = await env.service.api.get('/api/batches/bat_000000000000000000000000', env.key)
    expect([...health.map((r) => r.status), unknown.status, batch.status]).toEqual([200, 200, 200, 404, 404])
    await served(...health, unknown, batch)

    const after = await metrics()
    const delta = (labels: Record<string, string>) => after.value('alttext_http_requests_total', labels) - before.value('alttext_http_requests_total', labels)
    expect(delta({ method: 'GET', route: '/health', status: '200' })).toBe(3)
    expect(delta({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1)
    expect(delta({ method: 'GET', route: '/api/batches/:id', status: '404' })).toBe(1)
    const latency = (m: Scrape) => m.count('alttext_http_request_duration_seconds', { method: 'GET', route: '/health' })
    expect(latency(after) - latency(before)).toBe(3)
    // The scrape before this one is counted too, under its own route.
    expect(after.value('alttext_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(1)
  })
})

/** The series of a scrape that a PromQL selector `name{label="v", label=~"re"}` picks (`instance` is Prometheus's own). */
function selected(scraped: Scrape, selector: string): number {
  const [, name, matchers = ''] = /^(\w+)(?:\{([^}]*)\})?$/.exec(selector)!
  const tests = [...matchers.matchAll(/(\w+)\s*(=~|=)\s*"([^"]*)"/g)]
    .filter(([, label]) => label !== 'instance')
    .map(
      ([, label, op, value]) =>
        (labels: Record<string, string>) =>
          op === '=' ? labels[label!] === value : new RegExp(`^(?:${value})$`).test(labels[label!] ?? ''),
    )
  return scraped.families
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics)
    .filter((sample) => tests.every((t) => t(sample.labels ?? {}))).length
}

describe('the Grafana dashboard (docs/grafana-dashboard.json)', () => {
  test('a ratio shows 0 on a healthy service, not "No data": a numerator over series not exported yet falls back to vector(0)', async () => {
    // A fresh service that has answered only 200s: no 5xx series exists yet.
    const fresh = await startTestService()
    try {
      await fresh.api.get('/health')
      const scraped = await scrape(fresh.url)
      const dashboard = await Bun.file(new URL('../../docs/grafana-dashboard.json', import.meta.url)).json()
      const ratios = dashboard.panels.flatMap((panel: { title: string; targets?: { expr: string }[] }) =>
        (panel.targets ?? []).filter((t) => t.expr.includes(' / ')).map((t) => ({ title: panel.title, expr: t.expr })),
      )
      expect(ratios.map((r: { title: string }) => r.title)).toContain('5xx share')
      for (const { title, expr } of ratios) {
        const numerator = expr.slice(0, expr.indexOf(' / '))
        const selector = /rate\((\w+(?:\{[^}]*\})?)\[/.exec(numerator)![1]!
        const empty = selected(scraped, selector) === 0
        expect({ title, guarded: !empty || /^\(.*\) or vector\(0\)\)$/.test(numerator) }).toEqual({ title, guarded: true })
      }
    } finally {
      await fresh.stop()
    }
  })

  test('queries only metrics the service exports, and shows every family of them', async () => {
    const dashboard = await Bun.file(new URL('../../docs/grafana-dashboard.json', import.meta.url)).json()
    const exprs: string[] = dashboard.panels.flatMap((panel: { targets?: { expr: string }[] }) => (panel.targets ?? []).map((t) => t.expr))
    const queried = new Set(exprs.flatMap((expr) => [...expr.matchAll(/\b((?:alttext|process)_\w+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, ''))))
    const exported = new Set((await metrics()).families.map((f) => f.name))
    expect([...queried].filter((name) => !exported.has(name))).toEqual([])
    expect([...exported].filter((name) => !queried.has(name) && name !== 'process_start_time_seconds')).toEqual([])
  })
})

describe('batches and webhooks', () => {
  test('a batch item run to its end and its delivered webhook are counted, with the item’s stages as batch work', async () => {
    const receiver = startReceiver(env.images)
    receiver.useSecret(await makeSecret(env.service.api, env.key))
    const before = await metrics()
    const batchId = await endedBatch(env.service.api, env.key, env.serve(makePng(44, 34)), receiver.url)
    await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'delivered')

    const after = await metrics()
    const delta = (name: string, labels?: Record<string, string>) => after.value(name, labels) - before.value(name, labels)
    expect(delta('alttext_batch_items_recorded_total', { state: 'done' })).toBe(1)
    expect(delta('alttext_batch_items_recorded_total', { state: 'failed' })).toBe(0)
    expect(delta('alttext_webhook_attempts_total', { outcome: 'delivered' })).toBe(1)
    expect(delta('alttext_webhook_attempts_total', { outcome: 'failed' })).toBe(0)
    expect(delta('alttext_credits_charged_total')).toBe(1)
    expect(stageCount(after, 'model', 'batch') - stageCount(before, 'model', 'batch')).toBe(1)
    expect(stageCount(after, 'fetch', 'batch') - stageCount(before, 'fetch', 'batch')).toBe(1)
    expect(after.value('alttext_batch_items', { state: 'pending' })).toBe(0)
    expect(after.value('alttext_batch_items', { state: 'running' })).toBe(0)
  })
})

describe('one registry per app', () => {
  test('a second service in the same process counts only its own traffic', async () => {
    const other = await startTestService()
    try {
      const health = await other.api.get('/health')
      await other.accessLine(health.headers.get('x-request-id')!)
      const theirs = await scrape(other.url)
      expect(theirs.value('alttext_http_requests_total', { method: 'GET', route: '/health', status: '200' })).toBe(1)
      expect(theirs.value('alttext_http_requests_total', { method: 'POST', route: '/api/alt-text', status: '200' })).toBe(0)
      expect(theirs.value('alttext_accounts')).toBe(0)
      const ours = await metrics()
      expect(ours.value('alttext_http_requests_total', { method: 'POST', route: '/api/alt-text', status: '200' })).toBeGreaterThanOrEqual(2)
    } finally {
      await other.stop()
    }
  })
})
