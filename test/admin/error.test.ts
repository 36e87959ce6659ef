// `alttext admin` when it cannot do what it was asked: usage errors exit 2 and change nothing, failures
// (no such account, an email taken, no database, a database locked or served with an older schema) exit
// 1 with a message that says why.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MIGRATIONS } from '../../src/store/sqlite/migrations'
import { runCli } from '../support/process'
import { type RegisteredAccount, serviceForFile, type TestService, uniqueEmail } from '../support/service'
import { startSmtpCapture } from '../support/smtp'
import { holdWriteLock } from '../store/lock-holder'
import { type AdminResult, adminJson, adminOf } from './support'

setDefaultTimeout(60_000)

let service: TestService
let account: RegisteredAccount
serviceForFile({ env: { ALTTEXT_RATE_LIMITS: 'off' }, account: true }, (started) => ({ service, account } = started))
const admin = (...args: string[]) => adminOf(service)(...args)

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-admin-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

const expectUsageError = (result: AdminResult, message: string) => {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' })
  expect(result.stderr).toContain(message)
  expect(result.stderr).toContain('alttext admin --help')
}

describe('usage errors: exit 2, nothing changed', () => {
  const cases: [string, () => string[], string][] = [
    ['no command', () => [], 'name a command'],
    ['an unknown group', () => ['users', 'list'], 'unknown command "users"'],
    ['a group without its command', () => ['accounts'], '"accounts" needs a command'],
    ['an unknown command', () => ['accounts', 'rename', account.email], 'unknown command "accounts rename"'],
    ['a missing email', () => ['accounts', 'show'], 'usage: alttext admin accounts show EMAIL'],
    ['one argument too many', () => ['accounts', 'disable', account.email, 'now'], 'usage: alttext admin accounts disable EMAIL'],
    ['an email that is not one', () => ['accounts', 'show', 'not-an-email'], '"not-an-email" is not an email address'],
    ['an unknown option', () => ['accounts', 'list', '--colour'], "unknown option '--colour'"],
    ['an option of another command', () => ['accounts', 'list', '--yes'], '`accounts list` takes no --yes'],
    ['plans set without --credits', () => ['plans', 'set', account.email], 'plans set needs --credits N'],
    ['plans set with credits that are no number', () => ['plans', 'set', account.email, '--credits', 'lots'], '--credits must be a whole number'],
    ['plans set with too many credits', () => ['plans', 'set', account.email, '--credits', '2000000000'], '--credits must be between 0 and 1000000000'],
    ['plans set named free', () => ['plans', 'set', account.email, '--credits', '9', '--name', 'free'], 'use `plans reset`'],
    ['plans set with an odd name', () => ['plans', 'set', account.email, '--credits', '9', '--name', 'Team Gold!'], '--name must be 1 to 32 of a-z'],
    ['credits grant of 0', () => ['credits', 'grant', account.email, '0'], 'N must be between 1 and'],
    ['credits grant of a fraction', () => ['credits', 'grant', account.email, '2.5'], 'N must be a whole number'],
    ['delete without --yes', () => ['accounts', 'delete', account.email], 'add --yes to confirm'],
  ]
  for (const [what, args, message] of cases) {
    test(what, async () => {
      expectUsageError(await admin(...args()), message)
    })
  }

  test('after all of them the account is as it was', async () => {
    const shown = await adminJson(admin, 'accounts', 'show', account.email)
    expect(shown.account).toMatchObject({ status: 'active', plan: 'free', credits: { total: 50, used: 0, granted: 0 } })
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
  })

  test('a bad configuration names the variable', async () => {
    expectUsageError(await adminOf(service, { ALTTEXT_FREE_CREDITS: 'many' })('accounts', 'list'), 'ALTTEXT_FREE_CREDITS')
  })
})

