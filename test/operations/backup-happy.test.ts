// `alttext backup` and `alttext restore` against the real service: a backup taken while
// clients keep registering and creating keys holds every record acknowledged before it began, and the
// service restarted on its restore accepts each of those keys; the replaced database is kept aside.
import { Database } from 'bun:sqlite'
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { MIGRATIONS } from '../../src/store/sqlite/migrations'
import { latestSchemaVersion } from '../../src/store/sqlite/migrations'
import { spawnService } from '../support/process'
import { apiClient, type Api, waitUntil } from '../support/service'
import { alttext, countRows, makeDatabase, scratchDirs } from './backup-support'

// Each test runs commands and a service: room for a loaded machine.
setDefaultTimeout(30_000)

const dir = scratchDirs()

/** An API key the service acknowledged (201), and when the answer arrived, on this process's clock. */
type Ack = { key: string; at: number }

/** Clients registering accounts and creating keys (up to the active-key limit) until `stopped()`. */
async function writeLoad(api: Api, workers: number, stopped: () => boolean, acks: Ack[]): Promise<void> {
  const worker = async (id: number) => {
    for (let round = 0; !stopped(); round++) {
      const account = await api.register(`load-${id}-${round}-${Date.now()}@example.com`)
      acks.push({ key: account.apiKey, at: performance.now() })
      for (let i = 0; i < 20 && !stopped(); i++) {
        const created = await api.post('/api/keys', { label: `load ${i}` }, account.apiKey)
        if (created.status !== 201) throw new Error(`POST /api/keys answered ${created.status}: ${created.text}`)
        acks.push({ key: created.body.api_key, at: performance.now() })
      }
    }
  }
  await Promise.all(Array.from({ length: workers }, (_, id) => worker(id)))
}

describe('a backup taken under a write load', () => {
  test('holds every record acknowledged before it began; restored, the service accepts each of those keys and none made after it', async () => {
    const base = dir('backup-load')
    const dbPath = join(base, 'data', 'alttext.db')
    const backupPath = join(base, 'alttext-backup.db')
    const env = { ALTTEXT_DB: dbPath, ALTTEXT_RATE_LIMITS: 'off' }

    const first = await spawnService(env)
    const acks: Ack[] = []
    let stop = false
    let backupStarted = 0
    let backupEnded = 0
    let backup: Awaited<ReturnType<typeof alttext>>
    try {
      const load = writeLoad(apiClient(first.url), 6, () => stop, acks)
      await waitUntil(() => acks.length >= 30, '30 acknowledged writes', 30_000)
      backupStarted = performance.now()
      backup = await alttext(['backup', backupPath], { ALTTEXT_DB: dbPath })
      backupEnded = performance.now()
      // Some writes after the backup: the restore must not have them.
      const doneBefore = acks.length
      await waitUntil(() => acks.filter((a) => a.at > backupEnded).length >= 5 || acks.length > doneBefore + 50, 'writes after the backup', 30_000)
      stop = true
      await load
    } finally {
      stop = true
      first.proc.kill('SIGTERM')
      expect(await first.exited).toBe(0)
    }

    expect(backup.stderr).toBe('')
    expect(backup.code).toBe(0)
    expect(backup.stdout).toContain(`backup written: ${backupPath}`)
    expect(backup.stdout).toContain('integrity_check ok')
    const before = acks.filter((a) => a.at < backupStarted)
    const after = acks.filter((a) => a.at > backupEnded)
    // The writers were never refused and went on after the backup. Whether one was acknowledged while
    // the backup ran is up to the scheduler on a loaded machine, so writes in that window are not judged.
    expect(before.length).toBeGreaterThan(0)
    expect(after.length).toBeGreaterThan(0)

    const restore = await alttext(['restore', backupPath], { ALTTEXT_DB: dbPath })
    expect(restore.stderr).toBe('')
    expect(restore.code).toBe(0)
    expect(restore.stdout).toContain(`restored: ${dbPath}`)
    const aside = readdirSync(join(base, 'data')).filter((name) => /^alttext\.db\.before-restore-[0-9T:-]+Z$/.test(name))
    expect(aside).toHaveLength(1)
    expect(restore.stdout).toContain(`previous: ${join(base, 'data', aside[0]!)}`)
    // The database replaced holds everything, the writes after the backup too.
    expect(countRows(join(base, 'data', aside[0]!), 'api_keys')).toBe(acks.length)

    const second = await spawnService(env)
    try {
      const api = apiClient(second.url)
      const status = async (key: string) => (await api.post('/api/validate-key', { api_key: key })).status
      for (const ack of before) expect(await status(ack.key)).toBe(200)
      for (const ack of after) expect(await status(ack.key)).toBe(401)
    } finally {
      second.proc.kill('SIGTERM')
      await second.exited
    }
  }, 120_000)
})

