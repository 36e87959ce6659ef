// Scenario 15: a Prometheus scrape of GET /metrics on an installation with 10 000 accounts and 1 000 API
// keys. A copy of the small database is grown with the scale seed (lib/seed.ts: 10 000 accounts with
// two keys each, no cache rows), then all but the first 1 000 seeded keys are deleted. The service runs
// with ALTTEXT_METRICS_TOKEN set, as a scraper from another machine would need; some traffic of every
// kind first fills the registry (routes and statuses, stages, cache hits, a 404). Per round, scrape.ts
// sends GET /health and GET /metrics alternately on one connection; /metrics must stay ≤ 5 ms at p50 and
// p99, with /health of the same run as the baseline.
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { ScrapeResult } from '../scrape'
import { type Account, anomalies, BENCH_DIR, BUN, type Fixtures, log, loopback, QUICK, ROUNDS, serviceEnv } from '../lib/common'
import { runForResult, startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { seedDatabase } from '../lib/seed'
import { figure, median, percentile } from '../lib/stats'

export const METRICS = { accounts: 10_000, keys: 1_000, iterations: QUICK ? 200 : 1000, warmup: 50, limitMs: 5 }
const SCENARIO = '15 metrics'
const TOKEN = 'bench-metrics-token-0123456789abcdef'

export type MetricsRound = ScrapeResult & { accounts: number; series: number }

/** A sample's value in the exposition (a metric without labels), NaN when absent. */
const sampleValue = (exposition: string, name: string) => Number(exposition.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1] ?? Number.NaN)

export async function measureMetrics(fx: Fixtures, smallDb: string, account: Account): Promise<MetricsRound[]> {
  log(`scenario 15 (/metrics): ${METRICS.accounts} accounts, ${METRICS.keys} keys; ${METRICS.iterations} scrapes per round, ${ROUNDS} rounds`)
  const dir = join(fx.dir, 'metrics')
  mkdirSync(dir, { recursive: true })
  const dbPath = join(dir, 'alttext.db')
  copyFileSync(smallDb, dbPath)
  if (existsSync(`${smallDb}-wal`)) copyFileSync(`${smallDb}-wal`, `${dbPath}-wal`)
  const seeded = seedDatabase(dbPath, METRICS.accounts, 0)
  const db = new Database(dbPath)
  try {
    db.run(`DELETE FROM api_keys WHERE label = 'seed' AND id NOT IN (SELECT id FROM api_keys WHERE label = 'seed' ORDER BY id LIMIT ?)`, [METRICS.keys])
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  } finally {
    db.close()
  }
  log(`seeded ${seeded.accounts} accounts in ${(seeded.ms / 1000).toFixed(1)} s; kept ${METRICS.keys} of their ${seeded.keys} keys`)

  const service = await startService(fx.binary, serviceEnv(fx, dbPath, fx.ollamaFast, { ALTTEXT_METRICS_TOKEN: TOKEN }), join(fx.logDir, 'metrics.log'))
  try {
    // Traffic of every kind, so the scrape carries the series a service in use has.
    const send = (path: string, init: RequestInit = {}) =>
      fetch(loopback(service.url + path), { ...init, signal: AbortSignal.timeout(15_000) }).then(async (r) => {
        await r.arrayBuffer()
        return r.status
      })
    const keyed = { 'x-api-key': account.apiKey }
    const post = (path: string, body: unknown) =>
      send(path, { method: 'POST', headers: { 'content-type': 'application/json', ...keyed }, body: JSON.stringify(body) })
    for (const [i, image] of [fx.images.small, ...fx.images.intake].entries()) {
      for (let repeat = 0; repeat < 2; repeat++) {
        const status = await post('/api/alt-text', { image_url: fx.imageOrigin + image.path, context: `metrics ${i}` })
        if (status !== 200) anomalies.push(`metrics: seeding generation ${i} answered ${status}`)
      }
    }
    await Promise.all([
      send('/api/usage', { headers: keyed }),
      send('/api/keys', { headers: keyed }),
      send('/api/history', { headers: keyed }),
      send('/ready'),
      send('/no/such/path'),
      post('/api/alt-text', { image_url: 'https://127.0.0.1:1/none.png' }),
      post('/api/validate-key', { api_key: account.apiKey }),
    ])

    const rounds: MetricsRound[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const result = await runForResult<ScrapeResult>('scrape', [BUN, join(BENCH_DIR, 'scrape.ts')], {
        BENCH_SCRAPE: JSON.stringify({ url: service.url, token: TOKEN, iterations: METRICS.iterations, warmup: METRICS.warmup }),
      })
      const r: MetricsRound = {
        ...result,
        accounts: sampleValue(result.exposition, 'alttext_accounts'),
        series: result.exposition.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length,
      }
      rounds.push(r)
      if (!(r.accounts >= METRICS.accounts)) anomalies.push(`metrics round ${round + 1}: the scrape counted ${r.accounts} accounts`)
      log(
        `metrics round ${round + 1}: /metrics p50 ${median(r.metrics).toFixed(2)} ms, p99 ${percentile(r.metrics, 99).toFixed(2)} ms; ` +
          `/health p50 ${median(r.health).toFixed(2)} ms, p99 ${percentile(r.health, 99).toFixed(2)} ms; ` +
          `${r.series} samples, ${(r.bytes / 1024).toFixed(1)} KiB; ${JSON.stringify(r.statuses)}`,
      )
    }
    return rounds
  } finally {
    await service.stop()
  }
}

export function metricsRows(rounds: MetricsRound[]): Row[] {
  const p = (pick: (r: MetricsRound) => number[], q: number) => figure(rounds.map((r) => percentile(pick(r), q)))
  const scrapes = (r: MetricsRound) => r.metrics
  const health = (r: MetricsRound) => r.health
  const rows: Row[] = []
  for (const q of [50, 99]) {
    const value = p(scrapes, q)
    rows.push({
      scenario: SCENARIO,
      figure: `GET /metrics p${q}, ${METRICS.accounts} accounts and ${METRICS.keys} keys (one connection, with the bearer token)`,
      unit: 'ms',
      value,
      baseline: { label: `GET /health p${q}`, value: p(health, q) },
      target: `≤ ${METRICS.limitMs} ms`,
      met: value.max <= METRICS.limitMs,
    })
  }
  rows.push(
    {
      scenario: SCENARIO,
      figure: 'GET /metrics answers other than 200',
      unit: 'count',
      value: figure(
        rounds.map((r) => Object.entries(r.statuses).reduce((n, [key, count]) => n + (key.startsWith('/metrics ') && key !== '/metrics 200' ? count : 0), 0)),
      ),
      target: '0',
      met: rounds.every((r) => Object.keys(r.statuses).every((key) => !key.startsWith('/metrics ') || key === '/metrics 200')),
    },
    { scenario: SCENARIO, figure: 'exposition size', unit: 'bytes', value: figure(rounds.map((r) => r.bytes)), met: null },
    { scenario: SCENARIO, figure: 'samples in the exposition', unit: 'count', value: figure(rounds.map((r) => r.series)), met: null },
    { scenario: SCENARIO, figure: 'accounts the scrape counted (alttext_accounts)', unit: 'count', value: figure(rounds.map((r) => r.accounts)), met: null },
  )
  return rows
}
