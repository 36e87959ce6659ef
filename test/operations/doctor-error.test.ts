// `alttext doctor` against broken set-ups: each problem gives its FAIL line with a fix, what depends on
// it is skipped, the rest still runs, and the exit code is 1 (2 for bad arguments). What the service
// mends itself at start (no database yet, migrations pending) is a WARN, exit 0.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { runDoctor } from '../../src/cli/doctor'
import { latestSchemaVersion } from '../../src/store/sqlite/migrations'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { runCli, runCommand, SOURCE_COMMAND } from '../support/process'
import { damageIndex, freshDir, makeDatabase } from './backup-support'
import { byId, doctorJson, doctorText, healthyEnv } from './doctor-support'

// Each test runs the command (in-process, as another user in a subprocess) and fake servers: room for a loaded machine.
setDefaultTimeout(30_000)

let dir: string
let fake: FakeOllama
let env: Record<string, string>
const dirs: string[] = []
const scratch = (tag: string) => {
  const made = freshDir(tag)
  dirs.push(made)
  return made
}

beforeAll(async () => {
  dir = freshDir('doctor-error')
  await makeDatabase(join(dir, 'alttext.db'), 2)
  fake = await startFakeOllama({ models: ['llava:latest'] })
  env = healthyEnv(dir, fake.url)
})
afterAll(async () => {
  await fake.stop()
  for (const made of [dir, ...dirs]) rmSync(made, { recursive: true, force: true })
})

/** A copy of the healthy database, changed by `change`, in a folder of its own. */
async function databaseCopy(tag: string, change?: (db: Database) => void): Promise<string> {
  const path = join(scratch(tag), 'alttext.db')
  await makeDatabase(path, 2)
  if (change) {
    const db = new Database(path)
    change(db)
    db.close()
  }
  return path
}

describe('the model side', () => {
  test('the model is not pulled: FAIL with "ollama pull", the generation skipped, exit 1', async () => {
    const missing = await startFakeOllama({ models: ['mistral:latest'] })
    try {
      const run = await doctorText({ ...env, OLLAMA_HOST: missing.url })
      expect(run.code).toBe(1)
      expect(run.line(`model host ${missing.url}`)).toBe(
        `FAIL  model host ${missing.url}: model llava not found at ${missing.url}: run "ollama pull llava"\n` +
          `      fix: run "ollama pull llava" on ${missing.url}, or set ALTTEXT_MODEL to a vision model it has`,
      )
      expect(run.line(`test generation on ${missing.url}`)).toBe(`SKIP  test generation on ${missing.url}: the host failed its check`)
      expect(missing.requests.some((r) => r.path === '/api/chat')).toBe(false)
      // The other checks still ran and passed.
      expect(run.line('database integrity')).toStartWith('PASS')
      expect(run.line('public URL')).toStartWith('PASS')
    } finally {
      await missing.stop()
    }
  })

  test('a model that never answers the test generation: FAIL when its deadline passes, exit 1', async () => {
    const silent = await startFakeOllama({ models: ['llava:latest'], hang: true })
    try {
      // The users' deadline is minutes (a cold model loads first); the command takes it as a parameter.
      const deadlines = { timeoutMs: 2000, generationTimeoutMs: 200 }
      const run = await runCli(['doctor', '--json'], { ...env, OLLAMA_HOST: silent.url }, { run: (argv, io) => runDoctor(argv, io, deadlines) })
      expect(run.code).toBe(1)
      const [generation] = byId(JSON.parse(run.stdout), 'test_generation')
      expect(generation?.status).toBe('fail')
      expect(generation?.detail).toContain('timed out')
      expect(byId(JSON.parse(run.stdout), 'model_host')[0]?.status).toBe('pass')
    } finally {
      await silent.stop()
    }
  })

  test('the model cannot see images: FAIL, fix names a vision model', async () => {
    const blind = await startFakeOllama({ models: ['llava:latest'], capabilities: ['completion'] })
    try {
      const run = await doctorText({ ...env, OLLAMA_HOST: blind.url })
      expect(run.code).toBe(1)
      expect(run.line(`model host ${blind.url}`)).toStartWith(`FAIL  model host ${blind.url}: model llava cannot see images (capabilities: completion)`)
      expect(run.line(`model host ${blind.url}`)).toContain('fix: set ALTTEXT_MODEL to a vision model')
    } finally {
      await blind.stop()
    }
  })

  test('the host is down: FAIL unreachable with a fix naming the variables; one of two hosts down fails the run', async () => {
    const down = 'http://127.0.0.1:9'
    const run = await doctorText({ ...env, ALTTEXT_MODEL_HOSTS: `${fake.url},${down}` })
    expect(run.code).toBe(1)
    expect(run.line(`model host ${fake.url}`)).toStartWith('PASS')
    expect(run.line(`test generation on ${fake.url}`)).toStartWith('PASS')
    expect(run.line(`model host ${down}`)).toStartWith(`FAIL  model host ${down}: Ollama not reachable at ${down}`)
    expect(run.line(`model host ${down}`)).toContain(`fix: start the model server at ${down}, or correct ALTTEXT_MODEL_HOSTS (or OLLAMA_HOST)`)
    expect(run.stdout).toContain('12 checks: 9 passed, 1 failed, 2 skipped')
  })

  test('the model fails to generate (the runner crashed): the test generation FAILs with the reason', async () => {
    const crashing = await startFakeOllama({ models: ['llava'], failStatus: 500, failError: 'llama runner process has terminated' })
    try {
      const { code, report } = await doctorJson({ ...env, OLLAMA_HOST: crashing.url })
      expect(code).toBe(1)
      const generation = report.checks.find((check) => check.id === 'test_generation')!
      expect(generation.status).toBe('fail')
      expect(generation.detail).toContain('llama runner process has terminated')
      expect(generation.fix).toContain('see the model server log')
      expect(report.ok).toBe(false)
    } finally {
      await crashing.stop()
    }
  })

  test('the model answers nothing usable: FAIL', async () => {
    const empty = await startFakeOllama({ models: ['llava'], emptyReply: true })
    try {
      const run = await doctorText({ ...env, OLLAMA_HOST: empty.url })
      expect(run.code).toBe(1)
      expect(run.line(`test generation on ${empty.url}`)).toMatch(/^FAIL {2}test generation on \S+: the model answered no usable text in/)
    } finally {
      await empty.stop()
    }
  })
})

