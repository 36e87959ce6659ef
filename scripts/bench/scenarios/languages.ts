// Scenario 21: several languages in one request (issue 34). The fake model answers after
// QUEUE.modelMs (1 s) whatever it is asked, a translation in the language its prompt names; the service
// runs with ALTTEXT_MODEL_CONCURRENCY 2 and its cache off (ALTTEXT_CACHE_TTL_DAYS=0), so every request
// is a miss. One client, one request at a time: `languages: [en, de, fr]` (one vision call, then the two
// translations, which may run at once) against a single `language: en` (one vision call) as the
// baseline. Bound: wall time ≤ 1 vision call + 2 translation calls of the model's latency + 50 ms.
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { anomalies, type Fixtures, log, loopback, QUICK, ROUNDS, register, serviceEnv } from '../lib/common'
import { startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, percentile } from '../lib/stats'
import { QUEUE } from './queue'

export const LANGUAGES = {
  tags: ['en', 'de', 'fr'],
  modelMs: QUEUE.modelMs,
  concurrency: 2,
  requests: QUICK ? 4 : 10,
  /** The bound: the three model calls one after another, and 50 ms for everything else. */
  limitMs: 3 * QUEUE.modelMs + 50,
}
const SCENARIO = '21 languages'

export type LanguagesRound = { languagesMs: number[]; singleMs: number[]; statuses: Record<string, number>; failedLanguages: number }

async function timed(url: string, key: string, body: Record<string, unknown>): Promise<{ ms: number; status: number; failed: number }> {
  const started = performance.now()
  const response = await fetch(loopback(`${url}/api/alt-text`), {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  })
  const answer = (await response.json()) as { failed_languages?: string[] }
  return { ms: performance.now() - started, status: response.status, failed: answer.failed_languages?.length ?? 0 }
}

export async function measureLanguages(fx: Fixtures, dbPath: string): Promise<LanguagesRound[]> {
  log(
    `scenario 21 (languages): ${LANGUAGES.tags.join(', ')} against one language; model ${LANGUAGES.modelMs} ms, concurrency ${LANGUAGES.concurrency}, ${LANGUAGES.requests} of each per round, ${ROUNDS} rounds`,
  )
  mkdirSync(dirname(dbPath), { recursive: true })
  const env = serviceEnv(fx, dbPath, fx.ollamaSlow, { ALTTEXT_MODEL_CONCURRENCY: String(LANGUAGES.concurrency), ALTTEXT_CACHE_TTL_DAYS: '0' })
  const service = await startService(fx.binary, env, join(fx.logDir, 'languages.log'))
  const rounds: LanguagesRound[] = []
  try {
    const { apiKey } = await register(service.url, 'bench-languages@example.com')
    const imageUrl = fx.imageOrigin + fx.images.small.path
    // Two warm-up calls: the queue learns the model's time, the first connection is made.
    await timed(service.url, apiKey, { image_url: imageUrl, language: 'en' })
    await timed(service.url, apiKey, { image_url: imageUrl, languages: LANGUAGES.tags })
    for (let round = 0; round < ROUNDS; round++) {
      const result: LanguagesRound = { languagesMs: [], singleMs: [], statuses: {}, failedLanguages: 0 }
      for (let i = 0; i < LANGUAGES.requests; i++) {
        for (const body of [
          { image_url: imageUrl, languages: LANGUAGES.tags },
          { image_url: imageUrl, language: 'en' },
        ]) {
          const answer = await timed(service.url, apiKey, body)
          ;('languages' in body ? result.languagesMs : result.singleMs).push(answer.ms)
          result.failedLanguages += answer.failed
          const key = `${'languages' in body ? 'languages' : 'language'} ${answer.status}`
          result.statuses[key] = (result.statuses[key] ?? 0) + 1
        }
      }
      const bad = Object.entries(result.statuses).filter(([key]) => !key.endsWith(' 200'))
      if (bad.length) anomalies.push(`languages round ${round + 1}: answers other than 200: ${JSON.stringify(Object.fromEntries(bad))}`)
      if (result.failedLanguages) anomalies.push(`languages round ${round + 1}: ${result.failedLanguages} failed languages`)
      log(
        `languages round ${round + 1}: ${LANGUAGES.tags.length} languages p50 ${percentile(result.languagesMs, 50).toFixed(0)} ms, max ${Math.max(...result.languagesMs).toFixed(0)} ms; one language p50 ${percentile(result.singleMs, 50).toFixed(0)} ms`,
      )
      rounds.push(result)
    }
  } finally {
    await service.stop()
  }
  return rounds
}

export function languagesRows(rounds: LanguagesRound[]): Row[] {
  const of = (pick: (r: LanguagesRound) => number[], q: number) => figure(rounds.map((r) => percentile(pick(r), q)))
  const single = of((r) => r.singleMs, 50)
  const worst = figure(rounds.map((r) => Math.max(...r.languagesMs)))
  const label = `languages [${LANGUAGES.tags.join(', ')}], model ${LANGUAGES.modelMs} ms, concurrency ${LANGUAGES.concurrency}, cache off`
  return [
    {
      scenario: SCENARIO,
      figure: `${label}: wall time p50`,
      unit: 'ms',
      value: of((r) => r.languagesMs, 50),
      baseline: { label: 'one language (one vision call) p50', value: single },
      met: null,
    },
    {
      scenario: SCENARIO,
      figure: `${label}: wall time, slowest request`,
      unit: 'ms',
      value: worst,
      target: `≤ ${LANGUAGES.limitMs} ms (1 vision + 2 translation calls + 50 ms)`,
      met: worst.max <= LANGUAGES.limitMs,
    },
    {
      scenario: SCENARIO,
      figure: `${label}: answers other than 200, failed languages`,
      unit: 'count',
      value: figure(rounds.map((r) => r.failedLanguages + Object.entries(r.statuses).reduce((n, [key, count]) => n + (key.endsWith(' 200') ? 0 : count), 0))),
      target: '0',
      met: rounds.every((r) => r.failedLanguages === 0 && Object.keys(r.statuses).every((key) => key.endsWith(' 200'))),
    },
  ]
}
