// Backups hold password and key hashes: they are readable by their owner only, whatever the umask; they
// hold no key or password in clear; a file name is never SQL; a link to the live database is not a target.
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, chownSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { SOURCE_COMMAND, spawnService } from '../support/process'
import { apiClient } from '../support/service'
import { alttext, countRows, makeDatabase, scratchDirs } from './backup-support'

// Each test runs the command as one or more subprocesses: room for a loaded machine.
setDefaultTimeout(30_000)

const dir = scratchDirs()

/** `alttext ...args` under umask 000, where a careless program makes files readable and writable by all. */
async function underOpenUmask(args: string[]) {
  const quoted = [...SOURCE_COMMAND, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ')
  const proc = Bun.spawn(['sh', '-c', `umask 000 && exec ${quoted}`], { env: { PATH: process.env.PATH ?? '' }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('backup files', () => {
  test('a backup and a restored database are readable and writable by their owner only, even under umask 000', async () => {
    const base = dir('sec-mode')
    const dbPath = join(base, 'alttext.db')
    await makeDatabase(dbPath, 1)
    const backupPath = join(base, 'backup.db')
    const made = await underOpenUmask(['backup', '--db', dbPath, backupPath])
    expect(made.stderr).toBe('')
    expect(made.code).toBe(0)
    expect(statSync(backupPath).mode & 0o777).toBe(0o600)
    const restoredPath = join(base, 'restored', 'alttext.db')
    const restored = await underOpenUmask(['restore', '--db', restoredPath, backupPath])
    expect(restored.code).toBe(0)
    expect(statSync(restoredPath).mode & 0o777).toBe(0o600)
  })

  test('a backup taken from the running service holds neither the API key nor the password in clear', async () => {
    const base = dir('sec-clear')
    const dbPath = join(base, 'alttext.db')
    const service = await spawnService({ ALTTEXT_DB: dbPath })
    let account: Awaited<ReturnType<ReturnType<typeof apiClient>['register']>>
    const backupPath = join(base, 'backup.db')
    try {
      account = await apiClient(service.url).register(undefined, 'a very particular passphrase')
      expect((await alttext(['backup', '--db', dbPath, backupPath])).code).toBe(0)
    } finally {
      service.proc.kill('SIGTERM')
      await service.exited
    }
    const bytes = readFileSync(backupPath).toString('latin1')
    expect(bytes).toContain(account.email)
    expect(bytes).not.toContain(account.apiKey)
    expect(bytes).not.toContain(account.apiKey.slice(12))
    expect(bytes).not.toContain('a very particular passphrase')
  })
})

describe('a restore run as root', () => {
  const NOBODY = 65534
  test.if(process.getuid?.() === 0)(
    'gives the restored database and the lock file it made the owner of the folder, so the service, run as that user, starts on it',
    async () => {
      const base = dir('sec-owner')
      chmodSync(base, 0o755)
      const source = join(base, 'source.db')
      await makeDatabase(source, 2)
      const backupPath = join(base, 'backup.db')
      expect((await alttext(['backup', '--db', source, backupPath])).code).toBe(0)
      const data = join(base, 'data')
      mkdirSync(data)
      chownSync(data, NOBODY, NOBODY)
      const dbPath = join(data, 'alttext.db')
      const restored = await alttext(['restore', '--db', dbPath, backupPath])
      expect(restored.code).toBe(0)
      for (const file of [dbPath, `${dbPath}.lock`]) expect(statSync(file).uid).toBe(NOBODY)
      const service = await spawnService({ ALTTEXT_DB: dbPath, HOME: data }, [
        'setpriv',
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        ...SOURCE_COMMAND,
      ])
      try {
        const api = apiClient(service.url)
        expect((await api.get('/health')).status).toBe(200)
        expect((await api.register()).apiKey).toStartWith('alt_')
      } finally {
        service.proc.kill('SIGTERM')
        await service.exited
      }
    },
    30_000,
  )
})

describe('file names', () => {
  test('a backup file name with quotes and SQL in it is only a name: the file is written, the database untouched', async () => {
    const base = dir('sec-sql')
    const dbPath = join(base, 'alttext.db')
    await makeDatabase(dbPath, 2)
    const target = join(base, "x'; DROP TABLE accounts; --.db")
    const result = await alttext(['backup', '--db', dbPath, target])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(countRows(target, 'accounts')).toBe(2)
    expect(countRows(dbPath, 'accounts')).toBe(2)
  })

  test('a symbolic link to the database is refused as a backup target, even with --force', async () => {
    const base = dir('sec-link')
    const dbPath = join(base, 'alttext.db')
    await makeDatabase(dbPath, 2)
    const link = join(base, 'innocent-looking.db')
    symlinkSync(dbPath, link)
    const result = await alttext(['backup', '--force', '--db', dbPath, link])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('is a file of the database itself')
    expect(countRows(dbPath, 'accounts')).toBe(2)
  })

  test('the database itself is refused as the backup to restore', async () => {
    const base = dir('sec-self')
    const dbPath = join(base, 'alttext.db')
    await makeDatabase(dbPath, 2)
    const result = await alttext(['restore', '--db', dbPath, dbPath])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${dbPath} is the database itself; give the backup file to restore`)
    expect(countRows(dbPath, 'accounts')).toBe(2)
  })
})