describe('the database', () => {
  test('missing before the first start: WARN that `alttext serve` will create it, its other checks skipped, exit 0; the file is not created', async () => {
    const empty = scratch('doctor-nodb')
    const path = join(empty, 'alttext.db')
    const run = await doctorText({ ...env, ALTTEXT_DB: path })
    expect(run.code).toBe(0)
    expect(run.line('database')).toBe(
      `WARN  database: there is no database at ${path} yet: \`alttext serve\` will create it, at schema version ${latestSchemaVersion()}\n` +
        '      fix: nothing to do before the first start; if the service had data, point ALTTEXT_DB at its file or restore a backup (alttext restore FILE)',
    )
    for (const name of ['database writable', 'database schema', 'database integrity']) expect(run.line(name)).toBe(`SKIP  ${name}: there is no database yet`)
    expect(run.line(`model host ${fake.url}`)).toStartWith('PASS')
    expect(run.stdout).toMatch(/\n\d+ checks: \d+ passed, 1 warning, 0 failed, \d+ skipped\n/)
    expect(await Bun.file(path).exists()).toBe(false)
  })

  test('missing, its folders too: WARN naming the folder it will be made in; nothing is created', async () => {
    const empty = scratch('doctor-nodir')
    const path = join(empty, 'var', 'lib', 'alttext.db')
    const run = await doctorText({ ...env, ALTTEXT_DB: path })
    expect(run.code).toBe(0)
    expect(run.line('database')).toStartWith(
      `WARN  database: there is no database at ${path} yet: \`alttext serve\` will create it (and its folder in ${empty})`,
    )
    expect(await Bun.file(join(empty, 'var')).exists()).toBe(false)
    expect(readdirSync(empty)).toEqual([])
  })

  test('missing in a folder the service may not write: FAIL, it could not be created', async () => {
    const folder = scratch('doctor-nodb-readonly')
    const path = join(folder, 'alttext.db')
    chmodSync(folder, 0o555)
    // root writes anywhere: run the doctor as nobody then.
    const asRoot = process.getuid?.() === 0
    const command = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...SOURCE_COMMAND] : SOURCE_COMMAND
    const run = await runCommand(['doctor', '--json'], { ...env, ALTTEXT_DB: path, HOME: folder }, command)
    const report = JSON.parse(run.stdout) as Awaited<ReturnType<typeof doctorJson>>['report']
    expect(run.code).toBe(1)
    const [database] = byId(report, 'database')
    expect(database!.status).toBe('fail')
    expect(database!.detail).toStartWith(
      `there is no database at ${path}, and \`alttext serve\` could not create it: ${folder} is not writable by this user (uid ${asRoot ? 65534 : process.getuid?.()})`,
    )
    chmodSync(folder, 0o755)
  }, 30_000)

  test('not writable by the user the doctor runs as: FAIL "database writable" naming the file and the uid', async () => {
    const path = await databaseCopy('doctor-readonly')
    const folder = join(path, '..')
    // root writes anywhere: run the doctor as nobody then, with a folder it may create -shm in.
    const asRoot = process.getuid?.() === 0
    if (asRoot) {
      chmodSync(folder, 0o777)
      chmodSync(path, 0o644)
    } else chmodSync(path, 0o444)
    const command = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...SOURCE_COMMAND] : SOURCE_COMMAND
    const run = await runCommand(['doctor', '--json'], { ...env, ALTTEXT_DB: path, HOME: folder }, command)
    const report = JSON.parse(run.stdout) as Awaited<ReturnType<typeof doctorJson>>['report']
    expect(run.code).toBe(1)
    const writable = report.checks.find((check) => check.id === 'database_writable')!
    expect(writable.status).toBe('fail')
    expect(writable.detail).toContain(`the database file ${path} is not writable by this user (uid ${asRoot ? 65534 : process.getuid?.()})`)
    expect(writable.fix).toContain('must own the database file and its folder')
    expect(report.checks.find((check) => check.id === 'database_integrity')!.status).toBe('pass')
  }, 30_000)

  test("migrations pending (before an upgrade's restart): WARN naming the migrations `alttext serve` will run, exit 0", async () => {
    const latest = latestSchemaVersion()
    const one = await databaseCopy('doctor-old', (db) => db.exec(`DELETE FROM schema_migrations WHERE version = ${latest}`))
    const run = await doctorText({ ...env, ALTTEXT_DB: one })
    expect(run.code).toBe(0)
    expect(run.line('database schema')).toBe(
      `WARN  database schema: version ${latest - 1}; this binary's is ${latest}: 1 migration pending; \`alttext serve\` will run migration ${latest} when it starts\n` +
        '      fix: back up first (alttext backup FILE), then restart the service with this binary',
    )
    const two = await databaseCopy('doctor-older', (db) => db.exec(`DELETE FROM schema_migrations WHERE version >= ${latest - 1}`))
    expect((await doctorText({ ...env, ALTTEXT_DB: two })).line('database schema')).toStartWith(
      `WARN  database schema: version ${latest - 2}; this binary's is ${latest}: 2 migrations pending; \`alttext serve\` will run migrations ${latest - 1}..${latest} when it starts`,
    )
  })

  test('a schema newer than the binary: FAIL, the service would refuse to start', async () => {
    const path = await databaseCopy('doctor-new', (db) => db.exec("INSERT INTO schema_migrations VALUES (9999, 'future', 0)"))
    const run = await doctorText({ ...env, ALTTEXT_DB: path })
    expect(run.code).toBe(1)
    expect(run.line('database schema')).toContain('version 9999 is newer than this binary knows')
  })

  test('damaged: FAIL "database integrity", fix says restore a backup', async () => {
    const path = await databaseCopy('doctor-damaged')
    damageIndex(path)
    const run = await doctorText({ ...env, ALTTEXT_DB: path })
    expect(run.code).toBe(1)
    expect(run.line('database integrity')).toMatch(
      /^FAIL {2}database integrity: quick_check (found damage|failed): .+\n {6}fix: stop the service and restore the latest good backup/,
    )
  })

  test('not an alttext database: FAIL, and the file is not written to', async () => {
    const path = join(scratch('doctor-foreign'), 'notes.db')
    const db = new Database(path)
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY)')
    db.close()
    const before = await Bun.file(path).bytes()
    const run = await doctorText({ ...env, ALTTEXT_DB: path })
    expect(run.code).toBe(1)
    expect(run.line('database')).toStartWith(`FAIL  database: ${path} is not an alttext database (no schema_migrations table)`)
    expect(await Bun.file(path).bytes()).toEqual(before)
  })

  test('a record from the future: FAIL "clock", the clock was set back', async () => {
    const path = await databaseCopy('doctor-future', (db) =>
      db.query("UPDATE accounts SET created_at = ? WHERE email = 'made-0@example.com'").run(Date.now() + 3 * 86_400_000),
    )
    const run = await doctorText({ ...env, ALTTEXT_DB: path })
    expect(run.code).toBe(1)
    expect(run.line('clock')).toMatch(
      /^FAIL {2}clock: the database has a record from \S+, \d+\.\d\d s after this machine's time: the clock was set back\n {6}fix: keep the clock synchronised/,
    )
  })
})

