// Scenario 19: replicas on PostgreSQL + Redis (issue 24, point 5), against SQLite mode in the same run.
// (a) Latency: an authenticated GET /api/usage at an open-loop 1 000 requests/s (stream.ts) from 1 000
//     clients in turn (X-Forwarded-For), rate limits on: one SQLite service, one PostgreSQL + Redis service
//     (Redis's script on every request's path); one stream a round that goes to each in turn, 250 ms
//     each, so both meet the same moments of a shared machine (each one's first slice left out);
//     target: PG p99 within 1 ms of SQLite's.
// (b) Scaling: a fake model with a fixed delay, each replica its own host and slots; the same number of
//     alt-text calls (distinct cache keys) through one replica, then split evenly over two (pool-client.ts,
//     one per replica, closed loop at twice the slots; no HAProxy: the client splits them). Target: two
//     take ≤ 0.55× one's time; the slots' busy share is shown (the answers' Server-Timing `model` stage).
// (c) A 500-item batch (5 × 100, the most one batch holds, created at once, alternately on two other
//     replicas, as a load balancer would send them): both replicas' runners share the items. Target: the
//     model hosts' slots ≥ 95 % busy from the first call's start to the last one's end (the hosts write
//     when each answer goes out; BENCH_OLLAMA_ENDS in fixtures.ts).
// BENCH_REPLICAS=usage,calls,batch picks the parts (all by default).
// The cluster and Redis are throwaway ones of test/support, on loopback, stopped at the end.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { sharedPostgres } from '../../../test/support/postgres'
import { startRedis } from '../../../test/support/redis'
import type { PoolResult } from '../pool-client'
import type { StreamResult } from '../stream'
import { anomalies, BENCH_DIR, BUN, type Fixtures, inRoundOrder, log, loopback, QUICK, ROUNDS, register, serviceEnv } from '../lib/common'
import { runForResult, type ServiceHandle, spawnReady, startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, median, percentile } from '../lib/stats'

export const REPLICAS = {
  ratePerSecond: 1000,
  /** One stream a round, to both services in turn, `sliceMs` each. */
  streamMs: QUICK ? 3000 : 8000,
  sliceMs: 250,
  /** The stream's first requests open its connections (each service's first slice): left out. */
  warmupMs: 500,
  /** (a)'s clients (X-Forwarded-For in turn): each stays far below the 60 a minute of its rate limit. */
  clients: 1000,
  p99LimitMs: 1,
  modelMs: 100,
  slots: 4,
  calls: QUICK ? 120 : 500,
  ratioLimit: 0.55,
  busyShare: 0.95,
  /** (c): a batch of this many items (in batches of MAX_BATCH_ITEMS, created alternately on the two replicas). */
  batchItems: QUICK ? 200 : 500,
  /**
   * (c)'s model: 500 ms a call, so that the 2 shared cores (image fetch and preparation, the store's
   * transactions: a few ms an item) do not stand in for the slots; 500 items then take 31 s at best.
   */
  batchModelMs: 500,
  perBatch: 100,
}
/** BENCH_REPLICAS=usage,calls,batch (default all): the parts to measure, for a short run while profiling. */
const PARTS = new Set((process.env.BENCH_REPLICAS ?? 'usage,calls,batch').split(',').map((part) => part.trim()))
const SCENARIO = '19 replicas'

export type ReplicasRound = {
  sqliteUsageMs: number[]
  postgresUsageMs: number[]
  usageErrors: number
  oneMs: number
  twoMs: number
  oneBusy: number
  twoBusy: number
  callErrors: number
  /** (c): first item's start to last item's end (ms), slots busy in it, items not done. */
  batchMs: number
  batchBusy: number
  batchFailed: number
  /** Items each model host answered (one per replica). */
  batchPerHost: number[]
}

/** Latencies of one target's 200 answers after the warm-up (each target's first slice); the rest counted as errors. */
function usageLatencies(result: StreamResult, target: number): { ms: number[]; errors: number } {
  const samples = result.health.filter((s) => s.target === target && s.atMs >= REPLICAS.warmupMs)
  const ok = samples.filter((s) => s.status === 200)
  return { ms: ok.map((s) => s.ms), errors: samples.length - ok.length }
}

