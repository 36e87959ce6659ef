// The SQLite store: versioned migrations, restart on the same file, WAL and foreign keys, and refusing a
// database newer than the binary.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MIGRATIONS } from '../../src/store/sqlite/migrations'
import { migrate } from '../../src/store/sqlite/migrations'
import { createSqliteStore, openDatabase } from '../../src/store/sqlite/store'
import { spawnService } from '../support/process'
import { startTestService, uniqueEmail, VALID_PASSWORD } from '../support/service'

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-store-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

const freshDir = (tag: string) => mkdtempSync(join(tmp, `${tag}-`))

type MigrationRow = { version: number; name: string; applied_at: number }
function readMigrations(dbPath: string): MigrationRow[] {
  const db = new Database(dbPath)
  try {
    return db.query<MigrationRow, []>('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all()
  } finally {
    db.close()
  }
}

const LATEST = Math.max(...MIGRATIONS.map((m) => m.version))

describe('migrations are versioned', () => {
  test('after start-up schema_migrations records version 1', async () => {
    const dir = freshDir('first-start')
    const service = await startTestService({ dir })
    try {
      const rows = readMigrations(service.dbPath)
      expect(rows.map((r) => r.version)).toContain(1)
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version))
      for (const row of rows) {
        expect(row.name.length).toBeGreaterThan(0)
        expect(row.applied_at).toBeGreaterThan(0)
      }
    } finally {
      await service.stop()
    }
  })

  test('starting twice on the same file applies nothing new and keeps the data', async () => {
    const dir = freshDir('restart')
    const first = await startTestService({ dir })
    let account: { email: string; password: string; apiKey: string; prefix: string }
    let extraKey: string
    try {
      account = await first.api.register(uniqueEmail('restart'), VALID_PASSWORD)
      const created = await first.api.post('/api/keys', { label: 'survives restart' }, account.apiKey)
      expect(created.status).toBe(201)
      extraKey = created.body.api_key
    } finally {
      await first.stop()
    }
    const before = readMigrations(join(dir, 'alttext.db'))

    const second = await startTestService({ dir })
    try {
      expect(readMigrations(second.dbPath)).toEqual(before)
      const login = await second.api.post('/api/login', { email: account.email, password: account.password })
      expect(login.status).toBe(200)
      expect(login.body.keys.map((k: { label: string | null }) => k.label).sort()).toEqual([null, 'survives restart'].sort())
      expect((await second.api.get('/api/usage', account.apiKey)).status).toBe(200)
      expect((await second.api.get('/api/usage', extraKey)).status).toBe(200)
      // The email is still taken.
      expect((await second.api.post('/api/register', { email: account.email, password: VALID_PASSWORD })).status).toBe(409)
    } finally {
      await second.stop()
    }
    rmSync(dir, { recursive: true, force: true })
  })

  test('migrate() applies every migration once on a fresh database, then nothing', () => {
    const db = new Database(':memory:')
    try {
      expect(migrate(db)).toEqual(MIGRATIONS.map((m) => m.version))
      expect(migrate(db)).toEqual([])
      const versions = db.query<{ version: number }, []>('SELECT version FROM schema_migrations ORDER BY version').all()
      expect(versions.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version))
    } finally {
      db.close()
    }
  })

  test('migration versions are unique and ascending from 1', () => {
    const versions = MIGRATIONS.map((m) => m.version)
    expect(versions[0]).toBe(1)
    expect(new Set(versions).size).toBe(versions.length)
    expect([...versions].sort((a, b) => a - b)).toEqual(versions)
  })
})

