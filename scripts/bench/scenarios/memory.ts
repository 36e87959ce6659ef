// Scenarios 5 (memory and the event loop) and 7 (memory under bombs). Each round starts a fresh
// service, reads its idle RSS, fires a burst of POST /api/alt-text at once (burst.ts, its own process)
// while GET /health is probed every 10 ms, and reads the kernel's high-water mark of its RSS (VmHWM in
// /proc/<pid>/status: no spike is missed between samples) — also sampled every 20 ms as a cross-check.
// A service that dies under the burst (e.g. killed for memory) is reported as such, not as a crash of
// the bench.
import { join } from 'node:path'
import type { BurstAnswer, BurstResult } from '../burst'
import { type Account, anomalies, BENCH_DIR, BUN, errorMessage, type Fixtures, log, MiB, ROUNDS, serviceEnv } from '../lib/common'
import type { BenchImage } from '../lib/images'
import { memoryOf, runForResult, startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, median, percentile } from '../lib/stats'

const TARGETS = { idleMiB: 80, peakMiB: 1024, loopDelayMs: 50 }
export const MEMORY = { burst: 50, probeIntervalMs: 10, bombs: { png: 4, gif: 4, side: 7000 }, targets: TARGETS }

type Group = { label: string; imageUrl: string; count: number }

export type MemoryRound = {
  idleRss: number
  /** VmHWM after the burst; NaN when the service died. */
  peakRss: number
  sampledPeakRss: number
  afterRss: number
  idleProbeP50: number
  loadProbeP99: number
  delayP99: number
  statuses: Record<string, number>
  /** Per group label: status (and error code) counts. */
  groups: Record<string, Record<string, number>>
  burstMs: number
  probes: number
  /** The service was still running after the burst. */
  survived: boolean
  error?: string
}

async function burstRound(fx: Fixtures, dbPath: string, account: Account, name: string, groups: Group[], timeoutMs: number): Promise<MemoryRound> {
  const service = await startService(fx.binary, serviceEnv(fx, dbPath, fx.ollamaFast), join(fx.logDir, `${name}.log`))
  try {
    await fetch(`${service.url}/health`).then((r) => r.arrayBuffer())
    await Bun.sleep(1500)
    const idleRss = memoryOf(service.pid).rss
    let sampledPeakRss = idleRss
    let lastHwm = idleRss
    const sampler = setInterval(() => {
      try {
        const m = memoryOf(service.pid)
        sampledPeakRss = Math.max(sampledPeakRss, m.rss)
        lastHwm = m.hwm
      } catch {
        // process gone; the burst will fail and say so
      }
    }, 20)
    let result: BurstResult | undefined
    let error: string | undefined
    try {
      result = await runForResult<BurstResult>('burst', [BUN, join(BENCH_DIR, 'burst.ts')], {
        BENCH_BURST: JSON.stringify({
          url: service.url,
          key: account.apiKey,
          groups,
          prefix: name,
          probe: true,
          probeIntervalMs: MEMORY.probeIntervalMs,
          idleProbeMs: 1000,
          timeoutMs,
          lifetimeMs: timeoutMs + 60_000,
        }),
      })
    } catch (e) {
      error = errorMessage(e).split('\n')[0]
    } finally {
      clearInterval(sampler)
    }
    const survived = service.alive()
    let peakRss = lastHwm
    let afterRss = Number.NaN
    if (survived) {
      peakRss = memoryOf(service.pid).hwm
      await Bun.sleep(2000)
      if (service.alive()) afterRss = memoryOf(service.pid).rss
    } else {
      anomalies.push(`${name}: the service exited during the burst (exit ${service.proc.exitCode}, signal ${service.proc.signalCode})`)
    }
    if (error) anomalies.push(`${name}: the burst client failed: ${error}`)
    const answers: BurstAnswer[] = result?.answers ?? []
    const statuses: Record<string, number> = {}
    const byGroup: Record<string, Record<string, number>> = {}
    for (const answer of answers) {
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
      byGroup[answer.group ?? ''] ??= {}
      const group = byGroup[answer.group ?? '']!
      const key = answer.code ? `${answer.status} ${answer.code}` : String(answer.status)
      group[key] = (group[key] ?? 0) + 1
    }
    const idleProbeP50 = median(result?.idleProbeMs ?? [])
    const loadProbeP99 = percentile(result?.loadProbeMs ?? [], 99)
    const round: MemoryRound = {
      idleRss,
      peakRss,
      sampledPeakRss,
      afterRss,
      idleProbeP50,
      loadProbeP99,
      delayP99: loadProbeP99 - idleProbeP50,
      statuses,
      groups: byGroup,
      burstMs: result?.burstMs ?? Number.NaN,
      probes: result?.loadProbeMs.length ?? 0,
      survived,
      ...(error ? { error } : {}),
    }
    log(
      `${name}: idle ${(idleRss / MiB).toFixed(1)} MiB, peak ${(peakRss / MiB).toFixed(1)} MiB (sampled ${(sampledPeakRss / MiB).toFixed(1)}), after ${(afterRss / MiB).toFixed(1)} MiB; ` +
        `/health p50 idle ${idleProbeP50.toFixed(2)} ms, p99 under load ${loadProbeP99.toFixed(1)} ms (${round.probes} probes); ` +
        `answers ${JSON.stringify(byGroup)} in ${(round.burstMs / 1000).toFixed(1)} s${survived ? '' : '; SERVICE DIED'}`,
    )
    return round
  } finally {
    await service.stop()
  }
}