describe('configuration, mail and the public URL', () => {
  test('a bad variable: FAIL "configuration" naming it, the rest skipped, exit 1', async () => {
    const run = await doctorText({ ...env, ALTTEXT_MODEL_CONCURRENCY: 'lots' })
    expect(run.code).toBe(1)
    expect(run.line('configuration')).toBe(
      'FAIL  configuration: ALTTEXT_MODEL_CONCURRENCY: must be a whole number, got "lots"\n' +
        "      fix: correct ALTTEXT_MODEL_CONCURRENCY in the service's environment (alttext --help lists every variable and its default)",
    )
    expect(run.line('the other checks')).toBe('SKIP  the other checks: they need a valid configuration')
    expect(run.stdout).toContain('2 checks: 0 passed, 1 failed, 1 skipped')
  })

  test('an SMTP relay that does not answer: FAIL "mail (SMTP)" with host and port, exit 1', async () => {
    const run = await doctorText({ ...env, ALTTEXT_SMTP_URL: 'smtp://127.0.0.1:9' })
    expect(run.code).toBe(1)
    expect(run.line('mail (SMTP)')).toStartWith('FAIL  mail (SMTP): 127.0.0.1:9: ')
    expect(run.line('mail (SMTP)')).toContain('fix: check ALTTEXT_SMTP_URL')
  })

  test('the defaults (HOST unset: loopback, the public URL localhost): PASS, on this machine only', async () => {
    const { ALTTEXT_PUBLIC_URL: _default, HOST: _host, ...rest } = env
    const run = await doctorText({ ...rest, PORT: '3000' })
    expect(run.code).toBe(0)
    expect(run.line('public URL')).toBe('PASS  public URL: http://localhost:3000, on this machine only (listens on 127.0.0.1:3000 and [::1]:3000)')
  })

  // HOST opened up (all addresses) and no ALTTEXT_PUBLIC_URL. It works on this machine; the warning says
  // what to set before other machines use it. "::" is all addresses too (dual-stack).
  for (const host of ['0.0.0.0', '::']) {
    test(`the default public URL (localhost) while listening on all addresses (HOST ${host}): WARN saying what to set, exit 0`, async () => {
      const { ALTTEXT_PUBLIC_URL: _default, HOST: _host, ...rest } = env
      const run = await doctorText({ ...rest, HOST: host, PORT: '3000' })
      expect(run.code).toBe(0)
      const listen = host === '0.0.0.0' ? '0.0.0.0:3000' : '[::]:3000'
      expect(run.line('public URL')).toBe(
        `WARN  public URL: http://localhost:3000 works on this machine; the service listens on ${listen}, and other machines that reach it would get reset and docs links to localhost, that is to themselves\n` +
          '      fix: before other machines use it, set ALTTEXT_PUBLIC_URL to the address they reach this service at, e.g. https://alttext.example.org',
      )
      expect(run.stdout).toMatch(/\n\d+ checks: \d+ passed, 1 warning, 0 failed, 1 skipped\n/)
    })
  }

  test('--json: the warning is status "warn", counted apart; ok stays true', async () => {
    const { ALTTEXT_PUBLIC_URL: _default, HOST: _host, ...rest } = env
    const { code, report } = await doctorJson({ ...rest, HOST: '::', PORT: '3000' })
    expect(code).toBe(0)
    expect(report).toMatchObject({ ok: true, warned: 1, failed: 0 })
    const [check] = byId(report, 'public_url')
    expect(check).toMatchObject({ status: 'warn' })
    expect(check!.fix).toContain('set ALTTEXT_PUBLIC_URL')
  })

  test('a localhost public URL while listening on one address of another machine: FAIL, the links could not work anywhere', async () => {
    const { ALTTEXT_PUBLIC_URL: _default, ...rest } = env
    const run = await doctorText({ ...rest, HOST: '192.0.2.10', PORT: '3000' })
    expect(run.code).toBe(1)
    expect(run.line('public URL')).toBe(
      "FAIL  public URL: http://localhost:3000 is this machine's own name, but the service listens on 192.0.2.10:3000 only: its reset and docs links would reach nothing\n" +
        '      fix: set ALTTEXT_PUBLIC_URL to the address users and their browsers reach this service at, e.g. https://alttext.example.org',
    )
  })

  test('a loopback public URL on another port than the service listens on: FAIL', async () => {
    const run = await doctorText({ ...env, ALTTEXT_PUBLIC_URL: 'http://127.0.0.1:8080' })
    expect(run.code).toBe(1)
    expect(run.line('public URL')).toStartWith('FAIL  public URL: http://127.0.0.1:8080 names port 8080, but the service listens on 127.0.0.1:3999')
  })

  test('an https public URL in front of a loopback listener passes (a proxy ends TLS)', async () => {
    const run = await doctorText({ ...env, ALTTEXT_PUBLIC_URL: 'https://alttext.example.org' })
    expect(run.code).toBe(0)
    expect(run.line('public URL')).toStartWith('PASS  public URL: https://alttext.example.org (TLS ended by a proxy')
  })
})

describe('bad arguments: exit 2', () => {
  for (const args of [['--frobnicate'], ['extra'], ['--db']]) {
    test(`alttext doctor ${args.join(' ')}`, async () => {
      const run = await doctorText(env, args)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe('')
      expect(run.stderr).toContain('Run `alttext doctor --help` for the options.')
    })
  }
})