/** One open-loop stream that goes to each service in turn, `sliceMs` each: both meet the same noise. */
async function usageStream(targets: { service: ServiceHandle; key: string }[]): Promise<StreamResult> {
  return runForResult<StreamResult>('stream', [BUN, join(BENCH_DIR, 'stream.ts')], {
    BENCH_STREAM: JSON.stringify({
      url: loopback(targets[0]!.service.url),
      targets: targets.map((t) => ({ url: loopback(t.service.url), headers: { 'x-api-key': t.key } })),
      sliceMs: REPLICAS.sliceMs,
      durationMs: REPLICAS.streamMs,
      healthIntervalMs: 1000 / REPLICAS.ratePerSecond,
      path: '/api/usage',
      clients: REPLICAS.clients,
    }),
  })
}

/** `calls` alt-text calls split evenly over `services`, each with its own client process; time to the last answer and the slots' busy share. */
async function callBatch(
  services: ServiceHandle[],
  key: string,
  imageUrl: string,
  prefix: string,
  calls = REPLICAS.calls,
): Promise<{ ms: number; busy: number; errors: number }> {
  const share = Math.ceil(calls / services.length)
  const results = await Promise.all(
    services.map((service, i) =>
      runForResult<PoolResult>('pool-client', [BUN, join(BENCH_DIR, 'pool-client.ts')], {
        BENCH_POOL: JSON.stringify({
          mode: 'service',
          url: loopback(service.url),
          key,
          imageUrl,
          inFlight: REPLICAS.slots * 2,
          total: share,
          prefix: `${prefix}-${i}`,
          lifetimeMs: 300_000,
        }),
      }),
    ),
  )
  const answers = results.flatMap((r) => r.answers)
  const ms = Math.max(...results.map((r) => Math.max(...r.answers.map((a) => a.endMs)) - Math.min(...r.answers.map((a) => a.startMs))))
  const modelMs = answers.reduce((sum, a) => sum + (a.modelMs ?? 0), 0)
  return { ms, busy: modelMs / (REPLICAS.slots * services.length * ms), errors: answers.filter((a) => a.status !== 200).length }
}

async function call(url: string, key: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(loopback(`${url}${path}`), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  })
  return { status: response.status, body: await response.json() }
}

/**
 * (c) `batchItems` items in batches of `perBatch`, created at once, alternately on the replicas (as a load
 * balancer would send them); waits until every batch completed. The model hosts write when each answer is
 * sent (`endsFiles`): a call began `modelMs` before. Busy share: the calls' model time over the slots ×
 * the time from the first call's start to the last one's end.
 */
async function runBatch(replicas: ServiceHandle[], key: string, imageUrl: string, tag: string, endsFiles: string[], modelMs: number) {
  for (const file of endsFiles) rmSync(file, { force: true })
  const creates = []
  for (let start = 0, i = 0; start < REPLICAS.batchItems; start += REPLICAS.perBatch, i++) {
    const items = Array.from({ length: Math.min(REPLICAS.perBatch, REPLICAS.batchItems - start) }, (_, n) => ({
      image_url: imageUrl,
      context: `${tag} item ${start + n}`,
    }))
    creates.push(call(replicas[i % replicas.length]!.url, key, '/api/batches', { items }))
  }
  const created = await Promise.all(creates)
  for (const res of created) if (res.status !== 202) throw new Error(`POST /api/batches answered ${res.status}: ${JSON.stringify(res.body)}`)
  const ids = created.map((res) => res.body.id as string)
  const deadline = Date.now() + 300_000
  let failed = 0
  let cached = 0
  for (;;) {
    const views = await Promise.all(ids.map((id) => call(replicas[0]!.url, key, `/api/batches/${id}`)))
    if (views.every((view) => view.body.completed_at !== null)) {
      failed = views.reduce((sum, view) => sum + view.body.failed, 0)
      cached = views.reduce((sum, view) => sum + view.body.items.filter((item: { result?: { cached?: boolean } }) => item.result?.cached).length, 0)
      break
    }
    if (Date.now() > deadline) throw new Error('the batches did not end within 300 s')
    await Bun.sleep(100)
  }
  const ends = endsFiles.map((file) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []))
  const all = ends.flat()
  const first = Math.min(...all) - modelMs
  const last = Math.max(...all)
  const ms = last - first
  return { ms, busy: (all.length * modelMs) / (REPLICAS.slots * replicas.length * ms), failed, cached, perHost: ends.map((e) => e.length) }
}

