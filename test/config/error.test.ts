// Bad configuration stops start-up with exit code 2 and a message naming the variable; unknown commands exit 2.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig, VARIABLES } from '../../src/config'
import { runCommand, SOURCE_COMMAND } from '../support/process'

// If a bad value were accepted, the server would start and never exit: `timeout` ends it (exit 137),
// so such a bug fails the test instead of hanging it.
const GUARDED_COMMAND = ['timeout', '-s', 'KILL', '15', ...SOURCE_COMMAND]

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-config-error-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

/** A sane environment (loopback, free port, temp database) plus the one bad value under test. */
function envWith(bad: Record<string, string>, tag: string): Record<string, string> {
  return { PORT: '0', HOST: '127.0.0.1', ALTTEXT_DB: join(tmp, tag, 'alttext.db'), OLLAMA_HOST: 'http://127.0.0.1:9', ...bad }
}

const BAD_VALUES: [string, string][] = [
  ['PORT', 'abc'],
  ['PORT', '70000'],
  ['PORT', '-1'],
  ['PORT', '80.5'],
  ['HOST', 'not a host!'],
  ['ALTTEXT_MODEL_CONCURRENCY', '0'],
  ['ALTTEXT_MODEL_CONCURRENCY', 'two'],
  ['ALTTEXT_FREE_CREDITS', '-1'],
  ['ALTTEXT_FREE_CREDITS', 'lots'],
  ['ALTTEXT_RATE_LIMITS', 'maybe'],
  ['ALTTEXT_PUBLIC_URL', 'notaurl'],
  ['ALTTEXT_PUBLIC_URL', 'ftp://alttext.example.org'],
  ['ALTTEXT_SMTP_URL', 'http://x'],
  ['ALTTEXT_SMTP_URL', 'not a url'],
  ['ALTTEXT_MAIL_FROM', 'not-an-address'],
  ['ALTTEXT_TRUST_PROXY', 'x'],
  ['ALTTEXT_TRUST_PROXY', '-1'],
  ['ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS', '10.0.0.0/99'],
  ['ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS', 'intranet,not a host'],
  ['ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS', '::1/129'],
  ['OLLAMA_HOST', 'ftp://x'],
  ['NODE_EXTRA_CA_CERTS', '/nonexistent/alttext-ca.pem'],
  ['ALTTEXT_CACHE_TTL_DAYS', '-3'],
  ['ALTTEXT_CACHE_TTL_DAYS', 'forever'],
  ['ALTTEXT_CACHE_SCOPE', 'global'],
  ['ALTTEXT_IMAGE_MAX_SIDE', '100'],
  ['ALTTEXT_IMAGE_MAX_SIDE', '99999'],
  ['ALTTEXT_DATABASE_URL', 'mysql://alttext@db.internal/alttext'],
  ['ALTTEXT_DATABASE_URL', 'postgres://alttext@db.internal'],
  ['ALTTEXT_DATABASE_URL', 'postgres://alttext@db.internal/alttext?sslmode=sometimes'],
  ['ALTTEXT_DATABASE_URL', 'postgres://alttext@db.internal/alttext?application_name=x'],
  ['ALTTEXT_BATCH_LEASE_SECONDS', '4'],
  ['ALTTEXT_BATCH_LEASE_SECONDS', '3601'],
  ['ALTTEXT_BATCH_LEASE_SECONDS', 'a minute'],
]

describe('a bad value stops start-up with exit code 2, naming the variable', () => {
  test.each(BAD_VALUES)(
    '%s=%p',
    async (name, value) => {
      const tag = `${name}-${Buffer.from(value).toString('hex')}`
      const { code, stdout, stderr } = await runCommand(['serve'], envWith({ [name]: value }, tag), GUARDED_COMMAND)
      expect(code).toBe(2)
      expect(stderr).toContain(name)
      expect(stdout + stderr).not.toContain('"msg":"listening"')
      // Nothing was created: the database was never opened.
      expect(existsSync(join(tmp, tag))).toBe(false)
    },
    30_000,
  )

  test('the default command (no argument) validates the same way', async () => {
    const { code, stderr } = await runCommand([], envWith({ PORT: 'abc' }, 'default-command'), GUARDED_COMMAND)
    expect(code).toBe(2)
    expect(stderr).toContain('PORT')
  }, 30_000)
})

