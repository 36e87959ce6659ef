// `bun run bench`: builds dist/alttext, runs it against a fake Ollama and a local HTTPS image server,
// drives load with wrk from its own process, and prints one Markdown table (also written as JSON to
// bench-results/). Every request goes to 127.0.0.1; every run is bounded in time; every child process
// and temporary folder is removed at the end, also on error or Ctrl-C. See scripts/bench/README.md.
//
// Environment: BENCH_ROUNDS (default 3), BENCH_KEEP=1 (keep the temporary folder with the service logs).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, release, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { makeBenchImages, type BenchImage } from './lib/images'
import type { FloorSample } from './lib/floor'
import {
  cleanupAll,
  cpuMsOf,
  installCleanup,
  memoryOf,
  registerTempDir,
  runForResult,
  spawnReady,
  startService,
  stopChild,
  type ReadyChild,
  type ServiceHandle,
} from './lib/procs'
import { markdownTable, type Row } from './lib/report'
import { seedDatabase, type SeedResult } from './lib/seed'
import { figure, median, percentile, ratioFigure } from './lib/stats'
import { ensureWrk, runWrk, type WrkResult } from './lib/wrk'
import type { BurstAnswer, BurstResult } from './burst'
import type { PairedAnswer, PairedResult } from './paired'

const REPO = join(import.meta.dir, '..', '..')
const BINARY = join(REPO, 'dist', 'alttext')
const BUN = process.execPath
const FIXTURES = join(import.meta.dir, 'fixtures.ts')
const BURST = join(import.meta.dir, 'burst.ts')
const PAIRED = join(import.meta.dir, 'paired.ts')

/** Rounds per figure; fewer than 3 only for trying the script out (the figures then have no spread). */
const ROUNDS = Math.min(10, Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 3)) || 3))
/** Seconds per wrk run. */
const DURATION = { httpWarm: 1, http: 3, miss: 6, hit: 2, hitConcurrent: 2 }
const HTTP_CONNECTIONS = 64
const HIT_CONNECTIONS = 16
/** Iterations of the paired client per round: at least `min`, then until `DURATION` has passed. */
const PAIRED_LIMITS = { miss: { min: 8, max: 80 }, hit: { min: 30, max: 600 } }
const QUEUE = { modelMs: 1000, concurrency: 2, burst: 40, deadlineMs: 15_000 }
const MEMORY = { burst: 50, probeIntervalMs: 10 }
const TARGETS = { httpRatio: 0.5, intakeRatio: 1.3, hitPlusMs: 5, queueShare: 0.9, idleMiB: 80, peakMiB: 1024, loopDelayMs: 50, scaleWorse: 0.2 }

const startedAt = performance.now()
const elapsed = () => `${((performance.now() - startedAt) / 1000).toFixed(0).padStart(3)}s`
const log = (message: string) => console.error(`[${elapsed()}] ${message}`)
const MiB = 1024 * 1024
/** Anything that makes a figure doubtful (errors, a hit where a miss was meant...): printed under the table. */
const anomalies: string[] = []

type Fixtures = {
  dir: string
  images: ReturnType<typeof makeBenchImages>
  imageOrigin: string
  caPath: string
  caPem: string
  ollamaFast: string
  ollamaSlow: string
  wrk: string
}

type Account = { apiKey: string }

type HttpRound = { rps: number; p50: number; p99: number; cpuUsPerRequest: number; errors: number; requests: number }
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
type ServiceRuns = { label: string; usage: HttpRound[]; validate: HttpRound[]; intake: Record<string, IntakeRun[]> }
type FloorRound = {
  floor: FloorSample[]
  /** Fetch only, back to back: the baseline of a cache hit. */
  fetchMs: number[]
  /** GIF only: the same through the service's own src/intake/prepare.ts (a Worker per image). */
  serviceCode?: FloorSample[]
}
/** Baselines measured in the same rounds: bare Bun.serve, and the floor per format. */
type Baselines = { bareGet: HttpRound[]; barePost: HttpRound[]; floor: Record<string, FloorRound[]> }

function serviceEnv(fx: Fixtures, dbPath: string, ollama: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ALTTEXT_DB: dbPath,
    OLLAMA_HOST: ollama,
    ALTTEXT_RATE_LIMITS: 'off',
    ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: fx.caPath,
    ALTTEXT_FREE_CREDITS: '10000000',
    ...extra,
  }
}

