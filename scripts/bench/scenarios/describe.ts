// Scenario 13: `alttext describe` over a folder of 500 local files (each a distinct PNG, so no answer
// comes from the cache), against the service with the fake model at a fixed 1 s and 4 model slots, the
// command run as a user runs it (the compiled binary, `--concurrency 4`). Figures: images per second
// against the model's capacity (4/s), and the command's peak RSS (VmHWM, read from /proc while it runs).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { makePng } from '../../../test/support/images'
import { anomalies, type Fixtures, log, MiB, QUICK, ROUNDS, register, serviceEnv } from '../lib/common'
import { memoryOf, spawnChild, startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure } from '../lib/stats'

export const DESCRIBE = { files: 500, modelMs: 1000, modelConcurrency: 4, cliConcurrency: 4, share: 0.95, rssMiB: 150 }

export type DescribeRound = { seconds: number; ok: number; failed: number; exitCode: number; peakRssBytes: number; rate: number }

/** 500 distinct PNGs for this round (sizes differ by file and by round). */
function writeImages(dir: string, round: number): void {
  mkdirSync(dir, { recursive: true })
  for (let i = 0; i < DESCRIBE.files; i++) {
    writeFileSync(join(dir, `photo-${String(i).padStart(3, '0')}.png`), makePng(160 + (i % 100), 120 + Math.floor(i / 100) + 10 * round))
  }
}

export async function measureDescribe(fx: Fixtures): Promise<DescribeRound[]> {
  log(
    `scenario 13 (describe): ${DESCRIBE.files} local files, model ${DESCRIBE.modelMs} ms, ${DESCRIBE.modelConcurrency} slots, --concurrency ${DESCRIBE.cliConcurrency}, ${ROUNDS} rounds`,
  )
  const service = await startService(
    fx.binary,
    serviceEnv(fx, join(fx.dir, 'db-describe', 'alttext.db'), fx.ollamaSlow, { ALTTEXT_MODEL_CONCURRENCY: String(DESCRIBE.modelConcurrency) }),
    join(fx.logDir, 'describe.log'),
  )
  const rounds: DescribeRound[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const account = await register(service.url, `describe-${round}@example.com`)
      const images = join(fx.dir, `describe-${round}`)
      writeImages(images, round)
      const output = join(fx.dir, `describe-${round}.jsonl`)
      const started = performance.now()
      const proc = spawnChild(
        'alttext describe',
        [fx.binary, 'describe', images, '--output', output, '--concurrency', String(DESCRIBE.cliConcurrency), '--quiet'],
        { ALTTEXT_URL: service.url, ALTTEXT_API_KEY: account.apiKey },
        join(fx.logDir, `describe-${round}.cli.log`),
      )
      let peak = 0
      const sampler = setInterval(() => {
        try {
          peak = Math.max(peak, memoryOf(proc.pid).hwm)
        } catch {
          // gone between the check and the read
        }
      }, 100)
      const exitCode = await proc.exited
      clearInterval(sampler)
      const seconds = (performance.now() - started) / 1000
      const records = readFileSync(output, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { alt_text?: string; cached?: boolean })
      const ok = records.filter((r) => typeof r.alt_text === 'string').length
      const cached = records.filter((r) => r.cached).length
      if (exitCode !== 0) anomalies.push(`describe round ${round + 1}: exit ${exitCode}`)
      if (cached > 0) anomalies.push(`describe round ${round + 1}: ${cached} answers came from the cache`)
      rounds.push({ seconds, ok, failed: records.length - ok, exitCode, peakRssBytes: peak, rate: ok / seconds })
      log(
        `describe round ${round + 1}: ${ok} ok, ${records.length - ok} failed in ${seconds.toFixed(1)} s (${(ok / seconds).toFixed(2)}/s), peak RSS ${(peak / MiB).toFixed(1)} MiB`,
      )
    }
  } finally {
    await service.stop()
  }
  if (QUICK) anomalies.push('describe: quick run, one round')
  return rounds
}

export function describeRows(rounds: DescribeRound[]): Row[] {
  const scenario = '13 describe'
  const ideal = DESCRIBE.modelConcurrency / (DESCRIBE.modelMs / 1000)
  const share = figure(rounds.map((r) => r.rate / ideal))
  const peak = figure(rounds.map((r) => r.peakRssBytes / MiB))
  return [
    {
      scenario,
      figure: `images/s, ${DESCRIBE.files} local files, model ${DESCRIBE.modelMs / 1000} s × ${DESCRIBE.modelConcurrency} slots, --concurrency ${DESCRIBE.cliConcurrency}`,
      unit: 'per-s',
      value: figure(rounds.map((r) => r.rate)),
      baseline: { label: 'capacity', value: ideal },
      ratio: { kind: 'x', value: share },
      target: `≥ ${DESCRIBE.share}× capacity`,
      met: share.median >= DESCRIBE.share,
    },
    { scenario, figure: 'whole run (start to exit)', unit: 'ms', value: figure(rounds.map((r) => r.seconds * 1000)), met: null },
    {
      scenario,
      figure: 'images without a result',
      unit: 'count',
      value: figure(rounds.map((r) => DESCRIBE.files - r.ok)),
      target: '0',
      met: rounds.every((r) => r.ok === DESCRIBE.files && r.exitCode === 0),
    },
    {
      scenario,
      figure: 'client peak RSS (VmHWM)',
      unit: 'MiB',
      value: peak,
      target: `≤ ${DESCRIBE.rssMiB} MiB`,
      met: peak.max <= DESCRIBE.rssMiB,
    },
  ]
}