describe('loadConfig throws a ConfigError naming the variable', () => {
  test.each(BAD_VALUES)('%s=%p', (name, value) => {
    let error: unknown
    try {
      loadConfig({ [name]: value })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe(name)
    expect((error as ConfigError).message).toContain(name)
  })

  test('ALTTEXT_DATABASE_URL: no message repeats the password, whatever is wrong with the URL', () => {
    const secret = 's3cr3t-Pa55'
    const bad = [
      `mysql://alttext:${secret}@db.internal/alttext`,
      `postgres://alttext:${secret}@/alttext`,
      `postgres://alttext:${secret}@db.internal`,
      `postgres://alttext:${secret}@db.internal/alttext?sslmode=never`,
      `postgres://alttext:${secret}@db.internal/alttext?password=${secret}`,
      // Unencoded characters a URL cannot hold in a password: the value is not a URL at all.
      `postgres://alttext:${secret}/x@[db/alttext`,
      `postgres://alttext:${secret}@db.internal/alttext#${secret}`,
    ]
    for (const value of bad) {
      let error: unknown
      try {
        loadConfig({ ALTTEXT_DATABASE_URL: value })
      } catch (caught) {
        error = caught
      }
      expect({ value, error }).toMatchObject({ value, error: expect.any(ConfigError) })
      expect((error as ConfigError).variable).toBe('ALTTEXT_DATABASE_URL')
      expect((error as ConfigError).message).not.toContain(secret)
    }
  })

  test('bounds are inclusive: PORT 65535 and ALTTEXT_MODEL_CONCURRENCY 1 are accepted, 65536 is not', () => {
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535)
    expect(loadConfig({ ALTTEXT_MODEL_CONCURRENCY: '1' }).modelConcurrency).toBe(1)
    expect(() => loadConfig({ PORT: '65536' })).toThrow(ConfigError)
  })

  test('ALTTEXT_BATCH_LEASE_SECONDS: 60 by default, 5 to 3600 accepted', () => {
    expect(loadConfig({}).batchLeaseSeconds).toBe(60)
    expect(loadConfig({ ALTTEXT_BATCH_LEASE_SECONDS: '5' }).batchLeaseSeconds).toBe(5)
    expect(loadConfig({ ALTTEXT_BATCH_LEASE_SECONDS: '3600' }).batchLeaseSeconds).toBe(3600)
  })
})

describe('each entry of VARIABLES: the --help line, the default and the range are the ones enforced', () => {
  // Generated from the table: a variable added to it is tested here without a line more.
  let help: string[]
  beforeAll(async () => {
    const { code, stdout } = await runCommand(['--help'])
    expect(code).toBe(0)
    help = stdout.split('\n')
  })

  test.each(Object.entries(VARIABLES).map(([key, variable]) => [variable.name, key, variable] as const))('%s', (name, key, variable) => {
    const valueIn = (env: Record<string, string>): unknown => (loadConfig(env) as Record<string, unknown>)[key]
    const line = help.find((candidate) => candidate.startsWith(`  ${name} `))
    expect(line?.replace(/^ {2}\S+ +/, '')).toBe(`${variable.meaning} [default: ${variable.default}]`)
    // A range the line claims is the range read() enforces; a variable without one claims none.
    const claimed = [...(line!.match(/\d+-\d+/g) ?? [])]
    const range = variable.range && `${variable.range.min}-${variable.range.max}`
    expect({ name, claimed }).toEqual({ name, claimed: claimed.map(() => range ?? 'no range') })
    if ('fallback' in variable) expect(valueIn({})).toEqual(variable.fallback)
    if (!variable.range) return
    const { min, max } = variable.range
    expect(valueIn({ [name]: String(min) })).toBe(min)
    expect(valueIn({ [name]: ` ${max} ` })).toBe(max)
    expect(() => loadConfig({ [name]: String(max + 1) })).toThrow(`${name}: must be between ${min} and ${max}, got ${max + 1}`)
    expect(() => loadConfig({ [name]: String(min - 1) })).toThrow(
      min > 0 ? `${name}: must be between ${min} and ${max}, got ${min - 1}` : `${name}: must be a whole number, got "-1"`,
    )
  })
})

describe('ALTTEXT_DATABASE_URL that cannot be reached', () => {
  test('serve exits 1 naming the variable, host, port and database, opening no SQLite file and showing no password', async () => {
    const tag = 'database-url-unreachable'
    const secret = 'pg-secret-5e7a'
    const { code, stdout, stderr } = await runCommand(
      ['serve'],
      envWith({ ALTTEXT_DATABASE_URL: `postgres://alttext:${secret}@127.0.0.1:9/alttext` }, tag),
      GUARDED_COMMAND,
    )
    expect(code).toBe(1)
    expect(stderr).toContain('ALTTEXT_DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:9/alttext')
    expect(stdout + stderr).not.toContain('"msg":"listening"')
    expect(stdout + stderr).not.toContain(secret)
    expect(existsSync(join(tmp, tag))).toBe(false)
  }, 30_000)
})

describe('unknown commands', () => {
  test('an unknown command exits 2 and says so', async () => {
    const { code, stderr } = await runCommand(['frobnicate'], envWith({}, 'unknown-command'), GUARDED_COMMAND)
    expect(code).toBe(2)
    expect(stderr).toContain('frobnicate')
  }, 30_000)

  test('an unknown option exits 2', async () => {
    const { code } = await runCommand(['--no-such-option'], envWith({}, 'unknown-option'), GUARDED_COMMAND)
    expect(code).toBe(2)
  }, 30_000)

  test('extra arguments after serve exit 2', async () => {
    const { code } = await runCommand(['serve', 'extra'], envWith({}, 'serve-extra'), GUARDED_COMMAND)
    expect(code).toBe(2)
  }, 30_000)
})