async function run(command: string[], what: string): Promise<void> {
  const proc = Bun.spawn(command, { cwd: REPO, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${what} failed (exit ${code}):\n${out.slice(-3000)}\n${err.slice(-3000)}`)
}

async function register(service: ServiceHandle): Promise<Account> {
  const response = await fetch(`${service.url}/api/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.com', password: 'correct horse battery staple' }),
  })
  if (response.status !== 201) throw new Error(`register answered ${response.status}: ${await response.text()}`)
  const body = (await response.json()) as { api_key: string }
  return { apiKey: body.api_key }
}

async function responseSizes(service: ServiceHandle, account: Account): Promise<{ usage: number; validate: number }> {
  const usage = await fetch(`${service.url}/api/usage`, { headers: { 'x-api-key': account.apiKey } })
  const validate = await fetch(`${service.url}/api/validate-key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: account.apiKey }),
  })
  if (usage.status !== 200 || validate.status !== 200) throw new Error(`usage ${usage.status}, validate-key ${validate.status}`)
  return { usage: (await usage.arrayBuffer()).byteLength, validate: (await validate.arrayBuffer()).byteLength }
}

/** Each round measures the services in a different order, so neither always runs first. */
const inRoundOrder = <T>(items: T[], round: number): T[] => (round % 2 === 0 ? items : [...items].reverse())

// ---------------------------------------------------------------------------------------------
// Scenarios 1–3, and 6: the same on two services at once, one on a small database and one on the
// grown copy, measured in the same rounds (interleaved) so that a drift of the machine touches both.

async function measureScenarios1to3(fx: Fixtures, services: Array<{ label: string; service: ServiceHandle }>, bare: ReadyChild, account: Account) {
  const bareUrl = String(bare.info.url)
  const barePid = Number(bare.info.pid)
  const validateBody = JSON.stringify({ api_key: account.apiKey })
  const base: Baselines = { bareGet: [], barePost: [], floor: {} }
  const runs: ServiceRuns[] = services.map(({ label }) => ({ label, usage: [], validate: [], intake: {} }))

  type Target = { name: string; url: string; env: Record<string, string>; pid: number; record: HttpRound[] }
  const getTargets: Target[] = [
    { name: 'bare GET', url: `${bareUrl}/api/usage`, env: {}, pid: barePid, record: base.bareGet },
    ...services.map(({ label, service }, i) => ({
      name: `usage (${label})`,
      url: `${service.url}/api/usage`,
      env: { BENCH_KEY: account.apiKey },
      pid: service.pid,
      record: runs[i]!.usage,
    })),
  ]
  const postEnv = { BENCH_METHOD: 'POST', BENCH_BODY: validateBody }
  const postTargets: Target[] = [
    { name: 'bare POST', url: `${bareUrl}/api/validate-key`, env: postEnv, pid: barePid, record: base.barePost },
    ...services.map(({ label, service }, i) => ({
      name: `validate-key (${label})`,
      url: `${service.url}/api/validate-key`,
      env: postEnv,
      pid: service.pid,
      record: runs[i]!.validate,
    })),
  ]
  const targets = [...getTargets, ...postTargets]
  log(`scenarios 1 and 6 (HTTP stack): ${ROUNDS} rounds × ${targets.length} targets × ${DURATION.http} s at ${HTTP_CONNECTIONS} connections`)
  for (const target of targets)
    await runWrk(fx.wrk, { url: target.url, script: 'static.lua', connections: HTTP_CONNECTIONS, durationS: DURATION.httpWarm, env: target.env })
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of [...inRoundOrder(getTargets, round), ...inRoundOrder(postTargets, round)]) {
      const cpu0 = cpuMsOf(target.pid)
      const result = await runWrk(fx.wrk, { url: target.url, script: 'static.lua', connections: HTTP_CONNECTIONS, durationS: DURATION.http, env: target.env })
      const cpuMs = cpuMsOf(target.pid) - cpu0
      const errors = result.status + result.connect + result.read + result.write + result.timeout
      target.record.push({
        rps: result.rps,
        p50: result.p50 / 1000,
        p99: result.p99 / 1000,
        cpuUsPerRequest: (cpuMs * 1000) / result.requests,
        errors,
        requests: result.requests,
      })
      if (errors > 0)
        anomalies.push(
          `round ${round + 1}, ${target.name}: ${errors} errors (status ≥ 400: ${result.status}, socket: ${result.connect + result.read + result.write}, timeouts: ${result.timeout})`,
        )
    }
    log(`round ${round + 1}: ${targets.map((t) => `${t.name} ${Math.round(t.record[round]!.rps)}/s`).join(', ')}`)
  }

  log(`scenarios 2, 3 and 6 (intake, cache hits): ${fx.images.intake.length} formats × ${ROUNDS} rounds × ${services.length} services`)
  const serviceUrls = services.map(({ service }) => service.url)
  const paired = (mode: 'miss' | 'hit', image: BenchImage, prefix: string, seconds: number, limits: { min: number; max: number }, count?: number) =>
    runForResult<PairedResult>('paired client', [BUN, PAIRED], {
      BENCH_PAIRED: JSON.stringify({
        mode,
        services: serviceUrls,
        key: account.apiKey,
        imageUrl: fx.imageOrigin + image.path,
        caPath: fx.caPath,
        format: image.format,
        width: image.width,
        height: image.height,
        prefix,
        seconds,
        ...limits,
        count,
        serviceCode: mode === 'miss' && image.format === 'gif',
      }),
    })
  for (const image of fx.images.intake) {
    base.floor[image.format] = []
    for (const run of runs) run.intake[image.format] = []
    // Warm every path (first decode, first Worker, JIT) before anything is recorded.
    await paired('miss', image, `warm-${image.format}`, 0, { min: 2, max: 2 })
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const image of fx.images.intake) {
      const prefix = `r${round}-${image.format}`
      const cpu0 = services.map(({ service }) => cpuMsOf(service.pid))
      const miss = await paired('miss', image, prefix, DURATION.miss, PAIRED_LIMITS.miss)
      const cpu1 = services.map(({ service }) => cpuMsOf(service.pid))
      const hit = await paired('hit', image, prefix, DURATION.hit, PAIRED_LIMITS.hit, miss.iterations)
      const cpu2 = services.map(({ service }) => cpuMsOf(service.pid))
      base.floor[image.format]!.push({ floor: miss.floor, fetchMs: hit.fetchMs, ...(miss.serviceCode.length ? { serviceCode: miss.serviceCode } : {}) })
      const parts: string[] = []
      for (const i of inRoundOrder([...services.keys()], round)) {
        const { label, service } = services[i]!
        // "The same requests again", now at HIT_CONNECTIONS connections: contexts 1..N of the miss run.
        const hitConcurrent = await runWrk(fx.wrk, {
          url: `${service.url}/api/alt-text`,
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
          anomalies.push(`round ${round + 1}, ${label}, ${image.label}: ${badMiss} miss-run answers not a 200 miss; ${badHit} hit-run answers not a 200 hit`)
        parts.push(
          `${label}: miss p50 ${median(missAnswers.map((a) => a.ms)).toFixed(1)} ms ×${missAnswers.length}, hit p50 ${median(hitAnswers.map((a) => a.ms)).toFixed(2)} ms ×${hitAnswers.length}, ` +
            `${Math.round(hitConcurrent.rps)} hits/s${badMiss + badHit ? ' (ANOMALY)' : ''}`,
        )
      }
      log(
        `round ${round + 1} ${image.label}: floor ${median(miss.floor.map((f) => f.totalMs)).toFixed(1)} ms, fetch ${median(hit.fetchMs).toFixed(2)} ms; ${parts.join('; ')}`,
      )
    }
  }
  return { base, runs }
}

// ---------------------------------------------------------------------------------------------
// Scenario 4: queueing.

type QueueRound = {
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

async function measureQueue(fx: Fixtures, dbPath: string, account: Account, logDir: string): Promise<QueueRound[]> {
  log(`scenario 4 (queueing): model ${QUEUE.modelMs} ms, concurrency ${QUEUE.concurrency}, ${QUEUE.burst} requests at once, ${ROUNDS} rounds`)
  const service = await startService(
    BINARY,
    serviceEnv(fx, dbPath, fx.ollamaSlow, { ALTTEXT_MODEL_CONCURRENCY: String(QUEUE.concurrency) }),
    join(logDir, 'queue.log'),
  )
  const rounds: QueueRound[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const result = await runForResult<BurstResult>('burst', [BUN, BURST], {
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

// ---------------------------------------------------------------------------------------------
// Scenario 5: memory and the event loop.

type MemoryRound = {
  idleRss: number
  peakRss: number
  sampledPeakRss: number
  afterRss: number
  idleProbeP50: number
  loadProbeP99: number
  delayP99: number
  statuses: Record<string, number>
  burstMs: number
  probes: number
}

async function measureMemory(fx: Fixtures, dbPath: string, account: Account, logDir: string): Promise<MemoryRound[]> {
  log(
    `scenario 5 (memory, event loop): ${MEMORY.burst} requests for a ${(fx.images.large.bytes / 1e6).toFixed(1)} MB image at once, fresh service per round, ${ROUNDS} rounds`,
  )
  const rounds: MemoryRound[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const service = await startService(BINARY, serviceEnv(fx, dbPath, fx.ollamaFast), join(logDir, `memory-${round}.log`))
    try {
      await fetch(`${service.url}/health`).then((r) => r.arrayBuffer())
      await Bun.sleep(1500)
      const idleRss = memoryOf(service.pid).rss
      let sampledPeakRss = idleRss
      const sampler = setInterval(() => {
        try {
          sampledPeakRss = Math.max(sampledPeakRss, memoryOf(service.pid).rss)
        } catch {
          // process gone; the burst will fail and say so
        }
      }, 20)
      let result: BurstResult
      try {
        result = await runForResult<BurstResult>('burst', [BUN, BURST], {
          BENCH_BURST: JSON.stringify({
            url: service.url,
            key: account.apiKey,
            imageUrl: fx.imageOrigin + fx.images.large.path,
            count: MEMORY.burst,
            prefix: `memory-r${round}`,
            probe: true,
            probeIntervalMs: MEMORY.probeIntervalMs,
            idleProbeMs: 1000,
          }),
        })
      } finally {
        clearInterval(sampler)
      }
      const peakRss = memoryOf(service.pid).hwm
      await Bun.sleep(2000)
      const afterRss = memoryOf(service.pid).rss
      const statuses: Record<string, number> = {}
      for (const answer of result.answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
      const idleProbeP50 = median(result.idleProbeMs)
      const loadProbeP99 = percentile(result.loadProbeMs, 99)
      rounds.push({
        idleRss,
        peakRss,
        sampledPeakRss,
        afterRss,
        idleProbeP50,
        loadProbeP99,
        delayP99: loadProbeP99 - idleProbeP50,
        statuses,
        burstMs: result.burstMs,
        probes: result.loadProbeMs.length,
      })
      log(
        `memory round ${round + 1}: idle ${(idleRss / MiB).toFixed(1)} MiB, peak ${(peakRss / MiB).toFixed(1)} MiB, after ${(afterRss / MiB).toFixed(1)} MiB; ` +
          `/health p50 idle ${idleProbeP50.toFixed(2)} ms, p99 under load ${loadProbeP99.toFixed(1)} ms (${result.loadProbeMs.length} probes); ` +
          `answers ${JSON.stringify(statuses)} in ${(result.burstMs / 1000).toFixed(1)} s`,
      )
    } finally {
      await service.stop()
    }
  }
  return rounds
}

// ---------------------------------------------------------------------------------------------
// The table.

const fig = (values: number[]) => figure(values)

function httpRows(svc: ServiceRuns, base: Baselines, scenario: string): Row[] {
  const rows: Row[] = []
  const pairs = [
    { name: 'GET /api/usage', s: svc.usage, b: base.bareGet },
    { name: 'POST /api/validate-key', s: svc.validate, b: base.barePost },
  ]
  for (const { name, s, b } of pairs) {
    const ratio = ratioFigure(
      s.map((r) => r.rps),
      b.map((r) => r.rps),
    )
    rows.push({
      scenario,
      figure: `${name}: requests/s at ${HTTP_CONNECTIONS} connections`,
      unit: 'rps',
      value: fig(s.map((r) => r.rps)),
      baseline: { label: 'bare Bun.serve', value: fig(b.map((r) => r.rps)) },
      ratio: { kind: 'x', value: ratio },
      target: `≥ ${TARGETS.httpRatio}× bare`,
      met: ratio.median >= TARGETS.httpRatio,
    })
    for (const p of ['p50', 'p99'] as const) {
      rows.push({
        scenario,
        figure: `${name}: latency ${p}`,
        unit: 'ms',
        value: fig(s.map((r) => r[p])),
        baseline: { label: 'bare', value: fig(b.map((r) => r[p])) },
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
      scenario,
      figure: `${name}: CPU time per request`,
      unit: 'us',
      value: fig(s.map((r) => r.cpuUsPerRequest)),
      baseline: { label: 'bare', value: fig(b.map((r) => r.cpuUsPerRequest)) },
      ratio: {
        kind: 'x',
        value: ratioFigure(
          s.map((r) => r.cpuUsPerRequest),
          b.map((r) => r.cpuUsPerRequest),
        ),
      },
      met: null,
    })
  }
  return rows
}

function intakeRows(svc: ServiceRuns, base: Baselines, images: BenchImage[]): { intake: Row[]; hits: Row[] } {
  const intake: Row[] = []
  const hits: Row[] = []
  for (const image of images) {
    const rounds = svc.intake[image.format]!
    const floors = base.floor[image.format]!
    const name = `${image.label} (${(image.bytes / 1e6).toFixed(2)} MB)`
    const missP50 = rounds.map((r) => median(r.miss.map((a) => a.ms)))
    const missP99 = rounds.map((r) =>
      percentile(
        r.miss.map((a) => a.ms),
        99,
      ),
    )
    const floorP50 = floors.map((f) => median(f.floor.map((s) => s.totalMs)))
    const floorP99 = floors.map((f) =>
      percentile(
        f.floor.map((s) => s.totalMs),
        99,
      ),
    )
    const fetchP50 = floors.map((f) => median(f.fetchMs))
    const ratio = ratioFigure(missP50, floorP50)
    intake.push({
      scenario: '2 intake',
      figure: `${name}: end-to-end p50, instant model`,
      unit: 'ms',
      value: fig(missP50),
      baseline: { label: 'floor', value: fig(floorP50) },
      ratio: { kind: 'x', value: ratio },
      target: `≤ ${TARGETS.intakeRatio}× floor`,
      met: ratio.median <= TARGETS.intakeRatio,
    })
    intake.push({
      scenario: '2 intake',
      figure: `${name}: end-to-end p99`,
      unit: 'ms',
      value: fig(missP99),
      baseline: { label: 'floor p99', value: fig(floorP99) },
      ratio: { kind: 'x', value: ratioFigure(missP99, floorP99) },
      met: null,
    })
    if (floors.every((f) => f.serviceCode)) {
      const viaService = floors.map((f) => median(f.serviceCode!.map((s) => s.totalMs)))
      intake.push({
        scenario: '2 intake',
        figure: `${name}: fetch + the service's own prepareImage in-process (pooled GIF worker), p50`,
        unit: 'ms',
        value: fig(viaService),
        baseline: { label: 'floor', value: fig(floorP50) },
        ratio: { kind: 'x', value: ratioFigure(viaService, floorP50) },
        met: null,
      })
    }
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
          value: fig(serviceFetch),
          baseline: { label: 'floor fetch', value: fig(floorFetch) },
          ratio: { kind: 'plus-ms', value: figure(serviceFetch.map((v, i) => v - floorFetch[i]!)) },
          met: null,
        },
        {
          scenario: '2 intake',
          figure: `${name}: stage prepare (decode, resize, encode), p50`,
          unit: 'ms',
          value: fig(servicePrepare),
          baseline: { label: 'floor prepare', value: fig(floorPrepare) },
          ratio: { kind: 'plus-ms', value: figure(servicePrepare.map((v, i) => v - floorPrepare[i]!)) },
          met: null,
        },
        {
          scenario: '2 intake',
          figure: `${name}: stages model + queue + charge + cache, p50`,
          unit: 'ms',
          value: fig(stageP50((st) => (st.model ?? 0) + (st.queue ?? 0) + (st.charge ?? 0) + (st.cache ?? 0))),
          met: null,
        },
        {
          scenario: '2 intake',
          figure: `${name}: outside the stages (HTTP, auth, JSON, the client), p50`,
          unit: 'ms',
          value: fig(rounds.map((r) => median(r.miss.filter((a) => a.stages).map((a) => a.ms - Object.values(a.stages!).reduce((sum, ms) => sum + ms, 0))))),
          met: null,
        },
      )
    }
    const hitP50 = rounds.map((r) => median(r.hit.map((a) => a.ms)))
    const plus = figure(hitP50.map((v, i) => v - fetchP50[i]!))
    hits.push({
      scenario: '3 cache hits',
      figure: `${name}: hit p50`,
      unit: 'ms',
      value: fig(hitP50),
      baseline: { label: 'fetch', value: fig(fetchP50) },
      ratio: { kind: 'plus-ms', value: plus },
      target: `≤ fetch + ${TARGETS.hitPlusMs} ms`,
      met: plus.median <= TARGETS.hitPlusMs,
    })
    hits.push({
      scenario: '3 cache hits',
      figure: `${name}: hit p99`,
      unit: 'ms',
      value: fig(
        rounds.map((r) =>
          percentile(
            r.hit.map((a) => a.ms),
            99,
          ),
        ),
      ),
      met: null,
    })
    hits.push({
      scenario: '3 cache hits',
      figure: `${name}: hits/s at ${HIT_CONNECTIONS} connections`,
      unit: 'rps',
      value: fig(rounds.map((r) => r.hitConcurrent.rps)),
      met: null,
    })
  }
  return { intake, hits }
}

