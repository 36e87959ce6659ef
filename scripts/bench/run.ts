// `bun run bench`: builds dist/alttext, runs it against a fake Ollama and a local HTTPS image server,
// drives load with wrk and small Bun clients, each in its own process, and writes one Markdown table
// (with every figure's last value beside it) and the raw JSON to scripts/bench/results/. Every request
// goes to loopback; every run is bounded in time; every child process and temporary folder is removed
// at the end, also on error or Ctrl-C. See scripts/bench/README.md.
//
//   bun scripts/bench/run.ts [--quick] [--update-previous] [scenario ...]
//   scenarios: http (1), intake (2, 3), queue (4), memory (5), scale (6), bombs (7), hostile-gif (8),
//   db-lock (9), upload (10), console (11), batch (12), describe (13), audit (14), metrics (15), pool (16), backup (17), prepare (18), replicas (19), review (20), languages (21), ocr (22), site-audit (23); by name or number; all
//   when none is given.
// Environment: BENCH_QUICK=1 (= --quick), BENCH_ROUNDS, BENCH_BINARY (a built service binary: skips the
// build), BENCH_KEEP=1 (keep the temporary folder with the service logs).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { cpus, release, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import {
  type Account,
  anomalies,
  BENCH_DIR,
  BUN,
  elapsedSeconds,
  errorMessage,
  type Fixtures,
  log,
  loopback,
  MiB,
  QUICK,
  REPO,
  ROUNDS,
  register,
  serviceEnv,
} from './lib/common'
import { makeBenchImages, writeBombImages } from './lib/images'
import { attachPrevious, savePrevious } from './lib/previous'
import { cleanupAll, installCleanup, registerTempDir, type ServiceHandle, spawnReady, startService } from './lib/procs'
import { markdownTable, MOVED_LIMIT, movedBeyondLimit, movedPercent, type Row } from './lib/report'
import { type SeedResult, seedDatabase } from './lib/seed'
import { figure } from './lib/stats'
import { ensureWrk } from './lib/wrk'
import { type DbLockRound, DB_LOCK, dbLockRows, measureDbLock } from './scenarios/db-lock'
import { HOSTILE, type HostileResult, hostileRows, loadHostileGif, measureHostileGif } from './scenarios/hostile-gif'
import {
  type Baselines,
  HTTP_INTAKE_SETTINGS,
  httpGuardVerdicts,
  httpRows,
  intakeRows,
  measureHttp,
  measureIntake,
  type ServiceRuns,
  scaleRows,
} from './scenarios/http-intake'
import { type BombImages, bombRows, MEMORY, type MemoryRound, measureBombs, measureMemory, memoryRows } from './scenarios/memory'
import { measureQueue, QUEUE, type QueueRound, queueRows } from './scenarios/queue'
import { measureUpload, UPLOAD, type UploadRound, uploadRows } from './scenarios/upload'
import { CONSOLE, type ConsoleResult, consoleRows, measureConsole } from './scenarios/console'
import { DESCRIBE, type DescribeRound, describeRows, measureDescribe } from './scenarios/describe'
import { AUDIT, type AuditRound, auditRows, measureAudit } from './scenarios/audit'
import { type BatchRound, batchRows, measureBatch } from './scenarios/batch'
import { METRICS, type MetricsRound, measureMetrics, metricsRows } from './scenarios/metrics'
import { measurePool, POOL, type PoolRound, poolRows } from './scenarios/pool'
import { BACKUP, type BackupResult, backupRows, measureBackup } from './scenarios/backup'
import { measurePrepare, PREPARE, type PrepareResult, prepareRows } from './scenarios/prepare'
import { measureReplicas, REPLICAS, type ReplicasRound, replicasRows, replicasVerdicts } from './scenarios/replicas'
import { measureOcr, OCR, type OcrRound, ocrRows } from './scenarios/ocr'
import { measureReview, REVIEW, type ReviewOutcome, reviewRows, reviewVerdicts } from './scenarios/review'
import { LANGUAGES, type LanguagesRound, languagesRows, measureLanguages } from './scenarios/languages'
import { measureSiteAudit, SITE_AUDIT, type SiteAuditResult, siteAuditRows } from './scenarios/site-audit'

