// Scenario 10 (uploads): the 9 MB JPEG of scenario 5 sent in the request instead of by URL.
//  - Time to the model hand-off, multipart and base64 JSON, paired per iteration with the floor: a bare
//    Bun.serve (upload-floor.ts, its own process) that reads the same bytes from its socket and decodes,
//    downscales and encodes them once. Both are server-side times from the handler's start: the
//    service's Server-Timing stages up to the model (receive, inspect, cache, prepare, queue) against
//    the floor's read + prepare. Targets: multipart ≤ 1.3× the floor, base64 ≤ 1.5×.
//  - Peak RSS (VmHWM) of a fresh service while 20 such uploads are in flight at once, multipart and
//    base64 each in their own fresh service. Target: ≤ 600 MB (572 MiB).
import { join } from 'node:path'
import { type Account, anomalies, BENCH_DIR, BUN, type Fixtures, log, MiB, QUICK, ROUNDS, serviceEnv, statusCounts } from '../lib/common'
import { memoryOf, runForResult, spawnReady, startService, stopChild } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, median, percentile, ratioFigure } from '../lib/stats'
import type { UploadBurstResult, UploadPairedResult, UploadSample } from '../upload-client'

// Peak RSS within 600 MB, read as decimal megabytes: the stricter reading (572 MiB).
const TARGETS = { multipartRatio: 1.3, base64Ratio: 1.5, peakMiB: 600e6 / (1024 * 1024) }
export const UPLOAD = { burst: 20, seconds: QUICK ? 3 : 8, min: QUICK ? 3 : 6, max: 40, targets: TARGETS }

const CLIENT = join(BENCH_DIR, 'upload-client.ts')
const FLOOR = join(BENCH_DIR, 'upload-floor.ts')

export type UploadRound = {
  paired: UploadPairedResult
  /** Per kind: VmHWM and idle RSS of the fresh service the burst ran on, and how it was answered. */
  bursts: Record<'multipart' | 'base64', { peakRss: number; idleRss: number; statuses: Record<string, number>; burstMs: number; survived: boolean }>
}

const imagePathOf = (fx: Fixtures) => join(fx.dir, 'images', fx.images.large.path.slice(1))

async function burst(fx: Fixtures, dbPath: string, account: Account, kind: 'multipart' | 'base64', name: string): Promise<UploadRound['bursts']['multipart']> {
  const service = await startService(fx.binary, serviceEnv(fx, dbPath, fx.ollamaFast), join(fx.logDir, `${name}.log`))
  try {
    await fetch(`${service.url}/health`).then((r) => r.arrayBuffer())
    await Bun.sleep(1000)
    const idleRss = memoryOf(service.pid).rss
    const result = await runForResult<UploadBurstResult>('upload burst', [BUN, CLIENT], {
      BENCH_UPLOAD: JSON.stringify({
        mode: 'burst',
        kind,
        count: UPLOAD.burst,
        service: service.url,
        key: account.apiKey,
        imagePath: imagePathOf(fx),
        format: fx.images.large.format,
        width: fx.images.large.width,
        height: fx.images.large.height,
        prefix: name,
      }),
    })
    const survived = service.alive()
    const peakRss = survived ? memoryOf(service.pid).hwm : Number.NaN
    return { peakRss, idleRss, statuses: result.statuses, burstMs: result.burstMs, survived }
  } finally {
    await service.stop()
  }
}

