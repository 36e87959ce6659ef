// `alttext backup` and `alttext restore` with ALTTEXT_DATABASE_URL set do not pretend: no file is written
// or replaced, the exit code is 1, and the message explains PostgreSQL's own tools (pg_dump, pg_basebackup,
// point-in-time recovery, pg_restore) without the URL's password. `--db FILE` still names a SQLite file.
// No server is needed: the commands never connect.
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { alttext, makeDatabase, scratchDirs } from './backup-support'

const scratch = scratchDirs()
const PASSWORD = 'backup-pg-secret-7f3a'
const URL_WITH_PASSWORD = `postgres://alttext:${PASSWORD}@db1.example.internal:5433/alttext`

describe('alttext backup in PostgreSQL mode', () => {
  test('writes nothing, exits 1, and explains pg_dump, pg_basebackup and point-in-time recovery', async () => {
    const dir = scratch('backup-pg')
    const target = join(dir, 'backup.db')
    const run = await alttext(['backup', target], { ALTTEXT_DATABASE_URL: URL_WITH_PASSWORD, ALTTEXT_DB: join(dir, 'alttext.db') })
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('')
    expect(existsSync(target)).toBe(false)
    for (const words of [
      'the data is in PostgreSQL at db1.example.internal:5433/alttext',
      'No backup was made',
      'pg_dump --format=custom',
      'pg_basebackup',
      'archive_mode = on',
      'point-in-time recovery',
      'alttext db copy "$ALTTEXT_DATABASE_URL"',
    ])
      expect(run.stderr).toContain(words)
    expect(run.stderr).not.toContain(PASSWORD)
  })

  test('--db FILE backs up that SQLite file as before', async () => {
    const dir = scratch('backup-pg-db')
    await makeDatabase(join(dir, 'alttext.db'), 2)
    const run = await alttext(['backup', '--db', join(dir, 'alttext.db'), join(dir, 'backup.db')], { ALTTEXT_DATABASE_URL: URL_WITH_PASSWORD })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(existsSync(join(dir, 'backup.db'))).toBe(true)
  })

  test('a malformed ALTTEXT_DATABASE_URL is a usage error naming the variable, not its value', async () => {
    const run = await alttext(['backup', join(scratch('backup-pg-bad'), 'b.db')], { ALTTEXT_DATABASE_URL: `mysql://alttext:${PASSWORD}@db1/alttext` })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('ALTTEXT_DATABASE_URL: must use postgres or postgresql')
    expect(run.stderr).not.toContain(PASSWORD)
  })

  test('--help says what happens in PostgreSQL mode', async () => {
    const run = await alttext(['backup', '--help'])
    expect(run.stdout).toContain('With ALTTEXT_DATABASE_URL set')
    expect(run.stdout).toContain('ALTTEXT_DATABASE_URL')
  })
})

describe('alttext restore in PostgreSQL mode', () => {
  test('changes nothing, exits 1, and explains pg_restore and point-in-time recovery', async () => {
    const dir = scratch('restore-pg')
    await makeDatabase(join(dir, 'alttext.db'), 1)
    await makeDatabase(join(dir, 'backup.db'), 3)
    const before = readFileSync(join(dir, 'alttext.db'))
    const run = await alttext(['restore', join(dir, 'backup.db')], { ALTTEXT_DATABASE_URL: URL_WITH_PASSWORD, ALTTEXT_DB: join(dir, 'alttext.db') })
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('')
    expect(readFileSync(join(dir, 'alttext.db')).equals(before)).toBe(true)
    for (const words of ['Nothing was changed', 'pg_restore --no-owner', 'recovery_target_time', 'recovery.signal', 'alttext db copy BACKUP.db'])
      expect(run.stderr).toContain(words)
    expect(run.stderr).not.toContain(PASSWORD)
  })
})
