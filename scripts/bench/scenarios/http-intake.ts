// Scenarios 1 (HTTP stack), 2 (intake), 3 (cache hits) and 6 (scale). The same load on one or two
// services at once — one on a small database and, for scale, one on the grown copy — measured in the
// same rounds (interleaved) so that a drift of the machine touches both; scenario 1's bare Elysia
// baseline is measured between them in the same rounds.
import { statSync } from 'node:fs'
import type { PairedAnswer, PairedResult } from '../paired'
import { type Account, anomalies, BUN, BENCH_DIR, type Fixtures, inRoundOrder, log, loopback, QUICK, ROUNDS } from '../lib/common'
import type { FloorSample } from '../lib/floor'
import type { BenchImage } from '../lib/images'
import { cpuMsOf, runForResult } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, median, percentile, ratioFigure } from '../lib/stats'
import { runWrk, type WrkResult } from '../lib/wrk'
import { join } from 'node:path'

const PAIRED = join(BENCH_DIR, 'paired.ts')

/** Seconds per wrk or paired run. */
const DURATION = QUICK ? { httpWarm: 1, http: 1, miss: 2, hit: 1, hitConcurrent: 1 } : { httpWarm: 1, http: 3, miss: 6, hit: 2, hitConcurrent: 2 }
export const HTTP = { connections: 64, threads: 2 }
const HIT_CONNECTIONS = 16
/** Iterations of the paired client per round: at least `min`, then until `DURATION` has passed. */
const PAIRED_LIMITS = QUICK ? { miss: { min: 4, max: 40 }, hit: { min: 10, max: 300 } } : { miss: { min: 8, max: 80 }, hit: { min: 30, max: 600 } }
const TARGETS = { intakeRatio: 1.3, hitPlusMs: 5, scaleWorse: 0.2 }
/**
 * Scenario 1 is a regression guard, not a target: a request's own cost (~41 µs, most of it Bun's and
 * Elysia's per-request work) is far below anything a user of a 1–2 s model call feels. Requests/s against
 * the bare Elysia app may fall no lower than `factor` × the ratio of the run that retired the 0.5× target
 * (2026-11-23, `run.ts http`, 3 rounds).
 */
export const HTTP_GUARD = { factor: 0.8, ratios: { 'GET /api/usage': 0.23, 'POST /api/validate-key': 0.41 } } as const
type HttpEndpoint = keyof typeof HTTP_GUARD.ratios
const guardOf = (endpoint: HttpEndpoint) => HTTP_GUARD.factor * HTTP_GUARD.ratios[endpoint]
const rpsFigure = (endpoint: HttpEndpoint) => `${endpoint}: requests/s at ${HTTP.connections} connections`
export const HTTP_INTAKE_SETTINGS = {
  durations: DURATION,
  http: HTTP,
  hitConnections: HIT_CONNECTIONS,
  pairedLimits: PAIRED_LIMITS,
  targets: TARGETS,
  httpGuard: HTTP_GUARD,
}

type HttpRound = {
  rps: number
  p50: number
  p99: number
  cpuUsPerRequest: number
  errors: number
  requests: number
  /** Bytes the process wrote to its stdout file per request (the access log; 0 for the bare app). */
  logBytesPerRequest: number
}
type IntakeRun = {
  /** One connection, paired with the floor (paired.ts). */
  miss: PairedAnswer[]
  hit: PairedAnswer[]
  /** wrk, replaying the same requests at HIT_CONNECTIONS connections. */
  hitConcurrent: WrkResult
  missCpuMsPerRequest: number
  hitCpuMsPerRequest: number
}
/** One service (small or grown database): its figures per round. */
export type ServiceRuns = { label: string; usage: HttpRound[]; validate: HttpRound[]; intake: Record<string, IntakeRun[]> }
type FloorRound = {
  floor: FloorSample[]
  /** Fetch only, back to back: the baseline of a cache hit. */
  fetchMs: number[]
}
/**
 * Baselines measured in the same rounds: the bare Elysia app, the same app doing only the duties every
 * response of the service has (request id, nosniff, client address, access log), and the floor per format.
 */
