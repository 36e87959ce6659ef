// Scenario 9: /health while another process holds the database's write lock. A fresh service on its
// own copy of the small database; per round a fresh account, then 1 s of GET /health every 10 ms
// (idle), then lock-holder.ts takes the write lock (BEGIN IMMEDIATE) for 10 s while stream.ts keeps
// sending GET /health every 10 ms and POST /api/keys every 500 ms (open loop: a stall shows in every
// request it held up). /health must stay fast (p99 ≤ 50 ms); what POST /api/keys answers is reported
// (503 database_busy is expected). After the lock, one more POST /api/keys shows whether writes recover.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { StreamResult, StreamSample } from '../stream'
import { type Account, anomalies, BENCH_DIR, BUN, type Fixtures, log, QUICK, register, ROUNDS, serviceEnv } from '../lib/common'
import { runForResult, spawnReady, startService, stopChild } from '../lib/procs'
import { type HealthRound, healthUnderLoadRows } from '../lib/health-rows'
import type { Row } from '../lib/report'
import { figure, median, percentile, roundsPercentile } from '../lib/stats'

export const DB_LOCK = { holdMs: QUICK ? 6000 : 10_000, idleMs: 1000, healthIntervalMs: 10, keysIntervalMs: 500, limitMs: 50 }
const SCENARIO = '9 db lock'

export type DbLockRound = HealthRound & {
  /** How long BEGIN IMMEDIATE waited for the lock, and how long it was held in the end. */
  lockWaitMs: number
  heldMs: number
  /** POST /api/keys once the lock is gone. */
  afterStatus: number
  afterMs: number
}

const codeOf = (s: StreamSample) => (s.code ? `${s.status} ${s.code}` : String(s.status))

export async function measureDbLock(fx: Fixtures, smallDb: string): Promise<DbLockRound[]> {
  log(
    `scenario 9 (/health under a database lock): lock held ${DB_LOCK.holdMs / 1000} s per round, ${ROUNDS} rounds, fresh service on a copy of the small database`,
  )
  const dir = join(fx.dir, 'db-lock')
  mkdirSync(dir, { recursive: true })
  const dbPath = join(dir, 'alttext.db')
  copyFileSync(smallDb, dbPath)
  if (existsSync(`${smallDb}-wal`)) copyFileSync(`${smallDb}-wal`, `${dbPath}-wal`)
  const service = await startService(fx.binary, serviceEnv(fx, dbPath, fx.ollamaFast), join(fx.logDir, 'db-lock.log'))
  const stream = (options: Record<string, unknown>) =>
    runForResult<StreamResult>('stream', [BUN, join(BENCH_DIR, 'stream.ts')], {
      BENCH_STREAM: JSON.stringify({ url: service.url, healthIntervalMs: DB_LOCK.healthIntervalMs, ...options }),
    })
  const rounds: DbLockRound[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const account: Account = await register(service.url, `lock-r${round}@example.com`)
      await Bun.sleep(1200) // the key's first use is written by the activity recorder within a second
      const idle = await stream({ durationMs: DB_LOCK.idleMs })
      const holder = await spawnReady('lock holder', [BUN, join(BENCH_DIR, 'lock-holder.ts'), dbPath, String(DB_LOCK.holdMs)], {}, 30_000)
      const lockedAt = performance.now()
      const lockWaitMs = Number(holder.info.waitMs)
      if (lockWaitMs > 1000) anomalies.push(`db lock round ${round + 1}: the lock holder waited ${lockWaitMs.toFixed(0)} ms for the lock`)
      let during: StreamResult
      try {
        // Until 300 ms before the lock ends, so every request is sent while it is held.
        during = await stream({ untilEpochMs: Date.now() + DB_LOCK.holdMs - 300, keys: { key: account.apiKey, intervalMs: DB_LOCK.keysIntervalMs } })
      } finally {
        const timer = setTimeout(() => void stopChild(holder.proc, 1000), DB_LOCK.holdMs + 15_000)
        await holder.proc.exited
        clearTimeout(timer)
      }
      const heldMs = performance.now() - lockedAt
      if (holder.proc.exitCode !== 0)
        anomalies.push(`db lock round ${round + 1}: the lock holder exited with ${holder.proc.exitCode}: ${holder.stderr().slice(-500)}`)
      const afterStarted = performance.now()
      const afterStatus = await fetch(`${service.url}/api/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey },
        body: JSON.stringify({ label: 'bench after a database lock' }),
        signal: AbortSignal.timeout(15_000),
      }).then(
        async (r) => {
          await r.arrayBuffer()
          return r.status
        },
        () => 0,
      )
      const r: DbLockRound = {
        idle: idle.health,
        health: during.health,
        keys: during.keys,
        lockWaitMs,
        heldMs,
        afterStatus,
        afterMs: performance.now() - afterStarted,
      }
      rounds.push(r)
      const ms = r.health.map((s) => s.ms)
      const keyCounts: Record<string, number> = {}
      for (const s of r.keys) keyCounts[codeOf(s)] = (keyCounts[codeOf(s)] ?? 0) + 1
      log(
        `db lock round ${round + 1}: held ${(heldMs / 1000).toFixed(1)} s; /health p50 ${median(ms).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(0)} ms ` +
          `(${ms.length} requests; idle p99 ${percentile(
            r.idle.map((s) => s.ms),
            99,
          ).toFixed(2)} ms); POST /api/keys ${JSON.stringify(keyCounts)}, after the lock ${afterStatus}`,
      )
      if (!service.alive()) throw new Error('the service exited during the database lock')
    }
  } finally {
    await service.stop()
  }
  return rounds
}

export function dbLockRows(rounds: DbLockRound[]): Row[] {
  const rows: Row[] = [
    {
      scenario: SCENARIO,
      figure: 'lock held (BEGIN IMMEDIATE … ROLLBACK in another process)',
      unit: 'ms',
      value: figure(rounds.map((r) => r.heldMs)),
      met: null,
    },
    ...healthUnderLoadRows(SCENARIO, rounds, {
      during: 'during the lock',
      p99Figure: 'GET /health p99 while another process holds the write lock',
      limitMs: DB_LOCK.limitMs,
    }),
  ]
  const keys = [...new Set(rounds.flatMap((r) => r.keys.map(codeOf)))].sort()
  for (const key of keys)
    rows.push({
      scenario: SCENARIO,
      figure: `POST /api/keys sent during the lock: answered ${key}${key.startsWith('0') ? ' (no answer: client timeout or reset)' : ''}`,
      unit: 'count',
      value: figure(rounds.map((r) => r.keys.filter((s) => codeOf(s) === key).length)),
      met: null,
    })
  rows.push(
    {
      scenario: SCENARIO,
      figure: 'POST /api/keys sent during the lock: slowest answer',
      unit: 'ms',
      value: roundsPercentile(rounds, (r) => r.keys, 100),
      met: null,
    },
    {
      scenario: SCENARIO,
      figure: 'POST /api/keys right after the lock: answered 201',
      unit: 'count',
      value: figure(rounds.map((r) => (r.afterStatus === 201 ? 1 : 0))),
      met: null,
    },
  )
  return rows
}