describe('failures: exit 1 with the reason', () => {
  const missing = () => uniqueEmail('nobody')
  for (const args of [
    ['accounts', 'show'],
    ['accounts', 'disable'],
    ['accounts', 'enable'],
    ['plans', 'reset'],
    ['credits', 'grant', '@', '5'],
    ['accounts', 'delete', '@', '--yes'],
  ]) {
    test(`${args.filter((a) => a !== '@').join(' ')} of an email without an account`, async () => {
      const email = missing()
      const filled = args.includes('@') ? args.map((a) => (a === '@' ? email : a)) : [...args, email]
      const result = await admin(...filled)
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(`alttext admin: no account has the email ${email}\n`)
      expect(result.stdout).toBe('')
    })
  }

  test('accounts create of an email that has an account', async () => {
    const result = await admin('accounts', 'create', account.email.toUpperCase())
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`an account with the email ${account.email} already exists`)
    expect(result.stdout).not.toMatch(/alt_[0-9a-f]{64}/)
  })

  test('a welcome mail the relay refuses: the account is made, its key printed, and the exit code says the mail failed', async () => {
    const smtp = await startSmtpCapture()
    try {
      smtp.failNext(1, 550)
      const email = uniqueEmail('unmailed')
      const result = await adminOf(service, { ALTTEXT_SMTP_URL: smtp.url })('accounts', 'create', email)
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(`the account was made, but the mail to ${email} failed`)
      const key = result.stdout.match(/alt_[0-9a-f]{64}/)?.[0]
      expect((await service.api.get('/api/usage', key)).status).toBe(200)
    } finally {
      await smtp.stop()
    }
  })

  test('a database file that does not exist is not created', async () => {
    const path = join(tmp, 'typo.db')
    const result = await runCli(['admin', 'accounts', 'list', '--db', path])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`no database at ${path} (--db)`)
    expect(await Bun.file(path).exists()).toBe(false)
  })

  test('run from another directory without ALTTEXT_DB: the message names the file looked for, ALTTEXT_DB and --db', async () => {
    const elsewhere = mkdtempSync(join(tmp, 'elsewhere-'))
    const result = await runCli(['admin', 'accounts', 'list'], {}, { cwd: elsewhere })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`no database at ${join(elsewhere, 'data', 'alttext.db')}`)
    expect(result.stderr).toContain('ALTTEXT_DB is not set, and its default ./data/alttext.db is relative to the current directory')
    expect(result.stderr).toContain("set ALTTEXT_DB to the service's database file, or pass --db FILE")
    expect(await Bun.file(join(elsewhere, 'data', 'alttext.db')).exists()).toBe(false)
  })

  test('ALTTEXT_DB naming no file: the message says to correct it or pass --db', async () => {
    const path = join(tmp, 'moved.db')
    const result = await runCli(['admin', 'accounts', 'list'], { ALTTEXT_DB: path })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`no database at ${path} (ALTTEXT_DB): set ALTTEXT_DB to the service's database file, or pass --db FILE`)
  })

  test('a database locked by another writer: the write gives up after its bounded wait, naming the lock', async () => {
    const holder = await holdWriteLock(service.dbPath)
    try {
      const result = await admin('credits', 'grant', account.email, '5')
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('the database is locked by another process')
    } finally {
      await holder.release()
    }
    expect((await adminJson(admin, 'accounts', 'show', account.email)).account.credits.granted).toBe(0)
  })

  test('a database served with an older schema is not migrated underneath its server', async () => {
    const path = join(tmp, 'old.db')
    const old = new Database(path, { create: true })
    old.exec('PRAGMA journal_mode = WAL')
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
    for (const m of MIGRATIONS.filter((m) => m.version < 11)) {
      old.exec(m.sql)
      old.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now())
    }
    old.close()
    // What a serving process holds while it runs.
    const lock = new Database(`${path}.lock`, { create: true })
    lock.exec('BEGIN EXCLUSIVE')
    try {
      const result = await runCli(['admin', 'accounts', 'list', '--db', path])
      expect(result.code).toBe(1)
      const missing = MIGRATIONS.filter((m) => m.version >= 11)
        .map((m) => m.version)
        .join(', ')
      expect(result.stderr).toContain(`runs an older schema (migrations ${missing} not applied)`)
      const check = new Database(path, { readonly: true })
      expect(check.query<{ n: number }, []>('SELECT count(*) AS n FROM schema_migrations WHERE version = 11').get()!.n).toBe(0)
      check.close()
    } finally {
      lock.exec('ROLLBACK')
      lock.close()
    }
    // With no server, the admin command migrates it as a start would.
    const alone = await runCli(['admin', 'accounts', 'list', '--db', path])
    expect(alone.code).toBe(0)
    expect(alone.stdout).toBe('no accounts yet\n')
  })
})
