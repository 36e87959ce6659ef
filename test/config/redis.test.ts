// ALTTEXT_REDIS_URL: the forms of the decisions are accepted, anything else stops start-up with exit code 2
// and a message naming the variable, and no message ever repeats the URL's password.
import { describe, expect, test } from 'bun:test'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../src/config'
import { runCommand, SOURCE_COMMAND } from '../support/process'

describe('ALTTEXT_REDIS_URL', () => {
  test('alttext --help lists it', async () => {
    const { code, stdout } = await runCommand(['--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/(^|\s)ALTTEXT_REDIS_URL\b/m)
  })

  test('unset by default: limits are kept per process', () => {
    expect(loadConfig({}).redisUrl).toBeUndefined()
    expect(loadConfig({ ALTTEXT_REDIS_URL: '  ' }).redisUrl).toBeUndefined()
    expect(CONFIG_VARIABLES.find((variable) => variable.name === 'ALTTEXT_REDIS_URL')?.default).toBe('unset')
  })

  test.each([
    'redis://127.0.0.1:6379',
    'redis://cache.internal',
    'redis://cache.internal:6379/2',
    'redis://:p%40ss@cache.internal:6379/0',
    'redis://alttext:secret@cache.internal:6380',
    'rediss://alttext:secret@cache.internal:6380/15',
    'redis://[::1]:6379',
  ])('accepts %p', (url) => {
    expect(loadConfig({ ALTTEXT_REDIS_URL: ` ${url} ` }).redisUrl).toBe(url)
  })

  test.each([
    ['not a url', 'must be a URL'],
    ['http://cache.internal:6379', 'must use redis or rediss'],
    ['valkey://cache.internal:6379', 'must use redis or rediss'],
    ['redis:///0', 'names no host'],
    ['redis://cache.internal:6379/cache', 'database number'],
    ['redis://cache.internal:6379/1/2', 'database number'],
    ['redis://cache.internal:6379/0?timeout=5', 'takes no query'],
    ['redis://cache.internal:6379#x', 'takes no query'],
  ])('refuses %p', (url, message) => {
    let error: unknown
    try {
      loadConfig({ ALTTEXT_REDIS_URL: url })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('ALTTEXT_REDIS_URL')
    expect((error as ConfigError).message).toContain(message)
  })

  test('a bad URL stops start-up with exit code 2, naming the variable and never its password', async () => {
    const password = 'hunter2-in-a-bad-url'
    const { code, stdout, stderr } = await runCommand(
      ['serve'],
      {
        PORT: '0',
        HOST: '127.0.0.1',
        ALTTEXT_DB: join(tmpdir(), `alttext-redis-config-${process.pid}`, 'never-created.db'),
        ALTTEXT_REDIS_URL: `redis://alttext:${password}@cache.internal:6379/not-a-number`,
      },
      ['timeout', '-s', 'KILL', '15', ...SOURCE_COMMAND],
    )
    expect(code).toBe(2)
    expect(stderr).toContain('ALTTEXT_REDIS_URL')
    expect(stdout + stderr).not.toContain(password)
    expect(stdout + stderr).not.toContain('"msg":"listening"')
  }, 30_000)
})