export async function measureReplicas(fx: Fixtures): Promise<ReplicasRound[]> {
  log(
    `scenario 19 (replicas): GET /api/usage at ${REPLICAS.ratePerSecond}/s for ${REPLICAS.streamMs} ms, SQLite and PostgreSQL + Redis in turn every ${REPLICAS.sliceMs} ms; ` +
      `${REPLICAS.calls} alt-text calls, model ${REPLICAS.modelMs} ms, ${REPLICAS.slots} slots per replica, one vs two replicas; ${ROUNDS} rounds`,
  )
  const dir = join(fx.dir, 'replicas')
  mkdirSync(dir, { recursive: true })
  const cluster = await sharedPostgres()
  const redis = await startRedis()
  const services: ServiceHandle[] = []
  try {
    const databaseUrl = await cluster.createDatabase()
    // (a) as deployed: rate limits on (in Redis for PostgreSQL mode), behind a proxy that names the client.
    const limited = { ALTTEXT_RATE_LIMITS: 'on', ALTTEXT_TRUST_PROXY: '1' }
    const sqlite = await startService(fx.binary, serviceEnv(fx, join(dir, 'sqlite.db'), fx.ollamaFast, limited), join(fx.logDir, 'replicas-sqlite.log'))
    services.push(sqlite)
    // A database of its own: on the replicas' one, its batch runner would take (c)'s items too.
    const usageEnv = { ALTTEXT_DATABASE_URL: await cluster.createDatabase(), ALTTEXT_REDIS_URL: redis.url, ...limited }
    const postgres = await startService(fx.binary, serviceEnv(fx, join(dir, 'unused.db'), fx.ollamaFast, usageEnv), join(fx.logDir, 'replicas-pg.log'))
    services.push(postgres)
    const sqliteKey = (await register(sqlite.url, 'replicas-sqlite@example.com')).apiKey
    const pgKey = (await register(postgres.url, 'replicas-pg@example.com')).apiKey

    /** Two replicas on `databaseUrl`, each with a model host of its own (a fixed delay) and its own slots. */
    const startReplicas = async (tag: string, modelMs: number, databaseUrl: string, endsFiles: string[] = []) => {
      const hosts = await Promise.all(
        [0, 1].map((i) =>
          spawnReady(
            `fake ollama ${tag}-${i} (${modelMs} ms)`,
            [BUN, join(BENCH_DIR, 'fixtures.ts'), 'ollama', String(modelMs)],
            endsFiles[i] ? { BENCH_OLLAMA_ENDS: endsFiles[i] } : {},
          ),
        ),
      )
      const started: ServiceHandle[] = []
      for (const [i, host] of hosts.entries()) {
        const replica = await startService(
          fx.binary,
          serviceEnv(fx, join(dir, 'unused.db'), loopback(String(host.info.url)), {
            ALTTEXT_DATABASE_URL: databaseUrl,
            ALTTEXT_REDIS_URL: redis.url,
            ALTTEXT_MODEL_CONCURRENCY: String(REPLICAS.slots),
            ALTTEXT_MAX_IMAGES_PER_ACCOUNT: String(REPLICAS.slots * 2),
          }),
          join(fx.logDir, `replicas-${tag}-${i}.log`),
        )
        started.push(replica)
        services.push(replica)
      }
      return started
    }
    // (b) and (c) on databases of their own: a replica runs the batches of its database.
    const replicas = PARTS.has('calls') ? await startReplicas('calls', REPLICAS.modelMs, databaseUrl) : []
    const endsFiles = [0, 1].map((i) => join(dir, `model-${i}-ends.txt`))
    const batchReplicas = PARTS.has('batch') ? await startReplicas('batch', REPLICAS.batchModelMs, await cluster.createDatabase(), endsFiles) : []
    const imageUrl = fx.imageOrigin + fx.images.small.path
    const replicaKey = replicas[0] ? (await register(replicas[0].url, 'replicas-calls@example.com')).apiKey : ''
    const batchKey = batchReplicas[0] ? (await register(batchReplicas[0].url, 'replicas-batch@example.com')).apiKey : ''

    const rounds: ReplicasRound[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const usage: Record<string, { ms: number[]; errors: number }> = {}
      const order = inRoundOrder(
        [
          ['sqlite', sqlite, sqliteKey],
          ['postgres', postgres, pgKey],
        ] as const,
        round,
      )
      const streamed = PARTS.has('usage') ? await usageStream(order.map(([, service, key]) => ({ service, key }))) : null
      for (const [i, [label]] of order.entries()) usage[label] = streamed ? usageLatencies(streamed, i) : { ms: [0], errors: 0 }
      // Warm both replicas (a generation each), then one replica alone, then both.
      const none = { ms: 0, busy: 0, errors: 0 }
      if (PARTS.has('calls')) {
        const warm = await callBatch(replicas, replicaKey, imageUrl, `warm-r${round}`, REPLICAS.slots * 2 * replicas.length)
        if (warm.errors) anomalies.push(`replicas round ${round + 1}: ${warm.errors} warm-up alt-text answers were not 200`)
      }
      const one = PARTS.has('calls') ? await callBatch([replicas[0]!], replicaKey, imageUrl, `one-r${round}`) : none
      const two = PARTS.has('calls') ? await callBatch(replicas, replicaKey, imageUrl, `two-r${round}`) : none
      const batch = PARTS.has('batch')
        ? await runBatch(batchReplicas, batchKey, imageUrl, `batch-r${round}`, endsFiles, REPLICAS.batchModelMs)
        : { ms: 0, busy: 0, failed: 0, cached: 0, perHost: [] }
      const r: ReplicasRound = {
        sqliteUsageMs: usage.sqlite!.ms,
        postgresUsageMs: usage.postgres!.ms,
        usageErrors: usage.sqlite!.errors + usage.postgres!.errors,
        oneMs: one.ms,
        twoMs: two.ms,
        oneBusy: one.busy,
        twoBusy: two.busy,
        callErrors: one.errors + two.errors,
        batchMs: batch.ms,
        batchBusy: batch.busy,
        batchFailed: batch.failed,
        batchPerHost: batch.perHost,
      }
      if (batch.cached) anomalies.push(`replicas round ${round + 1}: ${batch.cached} batch items were answered from the cache`)
      if (r.batchFailed) anomalies.push(`replicas round ${round + 1}: ${r.batchFailed} batch items failed`)
      if (r.usageErrors) anomalies.push(`replicas round ${round + 1}: ${r.usageErrors} GET /api/usage answers were not 200`)
      if (r.callErrors) anomalies.push(`replicas round ${round + 1}: ${r.callErrors} alt-text answers were not 200`)
      rounds.push(r)
      log(
        `replicas round ${round + 1}: /api/usage p50/p99 SQLite ${median(r.sqliteUsageMs).toFixed(2)}/${percentile(r.sqliteUsageMs, 99).toFixed(2)} ms, ` +
          `PG+Redis ${median(r.postgresUsageMs).toFixed(2)}/${percentile(r.postgresUsageMs, 99).toFixed(2)} ms; ` +
          `${REPLICAS.calls} calls: one ${(r.oneMs / 1000).toFixed(2)} s (busy ${(r.oneBusy * 100).toFixed(1)} %), ` +
          `two ${(r.twoMs / 1000).toFixed(2)} s (busy ${(r.twoBusy * 100).toFixed(1)} %), ratio ${(r.twoMs / r.oneMs).toFixed(3)}×; ` +
          `batch of ${REPLICAS.batchItems}: ${(r.batchMs / 1000).toFixed(2)} s, slots busy ${(r.batchBusy * 100).toFixed(1)} %, items per host ${r.batchPerHost.join('/')}`,
      )
    }
    return rounds
  } finally {
    await Promise.all(services.map((service) => service.stop()))
    await redis.close()
    await cluster.stop()
  }
}

