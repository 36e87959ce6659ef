// Each command as the `alttext` binary runs it (`bun src/main.ts COMMAND`): main.ts hands it the
// process's environment, streams and working directory, and exits with its code. The other CLI tests run
// the commands in-process (runCli); these few keep main.ts's wiring tested.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { makeDatabase, scratchDirs } from '../operations/backup-support'
import { runCommand, SOURCE_COMMAND } from '../support/process'
import { siteCopy } from './audit-support'

// Each test starts one or two processes: room for a loaded machine.
setDefaultTimeout(30_000)

const scratch = scratchDirs()
let dir: string
let database: string

beforeAll(async () => {
  dir = scratch('binary')
  database = join(dir, 'alttext.db')
  await makeDatabase(database, 2)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('each command from the binary', () => {
  test('doctor reads the environment it is started with and exits 1 on a failed check', async () => {
    // Port 9 on loopback: refused at once.
    const run = await runCommand(['doctor'], { ALTTEXT_DB: database, OLLAMA_HOST: 'http://127.0.0.1:9', HOST: '127.0.0.1', PORT: '3999' })
    expect(run.code).toBe(1)
    expect(run.stdout).toStartWith('alttext doctor ')
    expect(run.stdout).toContain(`PASS  database: ${database}`)
    expect(run.stdout).toContain('FAIL  model host http://127.0.0.1:9: ')
  })

  test('admin lists the accounts of ALTTEXT_DB on stdout, exit 0', async () => {
    const run = await runCommand(['admin', 'accounts', 'list', '--json'], { ALTTEXT_DB: database })
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).accounts).toHaveLength(2)
  })

  test('backup and restore: a relative FILE is in the folder the command runs in', async () => {
    const backup = await runCommand(['backup', '--db', database, 'copy.db'], {}, SOURCE_COMMAND, dir)
    expect(backup.code).toBe(0)
    expect(backup.stdout).toStartWith(`backup written: ${join(dir, 'copy.db')}\n`)
    const target = join(dir, 'restored.db')
    const restore = await runCommand(['restore', 'copy.db'], { ALTTEXT_DB: target }, SOURCE_COMMAND, dir)
    expect(restore.code).toBe(0)
    expect(restore.stdout).toStartWith(`restored: ${target}\n`)
  })

  test('db copy between two SQLite files, exit 0', async () => {
    const target = join(dir, 'copied.db')
    const run = await runCommand(['db', 'copy', database, target])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('copied and verified: ')
    expect(existsSync(target)).toBe(true)
  })

  test('audit --dry-run reads the pages and writes the report relative to its folder', async () => {
    const copy = siteCopy()
    try {
      const run = await runCommand(['audit', 'site', '--dry-run', '--json', 'report.json', '-q'], {}, SOURCE_COMMAND, copy.dir)
      expect(run.code).toBe(0)
      expect(JSON.parse(readFileSync(join(copy.dir, 'report.json'), 'utf8')).totals.pages).toBeGreaterThan(0)
    } finally {
      copy.cleanup()
    }
  })

  test('a report on stdout larger than a pipe holds reaches a reader that is behind, whole', async () => {
    const site = join(dir, 'big-site')
    mkdirSync(site)
    for (let i = 0; i < 400; i++) writeFileSync(join(site, `p${i}.html`), `<html lang="en"><body><img src="a${i}.png"><p>page ${i}</p></body></html>`)
    const command = [...SOURCE_COMMAND, 'audit', site, '--dry-run', '--json', '-', '-q'].map((arg) => `'${arg}'`).join(' ')
    // The reader starts a second late: the report (about 300 KB) fills the pipe (64 KB) before it reads.
    const shell = Bun.spawn(['sh', '-c', `${command} | (sleep 1; cat > report.json)`], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, stderr: 'pipe' })
    expect(await shell.exited).toBe(0)
    expect(await new Response(shell.stderr).text()).not.toContain('EAGAIN')
    expect(JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')).totals.pages).toBe(400)
  })

  test('describe reads its client variables from the environment: a bad ALTTEXT_URL is a usage error, exit 2', async () => {
    const run = await runCommand(['describe', 'test/fixtures'], { ALTTEXT_URL: 'ftp://example.test', ALTTEXT_API_KEY: 'k' })
    expect(run.code).toBe(2)
    expect(run.stderr).toStartWith('alttext describe: ALTTEXT_URL: ')
  })
})
