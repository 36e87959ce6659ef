// `alttext backup` and `alttext restore` refusing: bad arguments (exit 2), an existing target, a missing
// database or folder, a restore while the service runs, damaged, foreign or too-new backups (exit 1).
// Whatever is refused leaves the database and the target as they were, and no partial file behind.
import { Database } from 'bun:sqlite'
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnService } from '../support/process'
import { apiClient } from '../support/service'
import { latestSchemaVersion } from '../../src/store/sqlite/migrations'
import { alttext, countRows, damageIndex, makeDatabase, rebuildTable, scratchDirs } from './backup-support'

// Each test runs one or more commands: room for a loaded machine.
setDefaultTimeout(30_000)

const dir = scratchDirs()

/** A folder with a database of `accounts` accounts and a good backup of it. */
async function withBackup(tag: string, accounts = 2) {
  const base = dir(tag)
  const dbPath = join(base, 'alttext.db')
  await makeDatabase(dbPath, accounts)
  const backupPath = join(base, 'backup.db')
  const made = await alttext(['backup', '--db', dbPath, backupPath])
  if (made.code !== 0) throw new Error(made.stderr)
  return { base, dbPath, backupPath }
}

/** The names in `base`, to show nothing was added, renamed or left half-written. */
const listing = (base: string) => readdirSync(base).sort()

describe('bad arguments: exit 2 with a hint to --help', () => {
  for (const [command, args, message] of [
    ['backup', [], 'give the FILE to write the backup to'],
    ['backup', ['a.db', 'b.db'], 'give exactly one FILE'],
    ['backup', ['--frobnicate', 'a.db'], "unknown option '--frobnicate'"],
    ['backup', ['--db'], "Option '--db <value>' argument missing"],
    ['restore', [], 'give the backup FILE to restore'],
    ['restore', ['--force', 'a.db'], "unknown option '--force'"],
  ] as const) {
    test(`alttext ${command} ${args.join(' ')}`, async () => {
      const result = await alttext([command, ...args], { ALTTEXT_DB: join(dir('args'), 'alttext.db') })
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain(`alttext ${command}: ${message}`)
      expect(result.stderr).toContain(`Run \`alttext ${command} --help\` for the options.`)
    })
  }

  test('--help of each: usage, options, ALTTEXT_DB and the exit codes; exit 0', async () => {
    for (const command of ['backup', 'restore']) {
      const result = await alttext([command, '--help'])
      expect(result.code).toBe(0)
      expect(result.stdout).toStartWith(`Usage: alttext ${command} [options] FILE`)
      expect(result.stdout).toContain('--db FILE')
      expect(result.stdout).toContain('ALTTEXT_DB')
      expect(result.stdout).toContain('Exit codes: 0')
      expect(result.stdout).not.toContain('ALTTEXT_API_KEY')
    }
  })
})

describe('alttext backup refuses', () => {
  test('an existing FILE without --force: exit 1, the file untouched', async () => {
    const { base, dbPath } = await withBackup('backup-exists')
    const target = join(base, 'precious.txt')
    writeFileSync(target, 'not to be overwritten')
    const before = listing(base)
    const result = await alttext(['backup', '--db', dbPath, target])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`alttext backup: ${target} already exists; choose another name, or pass --force to replace it`)
    expect(readFileSync(target, 'utf8')).toBe('not to be overwritten')
    expect(listing(base)).toEqual(before)
  })

  test('a database that does not exist: exit 1, names the path and the variable; nothing created', async () => {
    const base = dir('backup-nodb')
    const result = await alttext(['backup', join(base, 'copy.db')], { ALTTEXT_DB: join(base, 'missing.db') })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`there is no database at ${join(base, 'missing.db')}; check ALTTEXT_DB or --db`)
    expect(listing(base)).toEqual([])
  })

  test('a folder that does not exist (an unmounted backup disk): exit 1; the folder is not created', async () => {
    const { dbPath, base } = await withBackup('backup-nodir')
    const result = await alttext(['backup', '--db', dbPath, join(base, 'mnt', 'backups', 'a.db')])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`the directory ${join(base, 'mnt', 'backups')} does not exist (is the backup disk mounted?)`)
    expect(listing(base)).not.toContain('mnt')
  })

  test('FILE is the database itself or its WAL, even with --force: exit 1, the database intact', async () => {
    const { dbPath } = await withBackup('backup-self', 3)
    for (const target of [dbPath, `${dbPath}-wal`]) {
      const result = await alttext(['backup', '--force', '--db', dbPath, target])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('is a file of the database itself; write the backup elsewhere')
    }
    expect(countRows(dbPath, 'accounts')).toBe(3)
  })

  test('an SQLite file that is not an alttext database: exit 1, no backup file left', async () => {
    const base = dir('backup-foreign')
    const foreign = join(base, 'other.db')
    const db = new Database(foreign)
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)')
    db.close()
    const result = await alttext(['backup', '--db', foreign, join(base, 'copy.db')])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`the database ${foreign} is not an alttext database (it has no schema_migrations table)`)
    expect(listing(base)).toEqual(['other.db'])
  })
})

