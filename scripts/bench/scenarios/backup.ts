// Scenario 17: `alttext backup` of a 1 GiB database while the service serves it. The small database is
// copied and grown to 1 GiB of cached alt texts (bulk inserts in a few transactions, the service stopped),
// then a fresh service starts on it. Per round: a fresh account; GET /health every 10 ms for 3 s with
// nothing else running (the baseline); then stream.ts sends GET /health every 10 ms and POST /api/keys
// every second (open loop) while the compiled binary's `alttext backup` copies, syncs and checks the
// database in another process. /health must stay fast (p99 ≤ 50 ms) during the backup, and the writes
// must keep being answered 201 (VACUUM INTO reads; in WAL mode a reader blocks no writer). The backup's
// own time and size are reported. Every file is in the bench's temporary folder and removed with it.
import { Database } from 'bun:sqlite'
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { StreamResult, StreamSample } from '../stream'
import { type Account, anomalies, BENCH_DIR, BUN, type Fixtures, log, MiB, ROUNDS, register, serviceEnv } from '../lib/common'
import { runForResult, spawnChild, startService } from '../lib/procs'
import { type HealthRound, healthUnderLoadRows } from '../lib/health-rows'
import type { Row } from '../lib/report'
import { figure, median, percentile, roundsPercentile } from '../lib/stats'

export const BACKUP = { databaseBytes: 1024 * MiB, idleMs: 3000, healthIntervalMs: 10, keysIntervalMs: 1000, limitMs: 50 }
const SCENARIO = '17 backup'

/** `health`: the /health requests sent while the backup process ran. */
export type BackupRound = HealthRound & {
  /** The `alttext backup` process, from spawn to exit. */
  backupMs: number
  backupExit: number
  backupBytes: number
}

export type BackupResult = { databaseBytes: number; seedMs: number; rounds: BackupRound[] }

const TEXT = [
  'Sailing boats moored in a small harbour at sunset, with a lighthouse on the pier and gulls over the water.',
  'A bar chart of monthly sales, rising from 20 to 45 units between January and June, with a dip in April.',
  'Two children flying a red kite on a windy beach under a cloudy sky, dunes and tall grass behind them.',
  'Close-up of a bowl of ramen with a soft-boiled egg, spring onions, nori and slices of pork in a dark broth.',
].join(' ')

/**
 * Grows a migrated database (service stopped) with cached alt texts of about 1 KB each until the file
 * reaches `bytes`: in key order, 20 000 rows per transaction, without a journal or fsync (a crash here
 * only spoils a bench file), then back to WAL mode as the service keeps it, and synced once.
 */
function growDatabase(path: string, bytes: number): { rows: number; ms: number } {
  const started = performance.now()
  const db = new Database(path, { strict: true })
  let rows = 0
  try {
    db.exec('PRAGMA journal_mode = OFF')
    db.exec('PRAGMA synchronous = OFF')
    const insert = db.query<null, [string, string, string, number, number]>(
      `INSERT INTO alt_text_cache (cache_key, alt_text, wcag_compliant, wcag_issues, language, model, width, height, format, created_at, expires_at)
       VALUES (?, ?, 1, '[]', ?, 'llava', 1024, 683, 'jpeg', ?, ?)`,
    )
    const pageSize = db.query<{ page_size: number }, []>('PRAGMA page_size').get()!.page_size
    const fileBytes = () => db.query<{ page_count: number }, []>('PRAGMA page_count').get()!.page_count * pageSize
    const now = Date.now()
    const chunk = db.transaction((from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        const offset = (i * 37) % 400
        insert.run(
          `bench${i.toString(16).padStart(59, '0')}`,
          `${TEXT.slice(offset)} ${TEXT.slice(0, offset)} #${i}`,
          i % 7 === 0 ? 'de' : 'en',
          now,
          now + 30 * 86_400_000,
        )
      }
    })
    while (fileBytes() < bytes) {
      chunk(rows, 20_000)
      rows += 20_000
    }
    db.exec('PRAGMA journal_mode = WAL')
  } finally {
    db.close()
  }
  // On disk before the service starts: else the kernel writes the gigabyte back ~30 s later, in the middle
  // of a measurement, and the service's commits wait for it.
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return { rows, ms: performance.now() - started }
}

const statusOf = (s: StreamSample) => (s.code ? `${s.status} ${s.code}` : String(s.status))

