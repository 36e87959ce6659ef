// `alttext db copy` keeps secrets where they belong: a SQLite file it creates holds emails and the hashes
// of passwords, keys and tokens, so only its owner may read it (as a backup); no output ever shows a
// URL's password, percent-encoded or not; and a link to FROM is recognised as the same database.
import { describe, expect, test } from 'bun:test'
import { existsSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '../support/postgres'
import { makeDatabase, scratchDirs } from './backup-support'
import { dbCommand } from './db-copy-support'

const scratch = scratchDirs()

describe('db copy and secrets', () => {
  test('a SQLite file the copy creates is readable by its owner only, and so is its WAL', async () => {
    const dir = scratch('dbcopy-mode')
    await makeDatabase(join(dir, 'a.db'), 2)
    const run = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'copy.db')])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(statSync(join(dir, 'copy.db')).mode & 0o777).toBe(0o600)
    if (existsSync(join(dir, 'copy.db-wal'))) expect(statSync(join(dir, 'copy.db-wal')).mode & 0o777).toBe(0o600)
  })

  test('a URL password is never shown, also percent-encoded', async () => {
    const dir = scratch('dbcopy-secret')
    await makeDatabase(join(dir, 'a.db'), 1)
    const raw = 'p@ss/w:rd%secret-91'
    const url = `postgres://alttext:${encodeURIComponent(raw)}@127.0.0.1:${freePort()}/alttext`
    for (const args of [
      ['copy', join(dir, 'a.db'), url],
      ['copy', url, join(dir, 'b.db')],
      ['copy', url, url],
      ['copy', join(dir, 'a.db'), `${url}?sslmode=sometimes`],
    ]) {
      const run = await dbCommand(args)
      expect(run.code).toBeGreaterThan(0)
      for (const secret of [raw, encodeURIComponent(raw), 'secret-91']) {
        expect(run.stdout).not.toContain(secret)
        expect(run.stderr).not.toContain(secret)
      }
    }
  })

  test('a link to FROM is the same database', async () => {
    const dir = scratch('dbcopy-link')
    await makeDatabase(join(dir, 'a.db'), 1)
    symlinkSync(join(dir, 'a.db'), join(dir, 'link.db'))
    const run = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'link.db')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('FROM and TO are the same database')
  })
})