export type Baselines = { bareGet: HttpRound[]; barePost: HttpRound[]; dutiesGet: HttpRound[]; dutiesPost: HttpRound[]; floor: Record<string, FloorRound[]> }

type Target = { label: string; url: string; pid: number; logPath: string }

const fileSize = (path: string) => {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/** Scenario 1: GET /api/usage and POST /api/validate-key on each service and on the bare app, interleaved. */
export async function measureHttp(
  fx: Fixtures,
  services: Target[],
  bare: Target,
  duties: Target,
  account: Account,
  runs: ServiceRuns[],
  base: Baselines,
): Promise<void> {
  const validateBody = JSON.stringify({ api_key: account.apiKey })
  type Load = { name: string; target: Target; url: string; env: Record<string, string>; record: HttpRound[] }
  const getLoads: Load[] = [
    { name: 'bare Elysia GET', target: bare, url: `${bare.url}/api/usage`, env: { BENCH_KEY: account.apiKey }, record: base.bareGet },
    { name: 'bare Elysia + duties GET', target: duties, url: `${duties.url}/api/usage`, env: { BENCH_KEY: account.apiKey }, record: base.dutiesGet },
    ...services.map((target, i) => ({
      name: `usage (${target.label})`,
      target,
      url: `${target.url}/api/usage`,
      env: { BENCH_KEY: account.apiKey },
      record: runs[i]!.usage,
    })),
  ]
  const postEnv = { BENCH_METHOD: 'POST', BENCH_BODY: validateBody }
  const postLoads: Load[] = [
    { name: 'bare Elysia POST', target: bare, url: `${bare.url}/api/validate-key`, env: postEnv, record: base.barePost },
    { name: 'bare Elysia + duties POST', target: duties, url: `${duties.url}/api/validate-key`, env: postEnv, record: base.dutiesPost },
    ...services.map((target, i) => ({
      name: `validate-key (${target.label})`,
      target,
      url: `${target.url}/api/validate-key`,
      env: postEnv,
      record: runs[i]!.validate,
    })),
  ]
  const loads = [...getLoads, ...postLoads]
  const wrkOptions = (load: Load, durationS: number) => ({
    url: loopback(load.url),
    script: 'static.lua' as const,
    connections: HTTP.connections,
    threads: HTTP.threads,
    durationS,
    env: load.env,
  })
  log(`scenario 1 (HTTP stack): ${ROUNDS} rounds × ${loads.length} loads × ${DURATION.http} s, wrk -t${HTTP.threads} -c${HTTP.connections}`)
  for (const load of loads) await runWrk(fx.wrk, wrkOptions(load, DURATION.httpWarm))
  for (let round = 0; round < ROUNDS; round++) {
    for (const load of [...inRoundOrder(getLoads, round), ...inRoundOrder(postLoads, round)]) {
      const cpu0 = cpuMsOf(load.target.pid)
      const log0 = fileSize(load.target.logPath)
      const result = await runWrk(fx.wrk, wrkOptions(load, DURATION.http))
      const cpuMs = cpuMsOf(load.target.pid) - cpu0
      // The logger flushes once per event-loop turn: give it a moment before the file is measured.
      await Bun.sleep(100)
      const logBytes = fileSize(load.target.logPath) - log0
      const errors = result.status + result.connect + result.read + result.write + result.timeout
      load.record.push({
        rps: result.rps,
        p50: result.p50 / 1000,
        p99: result.p99 / 1000,
        cpuUsPerRequest: (cpuMs * 1000) / result.requests,
        errors,
        requests: result.requests,
        logBytesPerRequest: logBytes / result.requests,
      })
      if (errors > 0)
        anomalies.push(
          `round ${round + 1}, ${load.name}: ${errors} errors (status ≥ 400: ${result.status}, socket: ${result.connect + result.read + result.write}, timeouts: ${result.timeout})`,
        )
      if (load.target !== bare && logBytes / result.requests < 50)
        anomalies.push(`round ${round + 1}, ${load.name}: only ${(logBytes / result.requests).toFixed(0)} bytes of access log per request reached the log file`)
    }
    log(`round ${round + 1}: ${loads.map((l) => `${l.name} ${Math.round(l.record[round]!.rps)}/s`).join(', ')}`)
  }
}

/** Scenarios 2 and 3: one-connection misses and hits paired with the floor, then hits at 16 connections. */
export async function measureIntake(fx: Fixtures, services: Target[], account: Account, runs: ServiceRuns[], base: Baselines): Promise<void> {
  log(`scenarios 2 and 3 (intake, cache hits): ${fx.images.intake.length} formats × ${ROUNDS} rounds × ${services.length} services`)
  const serviceUrls = services.map((s) => loopback(s.url))
  const paired = (mode: 'miss' | 'hit', image: BenchImage, prefix: string, seconds: number, limits: { min: number; max: number }, count?: number) =>
    runForResult<PairedResult>('paired client', [BUN, PAIRED], {
      BENCH_PAIRED: JSON.stringify({
        mode,
        services: serviceUrls,
        key: account.apiKey,
        imageUrl: loopback(fx.imageOrigin + image.path),
        caPath: fx.caPath,
        format: image.format,
        width: image.width,
        height: image.height,
        prefix,
        seconds,
        ...limits,
        count,
      }),
    })
  for (const image of fx.images.intake) {
    base.floor[image.format] = []
    for (const run of runs) run.intake[image.format] = []
    // Warm every path (first decode, first worker, JIT) before anything is recorded.
    await paired('miss', image, `warm-${image.format}`, 0, { min: 2, max: 2 })
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const image of fx.images.intake) {
      const prefix = `r${round}-${image.format}`
      const cpu0 = services.map((s) => cpuMsOf(s.pid))
      const miss = await paired('miss', image, prefix, DURATION.miss, PAIRED_LIMITS.miss)
      const cpu1 = services.map((s) => cpuMsOf(s.pid))
      const hit = await paired('hit', image, prefix, DURATION.hit, PAIRED_LIMITS.hit, miss.iterations)
      const cpu2 = services.map((s) => cpuMsOf(s.pid))
      base.floor[image.format]!.push({ floor: miss.floor, fetchMs: hit.fetchMs })
      const parts: string[] = []
      for (const i of inRoundOrder([...services.keys()], round)) {
        const service = services[i]!
        // "The same requests again", now at HIT_CONNECTIONS connections: contexts 1..N of the miss run.
        const hitConcurrent = await runWrk(fx.wrk, {
          url: loopback(`${service.url}/api/alt-text`),
          script: 'alt-text.lua',
          connections: HIT_CONNECTIONS,
          durationS: DURATION.hitConcurrent,
          env: { BENCH_KEY: account.apiKey, BENCH_IMAGE_URL: fx.imageOrigin + image.path, BENCH_PREFIX: prefix, BENCH_CYCLE: String(miss.iterations) },
        })
        const missAnswers = miss.answers[i]!
        const hitAnswers = hit.answers[i]!
        runs[i]!.intake[image.format]!.push({
          miss: missAnswers,
          hit: hitAnswers,
          hitConcurrent,
          missCpuMsPerRequest: (cpu1[i]! - cpu0[i]!) / missAnswers.length,
          hitCpuMsPerRequest: (cpu2[i]! - cpu1[i]!) / hitAnswers.length,
        })
        const badMiss = missAnswers.filter((a) => a.status !== 200 || a.cached !== false).length
        const badHit = hitAnswers.filter((a) => a.status !== 200 || a.cached !== true).length + hitConcurrent.misses + hitConcurrent.bad
        if (badMiss + badHit)
          anomalies.push(
            `round ${round + 1}, ${service.label}, ${image.label}: ${badMiss} miss-run answers not a 200 miss; ${badHit} hit-run answers not a 200 hit`,
          )
        parts.push(
          `${service.label}: miss p50 ${median(missAnswers.map((a) => a.ms)).toFixed(1)} ms ×${missAnswers.length}, hit p50 ${median(hitAnswers.map((a) => a.ms)).toFixed(2)} ms ×${hitAnswers.length}, ` +
            `${Math.round(hitConcurrent.rps)} hits/s${badMiss + badHit ? ' (ANOMALY)' : ''}`,
        )
      }
      log(
        `round ${round + 1} ${image.label}: floor ${median(miss.floor.map((f) => f.totalMs)).toFixed(1)} ms, fetch ${median(hit.fetchMs).toFixed(2)} ms; ${parts.join('; ')}`,
      )
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rows.

const SCENARIO_HTTP = '1 HTTP stack'

export function httpRows(svc: ServiceRuns, base: Baselines): Row[] {
  const rows: Row[] = []
  const pairs: { name: HttpEndpoint; s: HttpRound[]; b: HttpRound[]; d: HttpRound[] }[] = [
    { name: 'GET /api/usage', s: svc.usage, b: base.bareGet, d: base.dutiesGet },
    { name: 'POST /api/validate-key', s: svc.validate, b: base.barePost, d: base.dutiesPost },
  ]
  for (const { name, s, b, d } of pairs) {
    if (s.length === 0) continue
    const ratio = ratioFigure(
      s.map((r) => r.rps),
      b.map((r) => r.rps),
    )
    rows.push({
      scenario: SCENARIO_HTTP,
      figure: rpsFigure(name),
      unit: 'rps',
      value: figure(s.map((r) => r.rps)),
      baseline: { label: 'bare Elysia', value: figure(b.map((r) => r.rps)) },
      ratio: { kind: 'x', value: ratio },
      target: `guard: ≥ ${guardOf(name).toFixed(2)}× bare Elysia (${HTTP_GUARD.factor} × ${HTTP_GUARD.ratios[name]}×)`,
      met: ratio.median >= guardOf(name),
    })
    if (d.length > 0) {
      // What the duties every response has cost alone, and how far the service is from that floor.
      rows.push(
        {
          scenario: SCENARIO_HTTP,
          figure: `${name}: bare Elysia + request id, nosniff, client address and access log (the duties alone): requests/s`,
          unit: 'rps',
          value: figure(d.map((r) => r.rps)),
          baseline: { label: 'bare Elysia', value: figure(b.map((r) => r.rps)) },
          ratio: {
            kind: 'x',
            value: ratioFigure(
              d.map((r) => r.rps),
              b.map((r) => r.rps),
            ),
          },
          met: null,
        },
        {
          scenario: SCENARIO_HTTP,
          figure: `${name}: requests/s against the duties alone`,
          unit: 'rps',
          value: figure(s.map((r) => r.rps)),
          baseline: { label: 'bare Elysia + duties', value: figure(d.map((r) => r.rps)) },
          ratio: {
            kind: 'x',
            value: ratioFigure(
              s.map((r) => r.rps),
              d.map((r) => r.rps),
            ),
          },
          met: null,
        },
      )
    }
    for (const p of ['p50', 'p99'] as const) {
      rows.push({
        scenario: SCENARIO_HTTP,
        figure: `${name}: latency ${p}`,
        unit: 'ms',
        value: figure(s.map((r) => r[p])),
        baseline: { label: 'bare', value: figure(b.map((r) => r[p])) },
        ratio: {
          kind: 'x',
          value: ratioFigure(
            s.map((r) => r[p]),
            b.map((r) => r[p]),
          ),
        },
        met: null,
      })
    }
    rows.push({
      scenario: SCENARIO_HTTP,
      figure: `${name}: CPU time per request`,
      unit: 'us',
      value: figure(s.map((r) => r.cpuUsPerRequest)),
      baseline: { label: 'bare', value: figure(b.map((r) => r.cpuUsPerRequest)) },
      ratio: {
        kind: 'x',
        value: ratioFigure(
          s.map((r) => r.cpuUsPerRequest),
          b.map((r) => r.cpuUsPerRequest),
        ),
      },
      met: null,
    })
    rows.push({
      scenario: SCENARIO_HTTP,
      figure: `${name}: access log written to the log file per request`,
      unit: 'bytes',
      value: figure(s.map((r) => r.logBytesPerRequest)),
      met: null,
    })
  }
  return rows
}

/** One line per endpoint of scenario 1's rows: its ratio against the guard, PASS or FAIL. */
export function httpGuardVerdicts(rows: Row[]): string[] {
  return (Object.keys(HTTP_GUARD.ratios) as HttpEndpoint[]).flatMap((endpoint) => {
    const row = rows.find((r) => r.scenario === SCENARIO_HTTP && r.figure === rpsFigure(endpoint))
    const ratio = row?.ratio?.value.median
    if (ratio === undefined) return []
    const verdict = Number.isFinite(ratio) && ratio >= guardOf(endpoint) ? 'PASS' : 'FAIL'
    return [`HTTP regression guard, ${endpoint}: ${ratio.toFixed(2)}× bare Elysia, guard ≥ ${guardOf(endpoint).toFixed(2)}×: ${verdict}`]
  })
}

export function intakeRows(svc: ServiceRuns, base: Baselines, images: BenchImage[]): { intake: Row[]; hits: Row[] } {
  const intake: Row[] = []
  const hits: Row[] = []
  for (const image of images) {
    const rounds = svc.intake[image.format]
    const floors = base.floor[image.format]
    if (!rounds?.length || !floors?.length) continue
    const name = `${image.label} (${(image.bytes / 1e6).toFixed(2)} MB)`
    const p99 = (samples: number[]) => percentile(samples, 99)
    const missP50 = rounds.map((r) => median(r.miss.map((a) => a.ms)))
    const missP99 = rounds.map((r) => p99(r.miss.map((a) => a.ms)))
    const floorP50 = floors.map((f) => median(f.floor.map((s) => s.totalMs)))
    const floorP99 = floors.map((f) => p99(f.floor.map((s) => s.totalMs)))
    const fetchP50 = floors.map((f) => median(f.fetchMs))
    const ratio = ratioFigure(missP50, floorP50)
    intake.push(
      {
        scenario: '2 intake',
        figure: `${name}: end-to-end p50, instant model`,
        unit: 'ms',
        value: figure(missP50),
        baseline: { label: 'floor', value: figure(floorP50) },
        ratio: { kind: 'x', value: ratio },
        target: `≤ ${TARGETS.intakeRatio}× floor`,
        met: ratio.median <= TARGETS.intakeRatio,
      },
      {
        scenario: '2 intake',
        figure: `${name}: end-to-end p99`,
        unit: 'ms',
        value: figure(missP99),
        baseline: { label: 'floor p99', value: figure(floorP99) },
        ratio: { kind: 'x', value: ratioFigure(missP99, floorP99) },
        met: null,
      },
    )
    // Where the service's time went (its Server-Timing), beside the floor's two parts.
    const stageP50 = (pick: (stages: Record<string, number>) => number) => rounds.map((r) => median(r.miss.filter((a) => a.stages).map((a) => pick(a.stages!))))
    if (rounds.every((r) => r.miss.some((a) => a.stages?.fetch !== undefined))) {
      const serviceFetch = stageP50((st) => st.fetch ?? Number.NaN)
      const servicePrepare = stageP50((st) => st.prepare ?? Number.NaN)
      const floorFetch = floors.map((f) => median(f.floor.map((sample) => sample.fetchMs)))
      const floorPrepare = floors.map((f) => median(f.floor.map((sample) => sample.prepareMs)))
      intake.push(
        {
          scenario: '2 intake',
          figure: `${name}: stage fetch (download, SSRF checks, BLAKE3 hash), p50`,
          unit: 'ms',
          value: figure(serviceFetch),
          baseline: { label: 'floor fetch', value: figure(floorFetch) },
          ratio: { kind: 'plus-ms', value: figure(serviceFetch.map((v, i) => v - floorFetch[i]!)) },
          met: null,
        },
        {
          scenario: '2 intake',
          figure: `${name}: stage prepare (decode, resize, encode), p50`,
          unit: 'ms',
          value: figure(servicePrepare),
          baseline: { label: 'floor prepare', value: figure(floorPrepare) },
          ratio: { kind: 'plus-ms', value: figure(servicePrepare.map((v, i) => v - floorPrepare[i]!)) },
          met: null,
        },
        {
          scenario: '2 intake',
          figure: `${name}: stages model + queue + charge + cache, p50`,
          unit: 'ms',
          value: figure(stageP50((st) => (st.model ?? 0) + (st.queue ?? 0) + (st.charge ?? 0) + (st.cache ?? 0))),
          met: null,
        },
        {
          scenario: '2 intake',
          figure: `${name}: outside the stages (HTTP, auth, JSON, the client), p50`,
          unit: 'ms',
          value: figure(rounds.map((r) => median(r.miss.filter((a) => a.stages).map((a) => a.ms - Object.values(a.stages!).reduce((sum, ms) => sum + ms, 0))))),
          met: null,
        },
      )
    }
    const hitP50 = rounds.map((r) => median(r.hit.map((a) => a.ms)))
    const plus = figure(hitP50.map((v, i) => v - fetchP50[i]!))
    hits.push(
      {
        scenario: '3 cache hits',
        figure: `${name}: hit p50`,
        unit: 'ms',
        value: figure(hitP50),
        baseline: { label: 'fetch', value: figure(fetchP50) },
        ratio: { kind: 'plus-ms', value: plus },
        target: `≤ fetch + ${TARGETS.hitPlusMs} ms`,
        met: plus.median <= TARGETS.hitPlusMs,
      },
      { scenario: '3 cache hits', figure: `${name}: hit p99`, unit: 'ms', value: figure(rounds.map((r) => p99(r.hit.map((a) => a.ms)))), met: null },
      {
        scenario: '3 cache hits',
        figure: `${name}: hits/s at ${HIT_CONNECTIONS} connections`,
        unit: 'rps',
        value: figure(rounds.map((r) => r.hitConcurrent.rps)),
        met: null,
      },
    )
  }
  return { intake, hits }
}

/** Scenario 6: each figure of the grown database against the same figure of the small one, per round. */
export function scaleRows(small: Row[], large: Row[]): Row[] {
  const rows: Row[] = []
  for (const l of large) {
    const s = small.find((row) => row.scenario === l.scenario && row.figure === l.figure)
    if (!s || l.unit === 'us' || l.unit === 'bytes') continue // CPU time and log bytes stay in the scenario's own rows and the JSON
    const higherIsBetter = l.unit === 'rps'
    const ratio = ratioFigure(l.value.rounds, s.value.rounds)
    const limit = higherIsBetter ? 1 - TARGETS.scaleWorse : 1 + TARGETS.scaleWorse
    rows.push({
      scenario: '6 scale',
      figure: `${l.scenario.replace(/^\d /, '')}: ${l.figure}`,
      unit: l.unit,
      value: l.value,
      baseline: { label: 'small db', value: s.value },
      ratio: { kind: 'x', value: ratio },
      target: higherIsBetter ? `≥ ${limit.toFixed(2)}× small` : `≤ ${limit.toFixed(2)}× small`,
      met: higherIsBetter ? ratio.median >= limit : ratio.median <= limit,
    })
  }
  return rows
}