/** Scenario 5: 50 requests for a 9 MB JPEG at once. */
export async function measureMemory(fx: Fixtures, dbPath: string, account: Account): Promise<MemoryRound[]> {
  log(
    `scenario 5 (memory, event loop): ${MEMORY.burst} requests for a ${(fx.images.large.bytes / 1e6).toFixed(1)} MB image at once, fresh service per round, ${ROUNDS} rounds`,
  )
  const rounds: MemoryRound[] = []
  for (let round = 0; round < ROUNDS; round++)
    rounds.push(
      await burstRound(
        fx,
        dbPath,
        account,
        `memory-r${round}`,
        [{ label: 'large', imageUrl: fx.imageOrigin + fx.images.large.path, count: MEMORY.burst }],
        30_000,
      ),
    )
  return rounds
}

export type BombImages = { png: BenchImage; gif: BenchImage }

/** Scenario 7: the bombs (PNG and GIF, 7000×7000) and the 50 large JPEGs, all at once. */
export async function measureBombs(fx: Fixtures, bombs: BombImages, dbPath: string, account: Account): Promise<MemoryRound[]> {
  const { png, gif } = MEMORY.bombs
  log(
    `scenario 7 (memory under bombs): ${png} PNG + ${gif} GIF ${MEMORY.bombs.side}×${MEMORY.bombs.side} bombs and ${MEMORY.burst} × ${(fx.images.large.bytes / 1e6).toFixed(1)} MB images at once, fresh service per round, ${ROUNDS} rounds`,
  )
  const rounds: MemoryRound[] = []
  for (let round = 0; round < ROUNDS; round++)
    rounds.push(
      await burstRound(
        fx,
        dbPath,
        account,
        `bombs-r${round}`,
        [
          { label: 'png-bomb', imageUrl: fx.imageOrigin + bombs.png.path, count: png },
          { label: 'gif-bomb', imageUrl: fx.imageOrigin + bombs.gif.path, count: gif },
          { label: 'large', imageUrl: fx.imageOrigin + fx.images.large.path, count: MEMORY.burst },
        ],
        60_000,
      ),
    )
  return rounds
}

const countOf = (rounds: MemoryRound[], group: string, status: string) => figure(rounds.map((r) => r.groups[group]?.[status] ?? 0))

