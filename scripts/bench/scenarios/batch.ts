// Scenario 12: batches. The fake model at a fixed 1 s, 4 model slots. 200 items (two batches of 100, the
// most one batch may hold, created together; each item a distinct cache key) must complete at >= 95 % of
// the model's capacity (4 items/s: 50 s ideal), and single calls made while they run (one every 2 s,
// from another account) must keep a p95 wait for a model slot <= 1.5 s (the queue stage of their
// Server-Timing; the baseline is the same calls with no batch running). With single calls taking slots
// too, the capacity used counts their model time as well as the items'.
import { anomalies, type Account, type Fixtures, log, loopback, ROUNDS, register, serviceEnv } from '../lib/common'
import { startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, percentile } from '../lib/stats'
import { join } from 'node:path'

export const BATCH = { items: 200, perBatch: 100, modelMs: 1000, concurrency: 4, singleEveryMs: 2000, share: 0.95, p95WaitMs: 1500, baselineCalls: 8 }

export type BatchRound = {
  /** Items only, no single calls: seconds from the first create to the last item's end. */
  aloneSeconds: number
  aloneShare: number
  /** With single calls: seconds, and the share of model capacity used by items and single calls together. */
  mixedSeconds: number
  mixedShare: number
  singles: number
  singleWaitsMs: number[]
  singleTotalsMs: number[]
  baselineWaitsMs: number[]
  failedItems: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function call(url: string, key: string, path: string, body?: unknown): Promise<{ status: number; body: any; timing: string | null }> {
  const response = await fetch(loopback(`${url}${path}`), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  })
  return { status: response.status, body: await response.json(), timing: response.headers.get('server-timing') }
}

const queueMs = (timing: string | null) => Number(/(?:^|,\s*)queue;dur=([\d.]+)/.exec(timing ?? '')?.[1] ?? 0)

/** Creates the batches at once and waits until every one has ended; seconds from creation to the last end (server times). */
async function runItems(url: string, account: Account, tag: string, imageUrl: string): Promise<{ seconds: number; failed: number }> {
  const creates = []
  for (let start = 0; start < BATCH.items; start += BATCH.perBatch) {
    const items = Array.from({ length: BATCH.perBatch }, (_, i) => ({ image_url: imageUrl, context: `${tag} item ${start + i}` }))
    creates.push(call(url, account.apiKey, '/api/batches', { items }))
  }
  const created = await Promise.all(creates)
  for (const res of created) if (res.status !== 202) throw new Error(`POST /api/batches answered ${res.status}: ${JSON.stringify(res.body)}`)
  const ids = created.map((res) => res.body.id as string)
  const deadline = Date.now() + 300_000
  for (;;) {
    const views = await Promise.all(ids.map((id) => call(url, account.apiKey, `/api/batches/${id}`)))
    if (views.every((view) => view.body.completed_at !== null)) {
      const begin = Math.min(...views.map((view) => Date.parse(view.body.created_at)))
      const end = Math.max(...views.map((view) => Date.parse(view.body.completed_at)))
      return { seconds: (end - begin) / 1000, failed: views.reduce((sum, view) => sum + view.body.failed, 0) }
    }
    if (Date.now() > deadline) throw new Error('the batches did not end within 300 s')
    await sleep(250)
  }
}