const FIXTURES = join(BENCH_DIR, 'fixtures.ts')
const RESULTS_DIR = join(BENCH_DIR, 'results')

const SCENARIOS = [
  'http',
  'intake',
  'queue',
  'memory',
  'scale',
  'bombs',
  'hostile-gif',
  'db-lock',
  'upload',
  'console',
  'batch',
  'describe',
  'audit',
  'metrics',
  'pool',
  'backup',
  'prepare',
  'replicas',
  'review',
  'languages',
  'ocr',
  'site-audit',
] as const
type Scenario = (typeof SCENARIOS)[number]
const BY_NUMBER: Record<string, Scenario> = {
  '1': 'http',
  '2': 'intake',
  '3': 'intake',
  '4': 'queue',
  '5': 'memory',
  '6': 'scale',
  '7': 'bombs',
  '8': 'hostile-gif',
  '9': 'db-lock',
  '10': 'upload',
  '11': 'console',
  '12': 'batch',
  '13': 'describe',
  '14': 'audit',
  '15': 'metrics',
  '16': 'pool',
  '17': 'backup',
  '18': 'prepare',
  '19': 'replicas',
  '20': 'review',
  '21': 'languages',
  '22': 'ocr',
  '23': 'site-audit',
}

function parseSelection(): Set<Scenario> {
  const names = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
  if (names.length === 0) return new Set(SCENARIOS)
  const selected = new Set<Scenario>()
  for (const name of names) {
    const scenario = BY_NUMBER[name] ?? SCENARIOS.find((s) => s === name)
    if (!scenario) throw new Error(`unknown scenario "${name}"; known: ${SCENARIOS.join(', ')} (or 1–23)`)
    selected.add(scenario)
  }
  // Scale alone means: HTTP stack and intake on both databases.
  if (selected.has('scale') && !selected.has('http') && !selected.has('intake')) {
    selected.add('http')
    selected.add('intake')
  }
  return selected
}