export function memoryRows(rounds: MemoryRound[], large: BenchImage): Row[] {
  const scenario = '5 memory'
  const idle = figure(rounds.map((r) => r.idleRss / MiB))
  const peak = figure(rounds.map((r) => r.peakRss / MiB))
  const delay = figure(rounds.map((r) => r.delayP99))
  const survived = rounds.every((r) => r.survived)
  return [
    {
      scenario,
      figure: 'idle RSS (fresh start, grown database)',
      unit: 'MiB',
      value: idle,
      target: `≤ ${TARGETS.idleMiB} MiB`,
      met: idle.median <= TARGETS.idleMiB,
    },
    {
      scenario,
      figure: `peak RSS, ${MEMORY.burst} × ${(large.bytes / 1e6).toFixed(1)} MB images in flight (VmHWM)`,
      unit: 'MiB',
      value: peak,
      target: `≤ ${TARGETS.peakMiB} MiB`,
      met: survived && peak.median <= TARGETS.peakMiB,
    },
    { scenario, figure: 'RSS 2 s after that burst', unit: 'MiB', value: figure(rounds.map((r) => r.afterRss / MiB)), met: null },
    {
      scenario,
      figure: 'event-loop delay p99 (GET /health every 10 ms: p99 under load − idle p50)',
      unit: 'ms',
      value: delay,
      baseline: { label: 'idle /health p50', value: figure(rounds.map((r) => r.idleProbeP50)) },
      target: `≤ ${TARGETS.loopDelayMs} ms`,
      met: delay.median <= TARGETS.loopDelayMs,
    },
    { scenario, figure: `answered 200 of ${MEMORY.burst}`, unit: 'count', value: countOf(rounds, 'large', '200'), met: null },
  ]
}

export function bombRows(rounds: MemoryRound[], bombs: BombImages, large: BenchImage): Row[] {
  const scenario = '7 bombs'
  const { png, gif, side } = MEMORY.bombs
  const peak = figure(rounds.map((r) => r.peakRss / MiB))
  const survived = rounds.every((r) => r.survived)
  const rows: Row[] = [
    {
      scenario,
      figure:
        `peak RSS (VmHWM), ${png} PNG (${(bombs.png.bytes / 1e3).toFixed(0)} KB) + ${gif} GIF (${(bombs.gif.bytes / 1e3).toFixed(0)} KB) ${side}×${side} bombs ` +
        `+ ${MEMORY.burst} × ${(large.bytes / 1e6).toFixed(1)} MB images at once`,
      unit: 'MiB',
      value: peak,
      target: `≤ ${TARGETS.peakMiB} MiB`,
      met: survived && peak.max <= TARGETS.peakMiB,
    },
    { scenario, figure: 'peak RSS sampled every 20 ms (cross-check)', unit: 'MiB', value: figure(rounds.map((r) => r.sampledPeakRss / MiB)), met: null },
    {
      scenario,
      figure: 'service still running after the burst (rounds)',
      unit: 'count',
      value: figure([rounds.filter((r) => r.survived).length]),
      target: `${rounds.length} of ${rounds.length}`,
      met: survived,
    },
    { scenario, figure: 'time until the last answer', unit: 'ms', value: figure(rounds.map((r) => r.burstMs)), met: null },
    {
      scenario,
      figure: 'event-loop delay p99 during the burst (GET /health every 10 ms, minus idle p50)',
      unit: 'ms',
      value: figure(rounds.map((r) => r.delayP99)),
      met: null,
    },
  ]
  // What each kind of request was answered, e.g. "PNG bombs: 400 invalid_image_url" (status and error code).
  for (const [group, label] of [
    ['png-bomb', `PNG bombs (of ${png})`],
    ['gif-bomb', `GIF bombs (of ${gif})`],
    ['large', `${(large.bytes / 1e6).toFixed(1)} MB JPEGs (of ${MEMORY.burst})`],
  ] as const) {
    const keys = [...new Set(rounds.flatMap((r) => Object.keys(r.groups[group] ?? {})))].sort()
    for (const key of keys) rows.push({ scenario, figure: `${label}: answered ${key}`, unit: 'count', value: countOf(rounds, group, key), met: null })
  }
  return rows
}