describe('alttext backup', () => {
  test('of a stopped database: --json names the file, its size, schema version, tables and row counts; the file is its owner’s alone', async () => {
    const base = dir('backup-json')
    const dbPath = join(base, 'alttext.db')
    await makeDatabase(dbPath, 4)
    const target = join(base, 'copy.db')
    const result = await alttext(['backup', '--json', '--db', dbPath, target])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report).toMatchObject({ file: target, source: dbPath, bytes: statSync(target).size, integrity_check: 'ok' })
    expect(report.schema_version).toBe(countRows(dbPath, 'schema_migrations'))
    expect(report.tables.accounts).toBe(4)
    expect(report.tables.api_keys).toBe(4)
    expect(countRows(target, 'accounts')).toBe(4)
    expect(statSync(target).mode & 0o777).toBe(0o600)
    expect(readdirSync(base).filter((name) => name.includes('partial'))).toEqual([])
  })

  test('ALTTEXT_DB chooses the database when --db is not given; --force replaces an existing backup with a fresh one', async () => {
    const base = dir('backup-force')
    const dbPath = join(base, 'alttext.db')
    await makeDatabase(dbPath, 1)
    const target = join(base, 'latest.db')
    expect((await alttext(['backup', target], { ALTTEXT_DB: dbPath })).code).toBe(0)
    // More data, then a forced backup over the first.
    const db = new Database(dbPath)
    db.exec("INSERT INTO accounts (email, password_hash, plan, created_at) VALUES ('second@example.com', 'x', 'free', 0)")
    db.close()
    const forced = await alttext(['backup', '--force', target], { ALTTEXT_DB: dbPath })
    expect(forced.code).toBe(0)
    expect(forced.stdout).toContain('accounts 2')
    expect(countRows(target, 'accounts')).toBe(2)
  })
})

describe('alttext restore', () => {
  test('onto a machine without a database: puts the backup in place, no previous database; the service starts on it', async () => {
    const base = dir('restore-fresh')
    const source = join(base, 'source.db')
    await makeDatabase(source, 2)
    const backupPath = join(base, 'backup.db')
    expect((await alttext(['backup', '--db', source, backupPath])).code).toBe(0)
    const dbPath = join(base, 'new', 'data', 'alttext.db')
    const result = await alttext(['restore', '--json', '--db', dbPath, backupPath])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report).toMatchObject({ database: dbPath, previous: null, integrity_check: 'ok' })
    expect(report.tables.accounts).toBe(2)
    expect(readdirSync(join(base, 'new', 'data')).sort()).toEqual(['alttext.db', 'alttext.db.lock'])
    const service = await spawnService({ ALTTEXT_DB: dbPath })
    try {
      expect((await apiClient(service.url).get('/health')).status).toBe(200)
      expect(countRows(dbPath, 'accounts')).toBe(2)
    } finally {
      service.proc.kill('SIGTERM')
      await service.exited
    }
  })

  test('a backup of an older schema is compared with that schema, restored, and migrated when the service starts', async () => {
    const base = dir('restore-older')
    const backupPath = join(base, 'old.db')
    const older = latestSchemaVersion() - 1
    const db = new Database(backupPath)
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
    for (const migration of MIGRATIONS.filter((m) => m.version <= older)) {
      db.exec(migration.sql)
      db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, Date.now())
    }
    db.close()
    const dbPath = join(base, 'alttext.db')
    const result = await alttext(['restore', '--db', dbPath, backupPath])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`schema:   version ${older} (this binary's is ${older + 1}: 1 migration run at the next start)`)
    const service = await spawnService({ ALTTEXT_DB: dbPath })
    try {
      expect((await apiClient(service.url).get('/health')).status).toBe(200)
    } finally {
      service.proc.kill('SIGTERM')
      await service.exited
    }
    expect(countRows(dbPath, 'schema_migrations')).toBe(older + 1)
  })

  test('a backup made by sqlite3 .backup (WAL mode in its header) is restored as one self-contained file', async () => {
    const base = dir('restore-sqlite3')
    const source = join(base, 'source.db')
    await makeDatabase(source, 3)
    const backupPath = join(base, 'shell.db')
    const shell = Bun.spawnSync(['sqlite3', source, `.backup ${backupPath}`])
    expect(shell.exitCode).toBe(0)
    const dbPath = join(base, 'alttext.db')
    const result = await alttext(['restore', '--db', dbPath, backupPath])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(readdirSync(base).filter((name) => name.startsWith('alttext.db'))).toEqual(['alttext.db', 'alttext.db.lock'].sort())
    expect(countRows(dbPath, 'accounts')).toBe(3)
  })
})