async function run(command: string[], what: string): Promise<void> {
  const proc = Bun.spawn(command, { cwd: REPO, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${what} failed (exit ${code}):\n${out.slice(-3000)}\n${err.slice(-3000)}`)
}

async function readJson(url: string, init?: RequestInit): Promise<unknown> {
  const response = await fetch(loopback(url), { ...init, signal: AbortSignal.timeout(15_000) })
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

/** Seconds each scenario took, for the README's timings. */
const timings: Record<string, number> = {}
/** Rows of scenarios that failed outright (the service would not start, a client crashed...). */
const failures: Row[] = []

/** Runs one scenario; a failure becomes a row and an anomaly, and the run goes on. */
async function attempt<T>(scenario: string, fn: () => Promise<T>): Promise<T | undefined> {
  const started = elapsedSeconds()
  try {
    return await fn()
  } catch (error) {
    const message = errorMessage(error).split('\n')[0]!.slice(0, 300)
    log(`${scenario} FAILED: ${errorMessage(error).slice(0, 2000)}`)
    anomalies.push(`${scenario}: failed — ${message}`)
    failures.push({ scenario, figure: `failed: ${message}`, unit: 'count', value: figure([]), met: false })
    return undefined
  } finally {
    timings[scenario] = Math.round(elapsedSeconds() - started)
  }
}

async function main(): Promise<void> {
  installCleanup()
  const selected = parseSelection()
  const all = selected.size === SCENARIOS.length
  const updatePrevious = process.argv.includes('--update-previous')
  if (updatePrevious && (QUICK || !all)) throw new Error('--update-previous needs a full run: every scenario, without --quick')
  log(`${QUICK ? 'quick' : 'full'} run, ${ROUNDS} round(s), scenarios: ${[...selected].join(', ')}`)

  const wrk = await ensureWrk()
  if (!existsSync(join(REPO, 'node_modules', 'elysia'))) {
    log('installing dependencies (bun install --frozen-lockfile)')
    await run([BUN, 'install', '--frozen-lockfile'], 'bun install')
  }
  let binary = process.env.BENCH_BINARY
  if (binary) log(`using ${binary} (BENCH_BINARY), not building`)
  else {
    log('building dist/alttext (bun run build)')
    await run([BUN, 'run', 'build'], 'bun run build')
    binary = join(REPO, 'dist', 'alttext')
  }

  const dir = mkdtempSync(join(tmpdir(), 'alttext-bench-'))
  if (process.env.BENCH_KEEP !== '1') registerTempDir(dir)
  else log(`keeping ${dir}`)
  const logDir = join(dir, 'logs')
  mkdirSync(logDir)

  log('making images')
  const imagesDir = join(dir, 'images')
  const images = makeBenchImages(imagesDir)
  let bombs: BombImages | undefined
  if (selected.has('bombs')) bombs = writeBombImages(imagesDir, MEMORY.bombs.side)
  let hostile: Uint8Array | string = 'not selected'
  if (selected.has('hostile-gif')) {
    hostile = await loadHostileGif()
    if (typeof hostile === 'string') log(`scenario 8 (hostile GIF) SKIPPED: ${hostile}`)
    else writeFileSync(join(imagesDir, HOSTILE.path.slice(1)), hostile)
  }

  log('starting the HTTPS image server and the fake Ollamas (instant and 1 s), each in its own process')
  const [imageServer, ollamaFast, ollamaSlow] = await Promise.all([
    spawnReady('image server', [BUN, FIXTURES, 'image-server', imagesDir]),
    spawnReady('fake ollama (instant)', [BUN, FIXTURES, 'ollama', '0']),
    spawnReady('fake ollama (1 s)', [BUN, FIXTURES, 'ollama', String(QUEUE.modelMs)]),
  ])
  const fx: Fixtures = {
    dir,
    logDir,
    images,
    imageOrigin: loopback(String(imageServer.info.origin)),
    caPath: String(imageServer.info.caPath),
    ollamaFast: loopback(String(ollamaFast.info.url)),
    ollamaSlow: loopback(String(ollamaSlow.info.url)),
    wrk,
    binary,
  }
  const smallDb = join(dir, 'db-small', 'alttext.db')
  const largeDb = join(dir, 'db-large', 'alttext.db')

  // The small database: migrations and one account; the bodies the bare Elysia app will answer.
  const first = await startService(binary, serviceEnv(fx, smallDb, fx.ollamaFast), join(logDir, 'first.log'))
  const account: Account = await register(first.url)
  const bodies = {
    usage: await readJson(`${first.url}/api/usage`, { headers: { 'x-api-key': account.apiKey } }),
    validate: await readJson(`${first.url}/api/validate-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: account.apiKey }),
    }),
  }
  await first.stop() // closes the database: the WAL is checkpointed into the file

  // Its copy, grown (scale; and the database of scenarios 4, 5 and 7, as an installation in use).
  let seed: SeedResult | undefined
  let grownDb = smallDb
  if (['scale', 'queue', 'memory', 'bombs'].some((s) => selected.has(s as Scenario))) {
    seed = await attempt('6 scale (seeding)', async () => {
      mkdirSync(join(dir, 'db-large'))
      copyFileSync(smallDb, largeDb)
      if (existsSync(`${smallDb}-wal`)) copyFileSync(`${smallDb}-wal`, `${largeDb}-wal`)
      log('seeding the copy with 10 000 accounts (20 000 keys) and 100 000 cache rows')
      const result = seedDatabase(largeDb)
      log(`seeded in ${(result.ms / 1000).toFixed(1)} s; grown database ${(result.dbBytes / MiB).toFixed(1)} MiB`)
      return result
    })
    if (seed) grownDb = largeDb
  }

  // Scenarios 1, 2, 3 and 6.
  const base: Baselines = { bareGet: [], barePost: [], dutiesGet: [], dutiesPost: [], floor: {} }
  const small: ServiceRuns = { label: 'small db', usage: [], validate: [], intake: {} }
  const large: ServiceRuns = { label: 'large db', usage: [], validate: [], intake: {} }
  const withLarge = selected.has('scale') && seed !== undefined
  if (selected.has('http') || selected.has('intake')) {
    const services: ServiceHandle[] = []
    try {
      services.push(await startService(binary, serviceEnv(fx, smallDb, fx.ollamaFast), join(logDir, 'small.log')))
      if (withLarge) services.push(await startService(binary, serviceEnv(fx, largeDb, fx.ollamaFast), join(logDir, 'large.log')))
      const targets = services.map((service, i) => ({ label: i === 0 ? 'small db' : 'large db', url: service.url, pid: service.pid, logPath: service.logPath }))
      const runs = withLarge ? [small, large] : [small]
      if (selected.has('http'))
        await attempt('1 HTTP stack', async () => {
          log('compiling the bare Elysia baseline (bun build --compile --minify, as the service)')
          const bareBinary = join(dir, 'bare-elysia')
          await run(
            [BUN, 'build', join(BENCH_DIR, 'bare-elysia.ts'), '--compile', '--minify', '--target=bun', '--outfile', bareBinary],
            'building the bare Elysia app',
          )
          const bareLog = join(logDir, 'bare-elysia.log')
          const dutiesLog = join(logDir, 'bare-elysia-duties.log')
          const bareEnv = { BENCH_BARE_BODIES: JSON.stringify(bodies) }
          const bare = await startService(bareBinary, bareEnv, bareLog, { args: [], readyPath: '/api/usage' })
          const duties = await startService(bareBinary, { ...bareEnv, BENCH_BARE_FEATURES: '1' }, dutiesLog, { args: [], readyPath: '/api/usage' })
          try {
            await measureHttp(
              fx,
              targets,
              { label: 'bare Elysia', url: bare.url, pid: bare.pid, logPath: bareLog },
              { label: 'bare Elysia + duties', url: duties.url, pid: duties.pid, logPath: dutiesLog },
              account,
              runs,
              base,
            )
          } finally {
            await Promise.all([bare.stop(), duties.stop()])
          }
        })
      if (selected.has('intake')) await attempt('2 intake', () => measureIntake(fx, targets, account, runs, base))
    } finally {
      await Promise.all(services.map((service) => service.stop()))
    }
  }

  const queue: QueueRound[] | undefined = selected.has('queue') ? await attempt('4 queueing', () => measureQueue(fx, grownDb, account)) : undefined
  const memory: MemoryRound[] | undefined = selected.has('memory') ? await attempt('5 memory', () => measureMemory(fx, grownDb, account)) : undefined
  const bombRounds: MemoryRound[] | undefined =
    selected.has('bombs') && bombs ? await attempt('7 bombs', () => measureBombs(fx, bombs, grownDb, account)) : undefined
  let hostileResult: HostileResult | undefined
  if (selected.has('hostile-gif')) {
    const bytes = hostile
    hostileResult =
      typeof bytes === 'string' ? { skipped: bytes } : await attempt('8 hostile GIF', () => measureHostileGif(fx, smallDb, account, bytes.byteLength))
  }
  const dbLock: DbLockRound[] | undefined = selected.has('db-lock') ? await attempt('9 db lock', () => measureDbLock(fx, smallDb)) : undefined
  const upload: UploadRound[] | undefined = selected.has('upload') ? await attempt('10 uploads', () => measureUpload(fx, smallDb, account)) : undefined
  const consoleResult: ConsoleResult | undefined = selected.has('console') ? await attempt('11 console', () => measureConsole(fx, smallDb)) : undefined
  const batchResult: BatchRound[] | undefined = selected.has('batch') ? await attempt('12 batches', () => measureBatch(fx)) : undefined
  const describeResult: DescribeRound[] | undefined = selected.has('describe') ? await attempt('13 describe', () => measureDescribe(fx)) : undefined
  const auditResult: AuditRound[] | undefined = selected.has('audit') ? await attempt('14 audit', () => measureAudit(fx)) : undefined
  const metricsResult: MetricsRound[] | undefined = selected.has('metrics')
    ? await attempt('15 metrics', () => measureMetrics(fx, smallDb, account))
    : undefined
  const poolResult: PoolRound[] | undefined = selected.has('pool') ? await attempt('16 pool', () => measurePool(fx)) : undefined
  const backupResult: BackupResult | undefined = selected.has('backup') ? await attempt('17 backup', () => measureBackup(fx, smallDb)) : undefined
  const prepareResult: PrepareResult | undefined = selected.has('prepare') ? await attempt('18 prepare', () => measurePrepare(fx)) : undefined
  const replicasResult: ReplicasRound[] | undefined = selected.has('replicas') ? await attempt('19 replicas', () => measureReplicas(fx)) : undefined
  const reviewResult: ReviewOutcome | undefined = selected.has('review') ? await attempt('20 review', () => measureReview(fx)) : undefined
  const languagesResult: LanguagesRound[] | undefined = selected.has('languages')
    ? await attempt('21 languages', () => measureLanguages(fx, join(dir, 'db-languages', 'alttext.db')))
    : undefined
  const ocrResult: OcrRound[] | undefined = selected.has('ocr') ? await attempt('22 ocr', () => measureOcr(fx)) : undefined
  const siteAuditResult: SiteAuditResult | undefined = selected.has('site-audit') ? await attempt('23 site-audit', () => measureSiteAudit(fx)) : undefined

  // The table.
  const smallHttp = httpRows(small, base)
  const guard = [
    ...httpGuardVerdicts(smallHttp),
    ...(replicasResult ? replicasVerdicts(replicasResult) : []),
    ...(reviewResult ? reviewVerdicts(reviewResult) : []),
  ]
  for (const line of guard) log(line)
  const largeHttp = withLarge ? httpRows(large, base) : []
  const smallIntake = intakeRows(small, base, images.intake)
  const largeIntake = withLarge ? intakeRows(large, base, images.intake) : { intake: [], hits: [] }
  const rows: Row[] = [
    ...smallHttp,
    ...smallIntake.intake,
    ...smallIntake.hits,
    ...(queue ? queueRows(queue) : []),
    ...(memory ? memoryRows(memory, images.large) : []),
    ...(withLarge ? scaleRows([...smallHttp, ...smallIntake.intake, ...smallIntake.hits], [...largeHttp, ...largeIntake.intake, ...largeIntake.hits]) : []),
    ...(bombRounds && bombs ? bombRows(bombRounds, bombs, images.large) : []),
    ...(hostileResult ? hostileRows(hostileResult) : []),
    ...(dbLock ? dbLockRows(dbLock) : []),
    ...(upload ? uploadRows(upload, images.large) : []),
    ...(consoleResult ? consoleRows(consoleResult) : []),
    ...(batchResult ? batchRows(batchResult) : []),
    ...(describeResult ? describeRows(describeResult) : []),
    ...(auditResult ? auditRows(auditResult) : []),
    ...(metricsResult ? metricsRows(metricsResult) : []),
    ...(poolResult ? poolRows(poolResult) : []),
    ...(backupResult ? backupRows(backupResult) : []),
    ...(prepareResult ? prepareRows(prepareResult) : []),
    ...(replicasResult ? replicasRows(replicasResult) : []),
    ...(reviewResult ? reviewRows(reviewResult) : []),
    ...(languagesResult ? languagesRows(languagesResult) : []),
    ...(ocrResult ? ocrRows(ocrResult) : []),
    ...(siteAuditResult ? siteAuditRows(siteAuditResult) : []),
    ...failures,
  ]
  const previousSource = attachPrevious(rows)
  const runSeconds = elapsedSeconds()

  const cpu = cpus()
  const meta = {
    date: new Date().toISOString(),
    mode: QUICK ? 'quick' : 'full',
    scenarios: [...selected],
    runSeconds,
    scenarioSeconds: timings,
    machine: { cpus: cpu.length, cpuModel: cpu[0]?.model ?? 'unknown', memoryGiB: totalmem() / 1024 ** 3, kernel: release() },
    bun: Bun.version,
    wrk: ((await new Response(Bun.spawn([wrk, '-v'], { stdout: 'pipe', stderr: 'pipe' }).stdout).text()).split('\n')[0] ?? '').replace(/ Copyright.*$/, ''),
    rounds: ROUNDS,
    httpIntake: HTTP_INTAKE_SETTINGS,
    queue: QUEUE,
    memory: MEMORY,
    hostile: HOSTILE,
    dbLock: DB_LOCK,
    upload: UPLOAD,
    console: CONSOLE,
    describe: DESCRIBE,
    audit: AUDIT,
    metrics: METRICS,
    pool: POOL,
    backup: BACKUP,
    prepare: PREPARE,
    replicas: REPLICAS,
    review: REVIEW,
    languages: LANGUAGES,
    ocr: OCR,
    siteAudit: SITE_AUDIT,
    images: [...images.intake, images.small, images.large, ...(bombs ? [bombs.png, bombs.gif] : [])],
    seed,
    bareBodies: bodies,
    previous: previousSource,
    anomalies,
  }
  const table = markdownTable(rows)
  const missed = rows.filter((r) => r.met === false)
  const moved = rows.filter(movedBeyondLimit)
  const notes = [...new Set(rows.flatMap((r) => (r.last?.note ? [r.last.note] : [])))]
  const report = [
    `# alttext benchmark — ${meta.date}${QUICK ? ' (QUICK MODE: short runs, figures are noise)' : ''}`,
    '',
    `${meta.machine.cpus} × ${meta.machine.cpuModel}, Bun ${meta.bun}, ${meta.wrk}; ${meta.mode} run, ${ROUNDS} round(s) per figure (median, min–max); ` +
      `scenarios ${meta.scenarios.join(', ')}; took ${runSeconds.toFixed(0)} s (${Object.entries(timings)
        .map(([name, s]) => `${name} ${s} s`)
        .join(', ')}).`,
    '',
    `"last": the previous results (${previousSource}); "Δ last": this run's median against it, flagged ⚠ beyond ±${MOVED_LIMIT * 100} %.`,
    '',
    table,
    '',
    ...(notes.length ? [`¹ The last value was measured differently: ${notes.join('; ')}.`, ''] : []),
    'Ratios are taken per round from measurements of the same round (interleaved), then their median and range are shown; ' +
      'so a ratio can differ from the quotient of the two medians beside it. p99 of one-connection runs rests on few samples per round.',
    '',
    `Anomalies: ${anomalies.length ? anomalies.join('; ') : 'none'}.`,
    '',
    ...guard.flatMap((line) => [`${line}.`, '']),
    `Targets missed: ${missed.length ? missed.map((r) => `${r.scenario} — ${r.figure}`).join('; ') : 'none'}.`,
    '',
    `Moved more than ${MOVED_LIMIT * 100} % since the last results: ${
      moved.length ? moved.map((r) => `${r.scenario} — ${r.figure} (${movedPercent(r)})`).join('; ') : 'none'
    }.`,
    '',
  ].join('\n')

  mkdirSync(RESULTS_DIR, { recursive: true })
  const tag = [QUICK ? 'quick' : '', all ? '' : 'partial'].filter(Boolean).join('-')
  const stamp = `${meta.date.replace(/[:.]/g, '-')}${tag ? `-${tag}` : ''}`
  const json = JSON.stringify(
    {
      meta,
      rows,
      raw: {
        baselines: base,
        small,
        large,
        queue,
        memory,
        bombs: bombRounds,
        hostile: hostileResult,
        dbLock,
        console: consoleResult,
        describe: describeResult,
        audit: auditResult,
        metrics: metricsResult?.map(({ exposition: _exposition, ...round }) => round),
        pool: poolResult,
        backup: backupResult,
        prepare: prepareResult,
        replicas: replicasResult,
        review: reviewResult,
        languages: languagesResult,
        ocr: ocrResult,
        siteAudit: siteAuditResult,
      },
    },
    (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value),
    2,
  )
  writeFileSync(join(RESULTS_DIR, `${stamp}.json`), json)
  writeFileSync(join(RESULTS_DIR, `${stamp}.md`), report)
  const latest = tag ? `latest-${tag}` : 'latest'
  writeFileSync(join(RESULTS_DIR, `${latest}.md`), report)
  writeFileSync(join(RESULTS_DIR, `${latest}.json`), json)
  if (updatePrevious) {
    savePrevious(rows, `scripts/bench/results/${stamp}.md (bun run bench, ${ROUNDS} rounds)`)
    log('previous.json now holds this run')
  }
  console.log(`\n${report}`)
  console.log(`Written: scripts/bench/results/${stamp}.{md,json} and ${latest}.{md,json}`)
}

try {
  await main()
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exitCode = 1
} finally {
  await cleanupAll()
}