/** The verdict lines for the log and the report. */
export function replicasVerdicts(rounds: ReplicasRound[]): string[] {
  const diff = median(rounds.map((r) => percentile(r.postgresUsageMs, 99) - percentile(r.sqliteUsageMs, 99)))
  const ratio = median(rounds.map((r) => r.twoMs / r.oneMs))
  const batchBusy = median(rounds.map((r) => r.batchBusy))
  return [
    `Replicas, GET /api/usage p99 PG+Redis − SQLite: ${diff.toFixed(2)} ms, target ≤ ${REPLICAS.p99LimitMs} ms: ${diff <= REPLICAS.p99LimitMs ? 'PASS' : 'FAIL'}`,
    `Replicas, two vs one replica: ${ratio.toFixed(3)}×, target ≤ ${REPLICAS.ratioLimit}×: ${ratio <= REPLICAS.ratioLimit ? 'PASS' : 'FAIL'}`,
    `Replicas, ${REPLICAS.batchItems}-item batch on two replicas, model slots busy: ${(batchBusy * 100).toFixed(1)} %, target ≥ ${REPLICAS.busyShare * 100} %: ${batchBusy >= REPLICAS.busyShare ? 'PASS' : 'FAIL'}`,
  ]
}

export function replicasRows(rounds: ReplicasRound[]): Row[] {
  const p = (pick: (r: ReplicasRound) => number[], q: number) => figure(rounds.map((r) => percentile(pick(r), q)))
  const rows: Row[] = []
  const at = `${REPLICAS.ratePerSecond}/s open loop, rate limits on, in turn with SQLite every ${REPLICAS.sliceMs} ms`
  for (const q of [50, 90, 99]) {
    rows.push({
      scenario: SCENARIO,
      figure: `GET /api/usage p${q}, PostgreSQL + Redis (${at})`,
      unit: 'ms',
      value: p((r) => r.postgresUsageMs, q),
      baseline: { label: `SQLite p${q}`, value: p((r) => r.sqliteUsageMs, q) },
      met: null,
    })
  }
  const diff = figure(rounds.map((r) => percentile(r.postgresUsageMs, 99) - percentile(r.sqliteUsageMs, 99)))
  rows.push({
    scenario: SCENARIO,
    figure: 'GET /api/usage p99, PostgreSQL + Redis − SQLite',
    unit: 'ms',
    value: diff,
    target: `≤ ${REPLICAS.p99LimitMs} ms`,
    met: diff.median <= REPLICAS.p99LimitMs,
  })
  const ratio = figure(rounds.map((r) => r.twoMs / r.oneMs))
  rows.push({
    scenario: SCENARIO,
    figure: `${REPLICAS.calls} alt-text calls, two replicas ÷ one (model ${REPLICAS.modelMs} ms, ${REPLICAS.slots} slots each)`,
    unit: 'x',
    value: ratio,
    baseline: { label: 'one replica', value: figure(rounds.map((r) => r.oneMs)), unit: 'ms' },
    target: `≤ ${REPLICAS.ratioLimit}×`,
    met: ratio.median <= REPLICAS.ratioLimit,
  })
  const busy = figure(rounds.map((r) => r.twoBusy))
  rows.push(
    {
      scenario: SCENARIO,
      figure: `model slots busy, two replicas, ${REPLICAS.calls} plain calls`,
      unit: 'x',
      value: busy,
      baseline: { label: 'one replica', value: figure(rounds.map((r) => r.oneBusy)) },
      met: null,
    },
    {
      scenario: SCENARIO,
      figure: `model slots busy, a ${REPLICAS.batchItems}-item batch (${REPLICAS.batchItems / REPLICAS.perBatch} × ${REPLICAS.perBatch}) on two replicas (model ${REPLICAS.batchModelMs} ms, ${REPLICAS.slots} slots each)`,
      unit: 'x',
      value: figure(rounds.map((r) => r.batchBusy)),
      baseline: { label: 'first item start to last end', value: figure(rounds.map((r) => r.batchMs)), unit: 'ms' },
      target: `≥ ${REPLICAS.busyShare}× (${REPLICAS.busyShare * 100} %)`,
      met: median(rounds.map((r) => r.batchBusy)) >= REPLICAS.busyShare,
    },
    {
      scenario: SCENARIO,
      figure: 'answers other than 200, failed batch items',
      unit: 'count',
      value: figure(rounds.map((r) => r.usageErrors + r.callErrors + r.batchFailed)),
      target: '0',
      met: rounds.every((r) => r.usageErrors + r.callErrors + r.batchFailed === 0),
    },
  )
  return rows
}