describe('the service connection', () => {
  test('journal_mode is WAL, foreign keys are on, synchronous is FULL', () => {
    const store = createSqliteStore(join(freshDir('pragmas'), 'alttext.db'))
    try {
      expect(store.db.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()!.journal_mode.toLowerCase()).toBe('wal')
      expect(store.db.query<{ foreign_keys: number }, []>('PRAGMA foreign_keys').get()!.foreign_keys).toBe(1)
      // FULL (2): a committed transaction survives power loss, not only a process crash.
      expect(store.db.query<{ synchronous: number }, []>('PRAGMA synchronous').get()!.synchronous).toBe(2)
    } finally {
      store.close()
    }
  })

  test('a cache write (which skips the fsync) leaves the connection at synchronous FULL, and the row is there', async () => {
    const store = createSqliteStore(join(freshDir('cache-sync'), 'alttext.db'))
    try {
      const entry = {
        altText: 'A red kite.',
        wcagCompliant: true,
        wcagIssues: [],
        language: 'en',
        model: 'llava',
        width: 10,
        height: 10,
        format: 'png' as const,
      }
      await store.cache.put('key-1', entry, 1_000, 2_000)
      expect(store.db.query<{ synchronous: number }, []>('PRAGMA synchronous').get()!.synchronous).toBe(2)
      expect((await store.cache.get('key-1', 1_500))?.altText).toBe('A red kite.')
      // A failing write (the key's NOT NULL text is missing) restores FULL too.
      await expect(store.cache.put('key-2', { ...entry, altText: null as unknown as string }, 1_000, 2_000)).rejects.toThrow()
      expect(store.db.query<{ synchronous: number }, []>('PRAGMA synchronous').get()!.synchronous).toBe(2)
    } finally {
      store.close()
    }
  })

  test('foreign keys are enforced: a key for a missing account is refused', () => {
    const store = createSqliteStore(join(freshDir('fk'), 'alttext.db'))
    try {
      expect(() =>
        store.db
          .query('INSERT INTO api_keys (account_id, prefix, key_hash, created_at) VALUES (?, ?, ?, ?)')
          .run(424242, 'alt_deadbeef', 'f'.repeat(64), Date.now()),
      ).toThrow(/FOREIGN KEY/i)
    } finally {
      store.close()
    }
  })

  test('openDatabase on a file path gives a WAL database with foreign keys on', () => {
    const db = openDatabase(join(freshDir('open'), 'nested', 'alttext.db'))
    try {
      expect(db.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()!.journal_mode.toLowerCase()).toBe('wal')
      expect(db.query<{ foreign_keys: number }, []>('PRAGMA foreign_keys').get()!.foreign_keys).toBe(1)
    } finally {
      db.close()
    }
  })

  test('the running service leaves its file in WAL mode', async () => {
    const service = await startTestService({ dir: freshDir('svc-wal') })
    try {
      await service.api.register(uniqueEmail('wal'), VALID_PASSWORD)
      const db = new Database(service.dbPath)
      try {
        expect(db.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()!.journal_mode.toLowerCase()).toBe('wal')
        // The committed account is visible to another connection at once.
        expect(db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts').get()!.n).toBe(1)
      } finally {
        db.close()
      }
    } finally {
      await service.stop()
    }
  })
})

describe('a database newer than the binary', () => {
  function makeNewerDatabase(tag: string): string {
    const dbPath = join(freshDir(tag), 'alttext.db')
    const db = openDatabase(dbPath)
    db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(LATEST + 1, 'from a newer alttext', Date.now())
    db.close()
    return dbPath
  }

  test('in-process start-up fails with a clear message and leaves the database untouched', async () => {
    const dbPath = makeNewerDatabase('newer-inproc')
    const dir = join(dbPath, '..')
    let error: unknown
    try {
      const service = await startTestService({ dir })
      await service.stop()
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/schema/i)
    expect((error as Error).message).toMatch(/newer/i)
    expect((error as Error).message).toContain(String(LATEST + 1))
    expect(readMigrations(dbPath).map((r) => r.version)).toContain(LATEST + 1)
  })

  test('the process exits non-zero without listening and says why', async () => {
    const dbPath = makeNewerDatabase('newer-process')
    let error: unknown
    try {
      const svc = await spawnService({ ALTTEXT_DB: dbPath }, undefined, undefined, 15_000)
      svc.proc.kill('SIGKILL')
      await svc.exited
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(Error)
    const message = (error as Error).message
    expect(message).toContain('exited with')
    expect(message).not.toMatch(/exited with 0\b/)
    expect(message).toMatch(/newer/i)
    expect(readMigrations(dbPath).map((r) => r.version)).toContain(LATEST + 1)
  }, 30_000)
})
