// One process per database file: a second service on the same file refuses to start and names it; the
// lock goes with the process (even kill -9) and leaves the database itself open to other readers. And a
// database in a directory it cannot write says so, with the path.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { SOURCE_COMMAND, spawnService } from '../support/process'
import { apiClient } from '../support/service'

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-lock-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

const freshDir = (tag: string) => mkdtempSync(join(tmp, `${tag}-`))

async function startFailure(env: Record<string, string>, command = SOURCE_COMMAND): Promise<string> {
  try {
    const svc = await spawnService(env, command)
    svc.proc.kill('SIGKILL')
    await svc.exited
  } catch (error) {
    return (error as Error).message
  }
  throw new Error('the service started')
}

describe('one process per database file', () => {
  test('in process: a second store on the same file throws naming the file and its lock; after close it opens', () => {
    const dbPath = join(freshDir('in-process'), 'alttext.db')
    const first = createSqliteStore(dbPath)
    try {
      expect(() => createSqliteStore(dbPath)).toThrow(`another alttext process is serving ${dbPath} (lock held on ${dbPath}.lock); stop it first`)
    } finally {
      first.close()
    }
    createSqliteStore(dbPath).close()
  })

  test('a second `alttext serve` on the same file exits non-zero naming the file; the first keeps serving; after kill -9 of the first a new one starts', async () => {
    const dbPath = join(freshDir('processes'), 'alttext.db')
    const env = { ALTTEXT_DB: dbPath }
    const first = await spawnService(env)
    try {
      const account = await apiClient(first.url).register()

      const message = await startFailure(env)
      expect(message).toMatch(/exited with [1-9]/)
      expect(message).toContain(`another alttext process is serving ${dbPath}`)

      // The main file stays open to other processes (backups, admin commands): only the lock file is held.
      const read = Bun.spawnSync(['sqlite3', dbPath, 'SELECT count(*) FROM accounts;'])
      expect(read.exitCode).toBe(0)
      expect(read.stdout.toString().trim()).toBe('1')

      expect((await apiClient(first.url).get('/api/usage', account.apiKey)).status).toBe(200)
      first.proc.kill('SIGKILL')
      await first.exited

      const next = await spawnService(env)
      try {
        expect((await apiClient(next.url).get('/api/usage', account.apiKey)).status).toBe(200)
      } finally {
        next.proc.kill('SIGTERM')
        await next.exited
      }
    } finally {
      if (first.proc.exitCode === null && first.proc.signalCode === null) first.proc.kill('SIGKILL')
      await first.exited
    }
  }, 60_000)
})

describe('a database in a directory it cannot write', () => {
  test('start-up fails with the path and the reason, not "unable to open database file"', async () => {
    const base = freshDir('read-only')
    const dir = join(base, 'ro')
    mkdirSync(dir)
    chmodSync(dir, 0o555)
    const dbPath = join(dir, 'alttext.db')
    // root writes anywhere: run the service as nobody then (it must be able to reach the directory).
    const asRoot = process.getuid?.() === 0
    if (asRoot) {
      chmodSync(tmp, 0o755)
      chmodSync(base, 0o755)
    }
    const command = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...SOURCE_COMMAND] : SOURCE_COMMAND
    const message = await startFailure({ ALTTEXT_DB: dbPath, HOME: base }, command)
    expect(message).toMatch(/exited with [1-9]/)
    expect(message).toContain(`cannot create or open the database file ${dbPath}: the directory ${dir} is not writable`)
    expect(message).not.toContain('unable to open database file')
  }, 30_000)
})