export async function measureBackup(fx: Fixtures, smallDb: string): Promise<BackupResult> {
  const dir = join(fx.dir, 'backup')
  mkdirSync(dir, { recursive: true })
  const dbPath = join(dir, 'alttext.db')
  copyFileSync(smallDb, dbPath)
  if (existsSync(`${smallDb}-wal`)) copyFileSync(`${smallDb}-wal`, `${dbPath}-wal`)
  log(`scenario 17 (backup while serving): growing a copy of the small database to ${BACKUP.databaseBytes / MiB} MiB`)
  const grown = growDatabase(dbPath, BACKUP.databaseBytes)
  const databaseBytes = statSync(dbPath).size
  log(`grown to ${(databaseBytes / MiB).toFixed(0)} MiB (${grown.rows} cache rows) in ${(grown.ms / 1000).toFixed(1)} s; ${ROUNDS} rounds`)

  // Start-up runs quick_check over the whole file: give it time.
  const service = await startService(fx.binary, serviceEnv(fx, dbPath, fx.ollamaFast), join(fx.logDir, 'backup.log'), { timeoutMs: 120_000 })
  const stream = (options: Record<string, unknown>) =>
    runForResult<StreamResult>('stream', [BUN, join(BENCH_DIR, 'stream.ts')], {
      BENCH_STREAM: JSON.stringify({ url: service.url, healthIntervalMs: BACKUP.healthIntervalMs, ...options }),
    })
  const runBackup = async (target: string, round: number) => {
    const started = performance.now()
    const startedEpoch = Date.now()
    const proc = spawnChild('alttext backup', [fx.binary, 'backup', '--db', dbPath, target], {}, join(fx.logDir, `backup-${round}.log`))
    const exit = await proc.exited
    return { exit, ms: performance.now() - started, startedEpoch, endedEpoch: Date.now() }
  }

  const rounds: BackupRound[] = []
  try {
    // The first backup reads the file into the page cache, as any earlier backup of a running machine would have.
    const warm = await runBackup(join(dir, 'warm-up.db'), -1)
    if (warm.exit !== 0) throw new Error(`the warm-up backup exited with ${warm.exit}; see ${join(fx.logDir, 'backup--1.log.err')}`)
    log(`backup warm-up: ${(warm.ms / 1000).toFixed(1)} s`)
    for (let round = 0; round < ROUNDS; round++) {
      const account: Account = await register(service.url, `backup-r${round}@example.com`)
      const idle = await stream({ durationMs: BACKUP.idleMs })
      const target = join(dir, `backup-${round}.db`)
      // The stream covers the backup with room to spare; only the requests sent while it ran are counted.
      const during = stream({ durationMs: Math.round(warm.ms * 2 + 3000), keys: { key: account.apiKey, intervalMs: BACKUP.keysIntervalMs } })
      await Bun.sleep(1000)
      const backup = await runBackup(target, round)
      const result = await during
      const backupBytes = existsSync(target) ? statSync(target).size : 0
      const inWindow = (s: StreamSample) => {
        const at = result.startEpochMs + s.atMs
        return at >= backup.startedEpoch && at <= backup.endedEpoch
      }
      if (result.startEpochMs + result.ranMs < backup.endedEpoch) anomalies.push(`backup round ${round + 1}: the backup outlasted the request stream`)
      if (backup.exit !== 0) anomalies.push(`backup round ${round + 1}: alttext backup exited with ${backup.exit}`)
      const r: BackupRound = {
        idle: idle.health,
        health: result.health.filter(inWindow),
        keys: result.keys.filter(inWindow),
        backupMs: backup.ms,
        backupExit: backup.exit,
        backupBytes,
      }
      rounds.push(r)
      const ms = r.health.map((s) => s.ms)
      const keyCounts: Record<string, number> = {}
      for (const s of r.keys) keyCounts[statusOf(s)] = (keyCounts[statusOf(s)] ?? 0) + 1
      log(
        `backup round ${round + 1}: ${(backup.ms / 1000).toFixed(1)} s, ${(backupBytes / MiB).toFixed(0)} MiB written; /health p50 ${median(ms).toFixed(2)} ms, ` +
          `p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(0)} ms (${ms.length} requests; idle p99 ${percentile(
            r.idle.map((s) => s.ms),
            99,
          ).toFixed(2)} ms); POST /api/keys ${JSON.stringify(keyCounts)}`,
      )
      if (!service.alive()) throw new Error('the service exited during the backup')
    }
  } finally {
    await service.stop()
    // Deleted only now: freeing a gigabyte makes the file system busy for a while (discards), which
    // would fall into the next round's measurement.
    rmSync(dir, { recursive: true, force: true })
  }
  return { databaseBytes, seedMs: grown.ms, rounds }
}

export function backupRows(result: BackupResult): Row[] {
  const { rounds } = result
  const rows: Row[] = [
    {
      scenario: SCENARIO,
      figure: 'database size (cached alt texts added to the small database)',
      unit: 'MiB',
      value: figure([result.databaseBytes / MiB]),
      met: null,
    },
    {
      scenario: SCENARIO,
      figure: '`alttext backup` of it while serving (copy, fsync, integrity_check)',
      unit: 'ms',
      value: figure(rounds.map((r) => r.backupMs)),
      met: null,
    },
    { scenario: SCENARIO, figure: 'backup file written', unit: 'MiB', value: figure(rounds.map((r) => r.backupBytes / MiB)), met: null },
    ...healthUnderLoadRows(SCENARIO, rounds, {
      during: 'during the backup',
      p99Figure: 'GET /health p99 during a backup of the 1 GiB database',
      limitMs: BACKUP.limitMs,
      roundOk: (r) => r.backupExit === 0 && r.health.length > 0,
    }),
    {
      scenario: SCENARIO,
      figure: 'POST /api/keys sent during the backup (one a second): answered other than 201',
      unit: 'count',
      value: figure(rounds.map((r) => r.keys.filter((s) => s.status !== 201).length)),
      target: '0',
      met: rounds.every((r) => r.keys.every((s) => s.status === 201)),
    },
    {
      scenario: SCENARIO,
      figure: 'POST /api/keys during the backup: slowest answer',
      unit: 'ms',
      value: roundsPercentile(rounds, (r) => r.keys, 100),
      met: null,
    },
  ]
  return rows
}