/** Scenario 6: each figure of the grown database against the same figure of the small one, per round. */
function scaleRows(small: Row[], large: Row[]): Row[] {
  const rows: Row[] = []
  for (let i = 0; i < large.length; i++) {
    const l = large[i]!
    const s = small[i]!
    if (l.unit === 'us' || l.figure.includes('prepareImage')) continue // service-independent or kept to the JSON
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

function queueRows(rounds: QueueRound[]): Row[] {
  const ideal = QUEUE.concurrency / (QUEUE.modelMs / 1000)
  const share = figure(rounds.map((r) => r.rate / ideal))
  const allRejected = rounds.flatMap((r) => r.rejectedMs)
  const slowest = figure(rounds.map((r) => r.slowestMs))
  return [
    {
      scenario: '4 queueing',
      figure: `generations/s, ${QUEUE.burst} at once, model ${QUEUE.modelMs / 1000} s, concurrency ${QUEUE.concurrency}`,
      unit: 'per-s',
      value: figure(rounds.map((r) => r.rate)),
      baseline: { label: 'ideal', value: ideal },
      ratio: { kind: 'x', value: share },
      target: `≥ ${TARGETS.queueShare}× ideal`,
      met: share.median >= TARGETS.queueShare,
    },
    { scenario: '4 queueing', figure: 'answered 200', unit: 'count', value: figure(rounds.map((r) => r.ok)), met: null },
    { scenario: '4 queueing', figure: 'answered 503 overloaded', unit: 'count', value: figure(rounds.map((r) => r.rejected)), met: null },
    {
      scenario: '4 queueing',
      figure: '503 answered after (median of the 503s)',
      unit: 'ms',
      value: figure(rounds.map((r) => (r.rejectedMs.length ? median(r.rejectedMs) : Number.NaN))),
      met: null,
    },
    {
      scenario: '4 queueing',
      figure: '503 answered after (slowest 503, all rounds)',
      unit: 'ms',
      value: figure(allRejected.length ? [Math.max(...allRejected)] : []),
      met: null,
    },
    {
      scenario: '4 queueing',
      figure: 'other answers (not 200/503)',
      unit: 'count',
      value: figure(rounds.map((r) => r.other)),
      target: '0',
      met: rounds.every((r) => r.other === 0),
    },
    {
      scenario: '4 queueing',
      figure: 'slowest answer of any kind',
      unit: 'ms',
      value: slowest,
      target: `≤ ${QUEUE.deadlineMs} ms`,
      met: slowest.max <= QUEUE.deadlineMs,
    },
  ]
}

function memoryRows(rounds: MemoryRound[], large: BenchImage): Row[] {
  const idle = figure(rounds.map((r) => r.idleRss / MiB))
  const peak = figure(rounds.map((r) => r.peakRss / MiB))
  const delay = figure(rounds.map((r) => r.delayP99))
  const ok = rounds.map((r) => r.statuses['200'] ?? 0)
  return [
    {
      scenario: '5 memory',
      figure: 'idle RSS (fresh start, grown database)',
      unit: 'MiB',
      value: idle,
      target: `≤ ${TARGETS.idleMiB} MiB`,
      met: idle.median <= TARGETS.idleMiB,
    },
    {
      scenario: '5 memory',
      figure: `peak RSS, ${MEMORY.burst} × ${(large.bytes / 1e6).toFixed(1)} MB images in flight (VmHWM)`,
      unit: 'MiB',
      value: peak,
      target: `≤ ${TARGETS.peakMiB} MiB`,
      met: peak.median <= TARGETS.peakMiB,
    },
    { scenario: '5 memory', figure: 'RSS 2 s after that burst', unit: 'MiB', value: figure(rounds.map((r) => r.afterRss / MiB)), met: null },
    {
      scenario: '5 memory',
      figure: 'event-loop delay p99 (GET /health every 10 ms: p99 under load − idle p50)',
      unit: 'ms',
      value: delay,
      baseline: { label: 'idle /health p50', value: figure(rounds.map((r) => r.idleProbeP50)) },
      target: `≤ ${TARGETS.loopDelayMs} ms`,
      met: delay.median <= TARGETS.loopDelayMs,
    },
    { scenario: '5 memory', figure: `answered 200 of ${MEMORY.burst}`, unit: 'count', value: figure(ok), met: null },
  ]
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  installCleanup()
  const wrk = await ensureWrk()
  if (!existsSync(join(REPO, 'node_modules', 'elysia'))) {
    log('installing dependencies (bun install --frozen-lockfile)')
    await run([BUN, 'install', '--frozen-lockfile'], 'bun install')
  }
  log('building dist/alttext (bun run build)')
  await run([BUN, 'run', 'build'], 'bun run build')

  const dir = mkdtempSync(join(tmpdir(), 'alttext-bench-'))
  if (process.env.BENCH_KEEP !== '1') registerTempDir(dir)
  else log(`keeping ${dir}`)
  const logDir = join(dir, 'logs')
  mkdirSync(logDir)

  log('making images')
  const images = makeBenchImages(join(dir, 'images'))
  log('starting the HTTPS image server, two fake Ollamas (instant and 1 s) and the bare Bun.serve, each in its own process')
  const [imageServer, ollamaFast, ollamaSlow] = await Promise.all([
    spawnReady('image server', [BUN, FIXTURES, 'image-server', join(dir, 'images')]),
    spawnReady('fake ollama (instant)', [BUN, FIXTURES, 'ollama', '0']),
    spawnReady('fake ollama (1 s)', [BUN, FIXTURES, 'ollama', String(QUEUE.modelMs)]),
  ])
  const caPath = String(imageServer.info.caPath)
  const fx: Fixtures = {
    dir,
    images,
    imageOrigin: String(imageServer.info.origin),
    caPath,
    caPem: readFileSync(caPath, 'utf8'),
    ollamaFast: String(ollamaFast.info.url),
    ollamaSlow: String(ollamaSlow.info.url),
    wrk,
  }
  const smallDb = join(dir, 'db-small', 'alttext.db')
  const largeDb = join(dir, 'db-large', 'alttext.db')

  // The small database: migrations and one account. Then its copy, grown (scenario 6).
  const first = await startService(BINARY, serviceEnv(fx, smallDb, fx.ollamaFast), join(logDir, 'first.log'))
  const account = await register(first)
  const sizes = await responseSizes(first, account)
  await first.stop() // closes the database: the WAL is checkpointed into the file
  mkdirSync(join(dir, 'db-large'))
  copyFileSync(smallDb, largeDb)
  if (existsSync(`${smallDb}-wal`)) copyFileSync(`${smallDb}-wal`, `${largeDb}-wal`)
  log('seeding the copy with 10 000 accounts (20 000 keys) and 100 000 cache rows')
  const seed: SeedResult = seedDatabase(largeDb)
  log(`seeded in ${(seed.ms / 1000).toFixed(1)} s; grown database ${(seed.dbBytes / MiB).toFixed(1)} MiB`)

  const [smallService, largeService, bare] = await Promise.all([
    startService(BINARY, serviceEnv(fx, smallDb, fx.ollamaFast), join(logDir, 'small.log')),
    startService(BINARY, serviceEnv(fx, largeDb, fx.ollamaFast), join(logDir, 'large.log')),
    spawnReady('bare Bun.serve', [BUN, FIXTURES, 'bare', String(sizes.usage), String(sizes.validate)]),
  ])
  const { base, runs } = await measureScenarios1to3(
    fx,
    [
      { label: 'small db', service: smallService },
      { label: 'large db', service: largeService },
    ],
    bare,
    account,
  )
  const [small, large] = runs as [ServiceRuns, ServiceRuns]
  await Promise.all([smallService.stop(), largeService.stop(), stopChild(bare.proc)])

  const queue = await measureQueue(fx, largeDb, account, logDir)
  const memory = await measureMemory(fx, largeDb, account, logDir)

  const smallHttp = httpRows(small, base, '1 HTTP stack')
  const largeHttp = httpRows(large, base, '1 HTTP stack')
  const smallIntake = intakeRows(small, base, images.intake)
  const largeIntake = intakeRows(large, base, images.intake)
  const rows: Row[] = [
    ...smallHttp,
    ...smallIntake.intake,
    ...smallIntake.hits,
    ...queueRows(queue),
    ...memoryRows(memory, images.large),
    ...scaleRows([...smallHttp, ...smallIntake.intake, ...smallIntake.hits], [...largeHttp, ...largeIntake.intake, ...largeIntake.hits]),
  ]
  const runSeconds = (performance.now() - startedAt) / 1000

  const table = markdownTable(rows)
  const cpu = cpus()
  const meta = {
    date: new Date().toISOString(),
    runSeconds,
    machine: { cpus: cpu.length, cpuModel: cpu[0]?.model ?? 'unknown', memoryGiB: totalmem() / 1024 ** 3, kernel: release() },
    bun: Bun.version,
    wrk: ((await new Response(Bun.spawn([wrk, '-v'], { stdout: 'pipe', stderr: 'pipe' }).stdout).text()).split('\n')[0] ?? '').replace(/ Copyright.*$/, ''),
    rounds: ROUNDS,
    durations: DURATION,
    connections: { http: HTTP_CONNECTIONS, hits: HIT_CONNECTIONS, intake: 1 },
    pairedLimits: PAIRED_LIMITS,
    images: [...images.intake, images.small, images.large],
    seed,
    responseSizes: sizes,
    targets: TARGETS,
    anomalies,
  }
  const resultsDir = join(REPO, 'bench-results')
  mkdirSync(resultsDir, { recursive: true })
  const json = JSON.stringify(
    { meta, rows, raw: { baselines: base, small, large, queue, memory } },
    (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value),
    2,
  )
  const stamp = meta.date.replace(/[:.]/g, '-')
  writeFileSync(join(resultsDir, `${stamp}.json`), json)
  writeFileSync(join(resultsDir, 'latest.json'), json)
  writeFileSync(join(resultsDir, 'latest.md'), `${table}\n`)

  const missed = rows.filter((r) => r.met === false)
  console.log(`\n## alttext benchmark — ${meta.date}\n`)
  console.log(
    `${meta.machine.cpus} × ${meta.machine.cpuModel}, Bun ${meta.bun}, ${meta.wrk}; ${ROUNDS} rounds per figure (median, min–max); run took ${runSeconds.toFixed(0)} s.\n`,
  )
  console.log(table)
  console.log(
    '\nRatios are taken per round from measurements of the same round (interleaved), then their median and range are shown; ' +
      'so a ratio can differ from the quotient of the two medians beside it. p99 of one-connection runs rests on 8–50 samples per round.',
  )
  console.log(`\nAnomalies: ${anomalies.length ? anomalies.join('; ') : 'none'}.`)
  console.log(`Targets missed: ${missed.length ? missed.map((r) => `${r.scenario} — ${r.figure}`).join('; ') : 'none'}.`)
  console.log(`JSON: bench-results/${stamp}.json (and latest.json, latest.md)`)
}

try {
  await main()
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exitCode = 1
} finally {
  await cleanupAll()
}
