// Another process holds the database's write lock (a backup, the sqlite3 shell): reads keep answering,
// the event loop never waits on the lock, a write retries on timers and fails with 503 database_busy
// after its bounded wait, and works again once the lock is gone.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createActivityRecorder } from '../../src/modules/auth/activity'
import { createLogger } from '../../src/shared/logger'
import { MIGRATIONS } from '../../src/store/sqlite/migrations'
import { createSqliteStore } from '../../src/store/sqlite/store'
import type { ActivityBatch, Store } from '../../src/store/contract'
import { startTestService, waitUntil } from '../support/service'
import { holdWriteLock, type LockHolder } from './lock-holder'
import { createManualScheduler } from '../support/scheduler'

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-busy-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

const freshDir = (tag: string) => mkdtempSync(join(tmp, `${tag}-`))

describe('while another process holds the write lock', () => {
  test('health and usage answer, and a waiting key creation does not hold them up; it succeeds once the lock is released', async () => {
    const dir = freshDir('waits')
    const dbPath = join(dir, 'alttext.db')
    // A long wait: the creation below is still waiting when the reads answer, whatever the machine's speed.
    const real = createSqliteStore(dbPath, { busyWaitMs: 60_000 })
    let createEntered = false
    const store: Store = {
      ...real,
      keys: {
        ...real.keys,
        create: (...args) => {
          createEntered = true
          return real.keys.create(...args)
        },
      },
    }
    const service = await startTestService({ dir, overrides: { store } })
    let holder: LockHolder | undefined
    try {
      const account = await service.api.register()
      expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)

      holder = await holdWriteLock(dbPath)
      let settled = false
      const creating = service.api.post('/api/keys', { label: 'made while locked' }, account.apiKey).finally(() => {
        settled = true
      })
      await waitUntil(() => createEntered, 'the key creation to reach the store')

      // The lock is still held (the holder has not been told to release): these answer meanwhile.
      const health = await service.api.get('/health')
      expect(health.status).toBe(200)
      const usage = await service.api.get('/api/usage', account.apiKey)
      expect(usage.status).toBe(200)
      expect(usage.body.api_calls_today).toBeGreaterThanOrEqual(2)
      // A synchronous wait on the lock would have answered (or failed) the creation before these.
      expect(settled).toBe(false)

      await holder.release()
      const created = await creating
      expect(created.status).toBe(201)
      expect((await service.api.get('/api/usage', created.body.api_key)).status).toBe(200)
    } finally {
      await holder?.stop()
      await service.stop()
    }
  })

  test('a write still locked after its wait is 503 database_busy with Retry-After; nothing changed; after release it works', async () => {
    const dir = freshDir('gives-up')
    const dbPath = join(dir, 'alttext.db')
    const service = await startTestService({ dir, env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { store: createSqliteStore(dbPath, { busyWaitMs: 300 }) } })
    let holder: LockHolder | undefined
    try {
      const account = await service.api.register()
      holder = await holdWriteLock(dbPath)

      const refused = await service.api.post('/api/keys', { label: 'refused while locked' }, account.apiKey)
      expect(refused.status).toBe(503)
      expect(refused.body).toEqual({ error: { code: 'database_busy', message: expect.any(String), docs: 'http://alttext.test/docs/errors#database_busy' } })
      expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
      // Registration writes too: the same answer, not a 500.
      const register = await service.api.post('/api/register', { email: `busy-${Date.now()}@example.com`, password: 'correct horse battery' })
      expect(register.status).toBe(503)
      expect(register.body.error.code).toBe('database_busy')

      // Reads answer; the refused key was not made.
      const listed = await service.api.get('/api/keys', account.apiKey)
      expect(listed.status).toBe(200)
      expect(listed.text).not.toContain('refused while locked')
      expect(service.logText()).not.toContain('"status":500')

      await holder.release()
      const created = await service.api.post('/api/keys', { label: 'after release' }, account.apiKey)
      expect(created.status).toBe(201)
      expect((await service.api.post('/api/register', { email: `after-${Date.now()}@example.com`, password: 'correct horse battery' })).status).toBe(201)
      // The calls counted while the database was locked reach it once it is free.
      await waitUntil(() => {
        const db = new Database(dbPath, { readonly: true })
        try {
          return (db.query<{ n: number }, []>('SELECT coalesce(sum(count), 0) AS n FROM api_calls').get()?.n ?? 0) >= 3
        } finally {
          db.close()
        }
      }, 'the activity of the locked period to be written')
    } finally {
      await holder?.stop()
      await service.stop()
    }
  })
})

describe('migrations at start', () => {
  test('wait for a held lock within the bound, then fail naming the file; after release they apply', async () => {
    const dbPath = join(freshDir('migrate'), 'alttext.db')
    // A database of an older version: every migration but the last.
    const old = new Database(dbPath, { create: true })
    old.exec('PRAGMA journal_mode = WAL')
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
    for (const m of MIGRATIONS.slice(0, -1)) {
      old.exec(m.sql)
      old.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now())
    }
    old.close()

    const holder = await holdWriteLock(dbPath)
    try {
      let error: unknown
      try {
        createSqliteStore(dbPath, { busyWaitMs: 200 }).close()
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(Error)
      expect((error as Error).message).toContain(dbPath)
      expect((error as Error).message).toMatch(/locked by another process/)
      await holder.release()
      const store = createSqliteStore(dbPath, { busyWaitMs: 200 })
      try {
        const versions = store.db.query<{ version: number }, []>('SELECT version FROM schema_migrations ORDER BY version').all()
        expect(versions.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version))
      } finally {
        store.close()
      }
    } finally {
      await holder.stop()
    }
  })
})

describe('the activity recorder against a failing database', () => {
  test('retries quietly (one warning for many failed flushes), loses no count, and says when it writes again', async () => {
    const lines: string[] = []
    const logger = createLogger((line) => lines.push(line))
    let failing = true
    let attempts = 0
    const written: ActivityBatch[] = []
    const recorder = createActivityRecorder(
      {
        apply: async (batch) => {
          attempts++
          if (failing) throw new Error('the database is locked by another process')
          written.push(batch)
        },
        callsOn: async () => 0,
      },
      logger,
      { scheduler: createManualScheduler() },
    )
    try {
      for (let i = 0; i < 5; i++) {
        recorder.record(7, 70, 1_000 + i)
        await recorder.flush()
        // The failed batch is still counted while it waits for the next try.
        expect(await recorder.callsToday(7, 1_000)).toBe(i + 1)
      }
      expect(attempts).toBe(5)
      const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn')
      expect(warnings).toHaveLength(1)
      expect(warnings[0].msg).toMatch(/activity flush failed/)

      failing = false
      await recorder.flush()
      expect(written).toHaveLength(1)
      expect(written[0]!.calls.get(7)?.get('1970-01-01')).toBe(5)
      expect(written[0]!.lastUsed.get(70)).toBe(1_004)
      expect(lines.map((l) => JSON.parse(l).msg)).toContain('activity flush succeeded again')
    } finally {
      await recorder.stop()
    }
  })
})