export async function measureUpload(fx: Fixtures, dbPath: string, account: Account): Promise<UploadRound[]> {
  const { large } = fx.images
  log(
    `scenario 10 (uploads): ${large.label} (${(large.bytes / 1e6).toFixed(1)} MB) by multipart and base64 against the floor, ${UPLOAD.seconds} s per round; ` +
      `then ${UPLOAD.burst} uploads at once per kind on a fresh service; ${ROUNDS} rounds`,
  )
  const floor = await spawnReady('upload floor', [BUN, FLOOR])
  const rounds: UploadRound[] = []
  try {
    const floorUrl = String(floor.info.url)
    const service = await startService(fx.binary, serviceEnv(fx, dbPath, fx.ollamaFast), join(fx.logDir, 'upload.log'))
    try {
      const paired = (prefix: string, seconds: number, min: number, max: number) =>
        runForResult<UploadPairedResult>('upload client', [BUN, CLIENT], {
          BENCH_UPLOAD: JSON.stringify({
            mode: 'paired',
            service: service.url,
            floor: floorUrl,
            key: account.apiKey,
            imagePath: imagePathOf(fx),
            format: large.format,
            width: large.width,
            height: large.height,
            prefix,
            seconds,
            min,
            max,
          }),
        })
      // Warm every path (first decode, JIT) before anything is recorded.
      await paired('upload-warm', 0, 2, 2)
      for (let round = 0; round < ROUNDS; round++) {
        const result = await paired(`upload-r${round}`, UPLOAD.seconds, UPLOAD.min, UPLOAD.max)
        for (const kind of ['multipart', 'base64'] as const) {
          const bad = result[kind].filter((s) => s.status !== 200)
          if (bad.length > 0)
            anomalies.push(
              `round ${round + 1}, upload ${kind}: ${bad.length} answers not 200 (${JSON.stringify(statusCounts(bad.map((s) => s.status)))}, ${bad[0]?.code ?? ''})`,
            )
        }
        const p50 = (samples: UploadSample[]) => median(samples.filter((s) => s.status < 300).map((s) => s.handoffMs))
        log(
          `round ${round + 1}: floor ${p50(result.floor).toFixed(1)} ms, multipart ${p50(result.multipart).toFixed(1)} ms, base64 ${p50(result.base64).toFixed(1)} ms (×${result.iterations})`,
        )
        rounds.push({ paired: result, bursts: {} as UploadRound['bursts'] })
      }
    } finally {
      await service.stop()
    }
  } finally {
    await stopChild(floor.proc)
  }
  for (let round = 0; round < rounds.length; round++) {
    for (const kind of ['multipart', 'base64'] as const) {
      const b = await burst(fx, dbPath, account, kind, `upload-burst-${kind}-r${round}`)
      rounds[round]!.bursts[kind] = b
      log(
        `round ${round + 1}: ${UPLOAD.burst} ${kind} uploads at once: peak RSS ${(b.peakRss / MiB).toFixed(0)} MiB, ${JSON.stringify(b.statuses)} in ${b.burstMs.toFixed(0)} ms`,
      )
      if (!b.survived) anomalies.push(`round ${round + 1}, upload burst ${kind}: the service died`)
      if (Object.keys(b.statuses).some((status) => status !== '200'))
        anomalies.push(`round ${round + 1}, upload burst ${kind}: not every answer was 200: ${JSON.stringify(b.statuses)}`)
    }
  }
  return rounds
}

export function uploadRows(rounds: UploadRound[], large: { label: string; bytes: number }): Row[] {
  const scenario = '10 uploads'
  const name = `${large.label} (${(large.bytes / 1e6).toFixed(2)} MB)`
  const ok = (samples: UploadSample[]) => samples.filter((s) => s.status >= 200 && s.status < 300)
  const p50 = (samples: UploadSample[], pick: (s: UploadSample) => number = (s) => s.handoffMs) => median(ok(samples).map(pick))
  const floorP50 = rounds.map((r) => p50(r.paired.floor))
  const rows: Row[] = []
  for (const [kind, target] of [
    ['multipart', TARGETS.multipartRatio],
    ['base64', TARGETS.base64Ratio],
  ] as const) {
    const values = rounds.map((r) => p50(r.paired[kind]))
    const ratio = ratioFigure(values, floorP50)
    rows.push(
      {
        scenario,
        figure: `${name} as ${kind === 'multipart' ? 'multipart/form-data' : 'base64 JSON'}: server time to the model hand-off, p50`,
        unit: 'ms',
        value: figure(values),
        baseline: { label: 'floor (socket read + prepare)', value: figure(floorP50) },
        ratio: { kind: 'x', value: ratio },
        target: `≤ ${target}× floor`,
        met: ratio.median <= target,
      },
      {
        scenario,
        figure: `${name} as ${kind}: stage receive (reading and checking the body as it arrives), p50`,
        unit: 'ms',
        value: figure(rounds.map((r) => p50(r.paired[kind], (s) => s.stages.receive ?? Number.NaN))),
        baseline: { label: 'floor read', value: figure(rounds.map((r) => p50(r.paired.floor, (s) => s.stages.receive ?? Number.NaN))) },
        met: null,
      },
      {
        scenario,
        figure: `${name} as ${kind}: stages inspect + prepare (format walk, decode, resize, encode), p50`,
        unit: 'ms',
        value: figure(rounds.map((r) => p50(r.paired[kind], (s) => (s.stages.inspect ?? 0) + (s.stages.prepare ?? 0)))),
        baseline: { label: 'floor prepare', value: figure(rounds.map((r) => p50(r.paired.floor, (s) => s.stages.prepare ?? Number.NaN))) },
        met: null,
      },
      {
        scenario,
        figure: `${name} as ${kind}: client wall time, instant model, p99`,
        unit: 'ms',
        value: figure(
          rounds.map((r) =>
            percentile(
              ok(r.paired[kind]).map((s) => s.wallMs),
              99,
            ),
          ),
        ),
        met: null,
      },
    )
  }
  for (const kind of ['multipart', 'base64'] as const) {
    const peak = figure(rounds.map((r) => r.bursts[kind]?.peakRss / MiB))
    const survived = rounds.every((r) => r.bursts[kind]?.survived)
    rows.push({
      scenario,
      figure: `peak RSS, ${UPLOAD.burst} ${kind} uploads of ${name} in flight (VmHWM, fresh service)`,
      unit: 'MiB',
      value: peak,
      baseline: { label: 'idle RSS', value: figure(rounds.map((r) => r.bursts[kind]?.idleRss / MiB)) },
      target: `≤ 600 MB (${TARGETS.peakMiB.toFixed(0)} MiB)`,
      met: survived && peak.median <= TARGETS.peakMiB,
    })
  }
  return rows
}
