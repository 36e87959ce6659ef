// Scenario 19: replicas on PostgreSQL + Redis (issue 24, point 5), against SQLite mode in the same run.
// (a) Latency: an authenticated GET /api/usage at an open-loop 1 000 requests/s (stream.ts), one SQLite
//     service and one PostgreSQL + Redis service, alternately (the first 250 ms of each stream left out);
//     target: PG p99 within 1 ms of SQLite's.
// (b) Scaling: a fake model with a fixed delay, each replica its own host and slots; the same number of
//     alt-text calls (distinct cache keys) through one replica, then split evenly over two (pool-client.ts,
//     one per replica, closed loop at twice the slots; no HAProxy: the client splits them). Targets: two
//     take ≤ 0.55× one's time, and the slots are ≥ 95 % busy (sum of the answers' Server-Timing `model`
//     stage over slots × time from first request to last answer). Plain calls, not the batch API.
// The cluster and Redis are throwaway ones of test/support, on loopback, stopped at the end.
import { mkdirSync } from 'node:fs'
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
  streamMs: QUICK ? 1500 : 4000,
  /** The stream's first requests open its connections: left out. */
  warmupMs: 250,
  p99LimitMs: 1,
  modelMs: 100,
  slots: 4,
  calls: QUICK ? 120 : 500,
  ratioLimit: 0.55,
  busyShare: 0.95,
}
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
}

/** Latencies of the 200 answers after the warm-up; the rest counted as errors. */
function usageLatencies(result: StreamResult): { ms: number[]; errors: number } {
  const samples = result.health.filter((s) => s.atMs >= REPLICAS.warmupMs)
  const ok = samples.filter((s) => s.status === 200)
  return { ms: ok.map((s) => s.ms), errors: samples.length - ok.length }
}

