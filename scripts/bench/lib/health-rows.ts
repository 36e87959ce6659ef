// The rows of `/health` polled in an open loop while something holds the database (scenarios 9 and 17):
// how many were sent, p99 against the target and the idle p99, p50, the slowest, and answers other than 200.
import type { StreamSample } from '../stream'
import type { Row } from './report'
import { figure, roundsPercentile } from './stats'

/** One round: /health before the load (idle) and during it, and the key creations sent during it. */
export type HealthRound = { idle: StreamSample[]; health: StreamSample[]; keys: StreamSample[] }

export function healthUnderLoadRows<R extends HealthRound>(
  scenario: string,
  rounds: readonly R[],
  options: { during: string; p99Figure: string; limitMs: number; roundOk?: (round: R) => boolean },
): Row[] {
  const p = (pick: (r: R) => readonly StreamSample[], q: number) => roundsPercentile(rounds, pick, q)
  const during = (r: R) => r.health
  const idle = (r: R) => r.idle
  const p99 = p(during, 99)
  const roundOk = options.roundOk ?? (() => true)
  return [
    {
      scenario,
      figure: `GET /health requests sent ${options.during} (one every 10 ms, open loop)`,
      unit: 'count',
      value: figure(rounds.map((r) => r.health.length)),
      met: null,
    },
    {
      scenario,
      figure: options.p99Figure,
      unit: 'ms',
      value: p99,
      baseline: { label: 'idle p99', value: p(idle, 99) },
      target: `≤ ${options.limitMs} ms`,
      met: rounds.every(roundOk) && p99.max <= options.limitMs,
    },
    { scenario, figure: `GET /health p50 ${options.during}`, unit: 'ms', value: p(during, 50), baseline: { label: 'idle p50', value: p(idle, 50) }, met: null },
    { scenario, figure: `GET /health slowest ${options.during}`, unit: 'ms', value: p(during, 100), met: null },
    {
      scenario,
      figure: `GET /health answers other than 200 ${options.during}`,
      unit: 'count',
      value: figure(rounds.map((r) => r.health.filter((s) => s.status !== 200).length)),
      target: '0',
      met: rounds.every((r) => r.health.every((s) => s.status === 200)),
    },
  ]
}