export async function measureBatch(fx: Fixtures): Promise<BatchRound[]> {
  log(
    `scenario 12 (batches): ${BATCH.items} items, model ${BATCH.modelMs} ms, ${BATCH.concurrency} slots, single calls every ${BATCH.singleEveryMs} ms, ${ROUNDS} rounds`,
  )
  const service = await startService(
    fx.binary,
    serviceEnv(fx, join(fx.dir, 'db-batch', 'alttext.db'), fx.ollamaSlow, { ALTTEXT_MODEL_CONCURRENCY: String(BATCH.concurrency) }),
    join(fx.logDir, 'batch.log'),
  )
  const imageUrl = fx.imageOrigin + fx.images.small.path
  const capacity = BATCH.concurrency / (BATCH.modelMs / 1000)
  const rounds: BatchRound[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const owner = await register(service.url, `batch-owner-${round}@example.com`)
      const single = await register(service.url, `batch-single-${round}@example.com`)
      let calls = 0
      const singleCall = async (waits: number[], totals: number[]) => {
        const started = performance.now()
        const res = await call(service.url, single.apiKey, '/api/alt-text', { image_url: imageUrl, context: `r${round} single ${++calls}` })
        if (res.status !== 200) anomalies.push(`batch round ${round + 1}: a single call answered ${res.status}`)
        else {
          waits.push(queueMs(res.timing))
          totals.push(performance.now() - started)
        }
      }

      // Baseline: single calls with no batch running.
      const baselineWaitsMs: number[] = []
      for (let i = 0; i < BATCH.baselineCalls; i++) await singleCall(baselineWaitsMs, [])

      // The items alone.
      const alone = await runItems(service.url, owner, `r${round} alone`, imageUrl)
      const aloneShare = BATCH.items / capacity / alone.seconds

      // The items with single calls beside them.
      const singleWaitsMs: number[] = []
      const singleTotalsMs: number[] = []
      let running = true
      const singles: Promise<void>[] = []
      const pacer = (async () => {
        await sleep(1000)
        while (running) {
          singles.push(singleCall(singleWaitsMs, singleTotalsMs))
          await sleep(BATCH.singleEveryMs)
        }
      })()
      const mixed = await runItems(service.url, owner, `r${round} mixed`, imageUrl)
      running = false
      await pacer
      await Promise.all(singles)
      // Model time used in the window: the items' and the single calls' (each one model call).
      const mixedShare = (BATCH.items + singleWaitsMs.length) / capacity / mixed.seconds
      const failedItems = alone.failed + mixed.failed
      if (failedItems) anomalies.push(`batch round ${round + 1}: ${failedItems} items failed`)
      rounds.push({
        aloneSeconds: alone.seconds,
        aloneShare,
        mixedSeconds: mixed.seconds,
        mixedShare,
        singles: singleWaitsMs.length,
        singleWaitsMs,
        singleTotalsMs,
        baselineWaitsMs,
        failedItems,
      })
      log(
        `batch round ${round + 1}: alone ${alone.seconds.toFixed(1)} s (${(aloneShare * 100).toFixed(1)} % of capacity); with ${singleWaitsMs.length} single calls ` +
          `${mixed.seconds.toFixed(1)} s (${(mixedShare * 100).toFixed(1)} % used), single-call wait p95 ${percentile(singleWaitsMs, 95).toFixed(0)} ms ` +
          `(baseline ${percentile(baselineWaitsMs, 95).toFixed(0)} ms)`,
      )
    }
  } finally {
    await service.stop()
  }
  return rounds
}

export function batchRows(rounds: BatchRound[]): Row[] {
  const scenario = '12 batches'
  const ideal = BATCH.items / (BATCH.concurrency / (BATCH.modelMs / 1000))
  const aloneShare = figure(rounds.map((r) => r.aloneShare))
  const mixedShare = figure(rounds.map((r) => r.mixedShare))
  const p95 = figure(rounds.map((r) => percentile(r.singleWaitsMs, 95)))
  return [
    {
      scenario,
      figure: `${BATCH.items} items (2 × ${BATCH.perBatch}), model ${BATCH.modelMs / 1000} s, ${BATCH.concurrency} slots: time to complete`,
      unit: 'ms',
      value: figure(rounds.map((r) => r.aloneSeconds * 1000)),
      baseline: { label: 'ideal', value: ideal * 1000 },
      ratio: { kind: 'x', value: figure(rounds.map((r) => 1 / r.aloneShare)) },
      target: `≤ ${(1 / BATCH.share).toFixed(3)}× ideal (≥ ${BATCH.share * 100} % of capacity)`,
      met: aloneShare.median >= BATCH.share,
    },
    {
      scenario,
      figure: `the same with a single call every ${BATCH.singleEveryMs / 1000} s: capacity used (items + single calls)`,
      unit: 'x',
      value: mixedShare,
      target: `≥ ${BATCH.share}`,
      met: mixedShare.median >= BATCH.share,
    },
    {
      scenario,
      figure: 'single calls during the batch: wait for a model slot, p95',
      unit: 'ms',
      value: p95,
      baseline: { label: 'no batch', value: figure(rounds.map((r) => percentile(r.baselineWaitsMs, 95))) },
      target: `≤ ${BATCH.p95WaitMs} ms`,
      met: p95.max <= BATCH.p95WaitMs,
    },
    {
      scenario,
      figure: 'single calls during the batch: whole answer, p95',
      unit: 'ms',
      value: figure(rounds.map((r) => percentile(r.singleTotalsMs, 95))),
      met: null,
    },
    { scenario, figure: 'single calls during the batch', unit: 'count', value: figure(rounds.map((r) => r.singles)), met: null },
    {
      scenario,
      figure: 'failed items',
      unit: 'count',
      value: figure(rounds.map((r) => r.failedItems)),
      target: '0',
      met: rounds.every((r) => r.failedItems === 0),
    },
  ]
}