describe('alttext restore refuses', () => {
  test('while the service runs on the database: exit 1, names the file; the service keeps its data and goes on answering', async () => {
    const { base, dbPath, backupPath } = await withBackup('restore-serving', 1)
    const service = await spawnService({ ALTTEXT_DB: dbPath })
    try {
      const api = apiClient(service.url)
      const account = await api.register()
      const result = await alttext(['restore', backupPath], { ALTTEXT_DB: dbPath })
      expect(result.code).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain(`alttext restore: restore refused: another alttext process is serving ${dbPath}`)
      expect(result.stderr).toContain('stop it first')
      expect(listing(base).filter((name) => name.includes('before-restore') || name.includes('partial'))).toEqual([])
      expect((await api.post('/api/validate-key', { api_key: account.apiKey })).status).toBe(200)
    } finally {
      service.proc.kill('SIGTERM')
      await service.exited
    }
    expect(countRows(dbPath, 'accounts')).toBe(2)
  })

  test('a damaged backup (an index page overwritten): exit 1, "failed its integrity check"; the database unchanged, nothing left behind', async () => {
    const { base, dbPath, backupPath } = await withBackup('restore-damaged', 5)
    const damaged = join(base, 'damaged.db')
    copyFileSync(backupPath, damaged)
    damageIndex(damaged)
    const before = listing(base)
    const result = await alttext(['restore', '--db', dbPath, damaged])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`alttext restore: the backup ${damaged} failed its integrity check:`)
    expect(listing(base)).toEqual(before)
    expect(countRows(dbPath, 'accounts')).toBe(5)
  })

  test('a file that is not a database, or not an alttext one: exit 1, the database unchanged', async () => {
    const { base, dbPath } = await withBackup('restore-foreign', 2)
    const text = join(base, 'notes.txt')
    writeFileSync(text, 'these are not the pages you are looking for '.repeat(200))
    const foreign = join(base, 'foreign.db')
    const db = new Database(foreign)
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY)')
    db.close()
    const before = listing(base)
    const notDb = await alttext(['restore', '--db', dbPath, text])
    expect(notDb.code).toBe(1)
    expect(notDb.stderr).toContain(`the backup ${text} is not a readable SQLite database`)
    const notOurs = await alttext(['restore', '--db', dbPath, foreign])
    expect(notOurs.code).toBe(1)
    expect(notOurs.stderr).toContain(`the backup ${foreign} is not an alttext database`)
    expect(listing(base)).toEqual(before)
    expect(countRows(dbPath, 'accounts')).toBe(2)
  })

  test('a backup of a newer schema than this binary knows: exit 1, says to use the version that made it', async () => {
    const { base, dbPath, backupPath } = await withBackup('restore-newer', 2)
    const db = new Database(backupPath)
    db.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'from the future', 0)")
    db.close()
    const result = await alttext(['restore', '--db', dbPath, backupPath])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("the backup's schema version 9999 is newer than this binary knows")
    expect(result.stderr).toContain('restore it with the alttext version that made it')
    expect(listing(base).filter((name) => name.includes('before-restore'))).toEqual([])
  })

  // A backup is put in place of the service's database: SQL of its own (a trigger that copies every new
  // key hash, a view, a table or column the schema never made) must not come in with it.
  const foreignObjects: [string, string, string][] = [
    ['a trigger', "CREATE TRIGGER steal AFTER INSERT ON api_keys BEGIN UPDATE accounts SET plan = 'owned' WHERE id = NEW.account_id; END", 'trigger "steal"'],
    ['a view', 'CREATE VIEW hashes AS SELECT email, password_hash FROM accounts', 'view "hashes"'],
    ['a table', 'CREATE TABLE loot (data TEXT)', 'table "loot"'],
    ['an index', 'CREATE INDEX by_plan ON accounts (plan)', 'index "by_plan"'],
    ['a column', 'ALTER TABLE accounts ADD COLUMN note TEXT', 'table "accounts": columns the schema does not have (note)'],
    [
      "one of the schema's triggers with another body",
      "DROP TRIGGER account_deleted; CREATE TRIGGER account_deleted AFTER DELETE ON accounts BEGIN UPDATE accounts SET plan = 'owned'; END",
      'trigger "account_deleted" unlike the schema\'s',
    ],
  ]
  for (const [what, sql, named] of foreignObjects) {
    test(`a backup with ${what} the schema does not have: exit 1, names it; the database unchanged, nothing left behind`, async () => {
      const { base, dbPath, backupPath } = await withBackup('restore-foreign-sql', 2)
      const db = new Database(backupPath)
      db.exec(sql)
      db.close()
      const before = listing(base)
      const result = await alttext(['restore', '--db', dbPath, backupPath])
      expect(result.code).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain(
        `alttext restore: the backup ${backupPath} does not match the alttext schema of its version ${latestSchemaVersion()}: ${named}`,
      )
      expect(result.stderr).toContain('nothing was restored')
      expect(listing(base)).toEqual(before)
      expect(countRows(dbPath, 'accounts')).toBe(2)
    })
  }

  // The review found a backup whose api_keys.revoked_at had become a generated column restored without a
  // word (tables were compared by their column names only), and the service then could not start on it.
  const changedTables: [string, string, (sql: string) => string, string][] = [
    [
      'a generated column where the schema has a plain one',
      'api_keys',
      (sql) => sql.replace('revoked_at INTEGER,', 'revoked_at INTEGER GENERATED ALWAYS AS (NULL) VIRTUAL,'),
      `table "api_keys": column revoked_at is a generated column (VIRTUAL), the schema's is a plain column`,
    ],
    [
      'a column of another type',
      'api_keys',
      (sql) => sql.replace('prefix TEXT NOT NULL', 'prefix BLOB NOT NULL'),
      `table "api_keys": column prefix has the type BLOB, the schema's TEXT`,
    ],
    [
      'a NOT NULL dropped',
      'reset_tokens',
      (sql) => sql.replace('expires_at INTEGER NOT NULL', 'expires_at INTEGER'),
      `table "reset_tokens": column expires_at may be NULL, the schema's is NOT NULL`,
    ],
    [
      'another default',
      'accounts',
      (sql) => sql.replace("DEFAULT 'free'", "DEFAULT 'team'"),
      `table "accounts": column plan defaults to 'team', the schema's to 'free'`,
    ],
    [
      'a foreign key without its ON DELETE CASCADE',
      'reset_tokens',
      (sql) => sql.replace(' ON DELETE CASCADE', ''),
      `table "reset_tokens": its foreign keys are account_id REFERENCES accounts(id) ON UPDATE NO ACTION ON DELETE NO ACTION, the schema's account_id REFERENCES accounts(id) ON UPDATE NO ACTION ON DELETE CASCADE`,
    ],
    [
      'a CHECK constraint of its own',
      'accounts',
      (sql) => sql.replace('password_hash TEXT NOT NULL,', 'password_hash TEXT NOT NULL CHECK (length(password_hash) < 500),'),
      `table "accounts": constraints unlike the schema's`,
    ],
    ['STRICT', 'reset_tokens', (sql) => `${sql} STRICT`, `table "reset_tokens": it is STRICT, the schema's is not`],
  ]
  for (const [what, table, edit, named] of changedTables) {
    test(`a backup whose ${table} has ${what}: exit 1, names the table and the difference; the database unchanged`, async () => {
      const { base, dbPath, backupPath } = await withBackup('restore-changed-table', 2)
      rebuildTable(backupPath, table, edit)
      const before = listing(base)
      const result = await alttext(['restore', '--db', dbPath, backupPath])
      expect(result.code).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain(
        `alttext restore: the backup ${backupPath} does not match the alttext schema of its version ${latestSchemaVersion()}: ${named}`,
      )
      expect(result.stderr).toContain('nothing was restored')
      expect(listing(base)).toEqual(before)
      expect(countRows(dbPath, 'accounts')).toBe(2)
      expect(countRows(dbPath, 'api_keys')).toBe(2)
    })
  }

  test("a backup without one of the schema's indexes: exit 1, names it", async () => {
    const { dbPath, backupPath } = await withBackup('restore-missing-index', 2)
    const db = new Database(backupPath)
    db.exec('DROP INDEX api_keys_account')
    db.close()
    const result = await alttext(['restore', '--db', dbPath, backupPath])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`does not match the alttext schema of its version ${latestSchemaVersion()}: no index "api_keys_account"`)
    expect(countRows(dbPath, 'accounts')).toBe(2)
  })

  test("comments and spacing in a table's SQL are no difference: the backup is restored", async () => {
    const { dbPath, backupPath } = await withBackup('restore-spacing', 3)
    rebuildTable(backupPath, 'api_keys', (sql) => sql.replace('label TEXT,', '"label"   TEXT, -- a note\n'))
    const result = await alttext(['restore', '--db', dbPath, backupPath])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(countRows(dbPath, 'accounts')).toBe(3)
  })

  test('a backup file that does not exist: exit 1', async () => {
    const { base, dbPath } = await withBackup('restore-missing')
    const result = await alttext(['restore', '--db', dbPath, join(base, 'nope.db')])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`there is no backup file at ${join(base, 'nope.db')}`)
  })
})