async function usageStream(service: ServiceHandle, key: string): Promise<StreamResult> {
  return runForResult<StreamResult>('stream', [BUN, join(BENCH_DIR, 'stream.ts')], {
    BENCH_STREAM: JSON.stringify({
      url: loopback(service.url),
      durationMs: REPLICAS.streamMs,
      healthIntervalMs: 1000 / REPLICAS.ratePerSecond,
      path: '/api/usage',
      headers: { 'x-api-key': key },
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

export async function measureReplicas(fx: Fixtures): Promise<ReplicasRound[]> {
  log(
    `scenario 19 (replicas): GET /api/usage at ${REPLICAS.ratePerSecond}/s for ${REPLICAS.streamMs} ms, SQLite vs PostgreSQL + Redis; ` +
      `${REPLICAS.calls} alt-text calls, model ${REPLICAS.modelMs} ms, ${REPLICAS.slots} slots per replica, one vs two replicas; ${ROUNDS} rounds`,
  )
  const dir = join(fx.dir, 'replicas')
  mkdirSync(dir, { recursive: true })
  const cluster = await sharedPostgres()
  const redis = await startRedis()
  const services: ServiceHandle[] = []
  try {
    const databaseUrl = await cluster.createDatabase()
    const pgEnv = { ALTTEXT_DATABASE_URL: databaseUrl, ALTTEXT_REDIS_URL: redis.url }
    const sqlite = await startService(fx.binary, serviceEnv(fx, join(dir, 'sqlite.db'), fx.ollamaFast), join(fx.logDir, 'replicas-sqlite.log'))
    services.push(sqlite)
    const postgres = await startService(fx.binary, serviceEnv(fx, join(dir, 'unused.db'), fx.ollamaFast, pgEnv), join(fx.logDir, 'replicas-pg.log'))
    services.push(postgres)
    const sqliteKey = (await register(sqlite.url, 'replicas-sqlite@example.com')).apiKey
    const pgKey = (await register(postgres.url, 'replicas-pg@example.com')).apiKey

    // (b)'s replicas: each with a model host of its own (fixed delay) and its own slots.
    const hosts = await Promise.all(
      [0, 1].map((i) => spawnReady(`fake ollama ${i} (${REPLICAS.modelMs} ms)`, [BUN, join(BENCH_DIR, 'fixtures.ts'), 'ollama', String(REPLICAS.modelMs)])),
    )
    const replicas: ServiceHandle[] = []
    for (const [i, host] of hosts.entries()) {
      const replica = await startService(
        fx.binary,
        serviceEnv(fx, join(dir, 'unused.db'), loopback(String(host.info.url)), {
          ...pgEnv,
          ALTTEXT_MODEL_CONCURRENCY: String(REPLICAS.slots),
          ALTTEXT_MAX_IMAGES_PER_ACCOUNT: String(REPLICAS.slots * 2),
        }),
        join(fx.logDir, `replicas-${i}.log`),
      )
      replicas.push(replica)
      services.push(replica)
    }
    const imageUrl = fx.imageOrigin + fx.images.small.path

    const rounds: ReplicasRound[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const usage: Record<string, { ms: number[]; errors: number }> = {}
      for (const [label, service, key] of inRoundOrder(
        [
          ['sqlite', sqlite, sqliteKey],
          ['postgres', postgres, pgKey],
        ] as const,
        round,
      )) {
        usage[label] = usageLatencies(await usageStream(service, key))
      }
      // Warm both replicas (a generation each), then one replica alone, then both.
      const warm = await callBatch(replicas, pgKey, imageUrl, `warm-r${round}`, REPLICAS.slots * 2 * replicas.length)
      if (warm.errors) anomalies.push(`replicas round ${round + 1}: ${warm.errors} warm-up alt-text answers were not 200`)
      const one = await callBatch([replicas[0]!], pgKey, imageUrl, `one-r${round}`)
      const two = await callBatch(replicas, pgKey, imageUrl, `two-r${round}`)
      const r: ReplicasRound = {
        sqliteUsageMs: usage.sqlite!.ms,
        postgresUsageMs: usage.postgres!.ms,
        usageErrors: usage.sqlite!.errors + usage.postgres!.errors,
        oneMs: one.ms,
        twoMs: two.ms,
        oneBusy: one.busy,
        twoBusy: two.busy,
        callErrors: one.errors + two.errors,
      }
      if (r.usageErrors) anomalies.push(`replicas round ${round + 1}: ${r.usageErrors} GET /api/usage answers were not 200`)
      if (r.callErrors) anomalies.push(`replicas round ${round + 1}: ${r.callErrors} alt-text answers were not 200`)
      rounds.push(r)
      log(
        `replicas round ${round + 1}: /api/usage p50/p99 SQLite ${median(r.sqliteUsageMs).toFixed(2)}/${percentile(r.sqliteUsageMs, 99).toFixed(2)} ms, ` +
          `PG+Redis ${median(r.postgresUsageMs).toFixed(2)}/${percentile(r.postgresUsageMs, 99).toFixed(2)} ms; ` +
          `${REPLICAS.calls} calls: one ${(r.oneMs / 1000).toFixed(2)} s (busy ${(r.oneBusy * 100).toFixed(1)} %), ` +
          `two ${(r.twoMs / 1000).toFixed(2)} s (busy ${(r.twoBusy * 100).toFixed(1)} %), ratio ${(r.twoMs / r.oneMs).toFixed(3)}×`,
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
  return [
    `Replicas, GET /api/usage p99 PG+Redis − SQLite: ${diff.toFixed(2)} ms, target ≤ ${REPLICAS.p99LimitMs} ms: ${diff <= REPLICAS.p99LimitMs ? 'PASS' : 'FAIL'}`,
    `Replicas, two vs one replica: ${ratio.toFixed(3)}×, target ≤ ${REPLICAS.ratioLimit}×: ${ratio <= REPLICAS.ratioLimit ? 'PASS' : 'FAIL'}`,
  ]
}

export function replicasRows(rounds: ReplicasRound[]): Row[] {
  const p = (pick: (r: ReplicasRound) => number[], q: number) => figure(rounds.map((r) => percentile(pick(r), q)))
  const rows: Row[] = []
  const at = `${REPLICAS.ratePerSecond}/s open loop, ${REPLICAS.streamMs / 1000} s`
  for (const q of [50, 99]) {
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
      figure: `model slots busy, two replicas, ${REPLICAS.calls} calls (not the batch API)`,
      unit: 'x',
      value: busy,
      baseline: { label: 'one replica', value: figure(rounds.map((r) => r.oneBusy)) },
      target: `≥ ${REPLICAS.busyShare}× (${REPLICAS.busyShare * 100} %)`,
      met: busy.median >= REPLICAS.busyShare,
    },
    {
      scenario: SCENARIO,
      figure: 'answers other than 200',
      unit: 'count',
      value: figure(rounds.map((r) => r.usageErrors + r.callErrors)),
      target: '0',
      met: rounds.every((r) => r.usageErrors + r.callErrors === 0),
    },
  )
  return rows
}
