// Scenario 4: queueing. Model answer time 1 s, concurrency 2, 40 requests at once with distinct cache
// keys, after two warm-up generations (so the queue has measured its time per generation).
import { join } from 'node:path'
import type { BurstAnswer, BurstResult } from '../burst'
import { type Account, anomalies, BENCH_DIR, BUN, type Fixtures, log, ROUNDS, serviceEnv } from '../lib/common'
import { runForResult, startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, median } from '../lib/stats'

export const QUEUE = { modelMs: 1000, concurrency: 2, burst: 40, deadlineMs: 15_000, share: 0.9 }

export type QueueRound = {
  answers: BurstAnswer[]
  ok: number
  rejected: number
  other: number
  rate: number
  lastOkMs: number
  slowestMs: number
  rejectedMs: number[]
  warmStatuses: number[]
}

export async function measureQueue(fx: Fixtures, dbPath: string, account: Account): Promise<QueueRound[]> {
  log(`scenario 4 (queueing): model ${QUEUE.modelMs} ms, concurrency ${QUEUE.concurrency}, ${QUEUE.burst} requests at once, ${ROUNDS} rounds`)
  const service = await startService(
    fx.binary,
    serviceEnv(fx, dbPath, fx.ollamaSlow, { ALTTEXT_MODEL_CONCURRENCY: String(QUEUE.concurrency) }),
    join(fx.logDir, 'queue.log'),
  )
  const rounds: QueueRound[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const result = await runForResult<BurstResult>('burst', [BUN, join(BENCH_DIR, 'burst.ts')], {
        BENCH_BURST: JSON.stringify({
          url: service.url,
          key: account.apiKey,
          imageUrl: fx.imageOrigin + fx.images.small.path,
          count: QUEUE.burst,
          prefix: `queue-r${round}`,
          // Two generations first, so the queue has its measured time per generation (steady state).
          warm: QUEUE.concurrency,
        }),
      })
      const okAnswers = result.answers.filter((a) => a.status === 200)
      if (result.warmStatuses.some((status) => status !== 200)) anomalies.push(`queue round ${round + 1}: warm-up answers ${result.warmStatuses.join(', ')}`)
      const cachedAnswers = okAnswers.filter((a) => a.cached).length
      if (cachedAnswers) anomalies.push(`queue round ${round + 1}: ${cachedAnswers} answers were cache hits`)
      const rejected = result.answers.filter((a) => a.status === 503)
      const lastOkMs = okAnswers.length ? Math.max(...okAnswers.map((a) => a.startMs + a.ms)) : Number.NaN
      const slowestMs = Math.max(...result.answers.map((a) => a.ms))
      const rate = okAnswers.length / (lastOkMs / 1000)
      rounds.push({
        answers: result.answers,
        ok: okAnswers.length,
        rejected: rejected.length,
        other: result.answers.length - okAnswers.length - rejected.length,
        rate,
        lastOkMs,
        slowestMs,
        rejectedMs: rejected.map((a) => a.ms),
        warmStatuses: result.warmStatuses,
      })
      log(
        `queue round ${round + 1}: ${okAnswers.length} × 200 in ${(lastOkMs / 1000).toFixed(2)} s (${rate.toFixed(2)}/s), ${rejected.length} × 503 ` +
          `after ${rejected.length ? `${median(rejected.map((a) => a.ms)).toFixed(0)} ms (max ${Math.max(...rejected.map((a) => a.ms)).toFixed(0)})` : '—'}, slowest ${slowestMs.toFixed(0)} ms`,
      )
    }
  } finally {
    await service.stop()
  }
  return rounds
}

export function queueRows(rounds: QueueRound[]): Row[] {
  const scenario = '4 queueing'
  const ideal = QUEUE.concurrency / (QUEUE.modelMs / 1000)
  const share = figure(rounds.map((r) => r.rate / ideal))
  const allRejected = rounds.flatMap((r) => r.rejectedMs)
  const slowest = figure(rounds.map((r) => r.slowestMs))
  return [
    {
      scenario,
      figure: `generations/s, ${QUEUE.burst} at once, model ${QUEUE.modelMs / 1000} s, concurrency ${QUEUE.concurrency}`,
      unit: 'per-s',
      value: figure(rounds.map((r) => r.rate)),
      baseline: { label: 'ideal', value: ideal },
      ratio: { kind: 'x', value: share },
      target: `≥ ${QUEUE.share}× ideal`,
      met: share.median >= QUEUE.share,
    },
    { scenario, figure: 'answered 200', unit: 'count', value: figure(rounds.map((r) => r.ok)), met: null },
    { scenario, figure: 'answered 503 overloaded', unit: 'count', value: figure(rounds.map((r) => r.rejected)), met: null },
    {
      scenario,
      figure: '503 answered after (median of the 503s)',
      unit: 'ms',
      value: figure(rounds.map((r) => (r.rejectedMs.length ? median(r.rejectedMs) : Number.NaN))),
      met: null,
    },
    {
      scenario,
      figure: '503 answered after (slowest 503, all rounds)',
      unit: 'ms',
      value: figure(allRejected.length ? [Math.max(...allRejected)] : []),
      met: null,
    },
    {
      scenario,
      figure: 'other answers (not 200/503)',
      unit: 'count',
      value: figure(rounds.map((r) => r.other)),
      target: '0',
      met: rounds.every((r) => r.other === 0),
    },
    {
      scenario,
      figure: 'slowest answer of any kind',
      unit: 'ms',
      value: slowest,
      target: `≤ ${QUEUE.deadlineMs} ms`,
      met: slowest.max <= QUEUE.deadlineMs,
    },
  ]
}
