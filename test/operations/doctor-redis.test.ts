// `alttext doctor` with ALTTEXT_REDIS_URL: the server answers and is Redis 7 or newer, this user may run
// the limits' scripts and write, a round trip is timed; a wrong password, a stopped server and a user an
// ACL keeps from scripts fail with a fix; the URL's password is never shown. Against Debian's redis-server
// on loopback (under CI=true it must be there).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { RedisClient } from 'bun'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { redisTestsRun, startRedis, type TestRedis } from '../support/redis'
import { freshDir, makeDatabase } from './backup-support'
import { byId, doctorJson, doctorText, healthyEnv } from './doctor-support'

setDefaultTimeout(30_000)

const PASSWORD = 'redis-doctor-pw-41c7'

describe.skipIf(!redisTestsRun('doctor-redis.test.ts'))('alttext doctor with ALTTEXT_REDIS_URL', () => {
  let dir: string
  let fake: FakeOllama
  let redis: TestRedis
  const envWith = (redisUrl: string) => ({ ...healthyEnv(dir, fake.url), ALTTEXT_REDIS_URL: redisUrl })

  beforeAll(async () => {
    dir = freshDir('doctor-redis')
    await makeDatabase(`${dir}/alttext.db`, 1)
    fake = await startFakeOllama({ models: ['llava:latest'], reply: 'A red square on a white background.' })
    redis = await startRedis({ password: PASSWORD })
  })
  afterAll(async () => {
    await fake.stop()
    await redis.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('a Redis that answers: its version, a script and a write, and the round trip pass; no password shown', async () => {
    const run = await doctorText(envWith(redis.url))
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.line('redis')).toMatch(
      new RegExp(`^PASS {2}redis: Redis \\d+\\.\\d+\\.\\d+ at redis://127\\.0\\.0\\.1:${redis.port}; a script ran and a write committed$`),
    )
    expect(run.line('redis round trip')).toMatch(/^PASS {2}redis round trip: median \d+\.\d\d ms, slowest \d+\.\d\d ms over 10 round trips$/)
    expect(run.stdout).not.toContain(PASSWORD)
    const json = await doctorJson(envWith(redis.url))
    expect(byId(json.report, 'redis_latency')[0]!.ms).toEqual(expect.any(Number))
  })

  test('a wrong password fails with the fix for credentials, and shows neither password', async () => {
    const wrong = 'not-the-password-93'
    const run = await doctorText(envWith(`redis://:${wrong}@127.0.0.1:${redis.port}`))
    expect(run.code).toBe(1)
    expect(run.line('redis')).toStartWith(`FAIL  redis: Redis at redis://127.0.0.1:${redis.port} answers, but refused this connection`)
    expect(run.line('redis')).toContain('fix: check the user and password in ALTTEXT_REDIS_URL')
    expect(run.stdout).not.toContain(wrong)
    expect(run.stdout).not.toContain(PASSWORD)
  })

  test('a user an ACL keeps from scripts fails, saying what to allow', async () => {
    const admin = new RedisClient(redis.url)
    try {
      await admin.send('ACL', ['SETUSER', 'limited', 'on', '>limited-pw-77', '~*', '+@read', '+@write', '+@connection', '+info', '-@scripting'])
    } finally {
      admin.close()
    }
    const run = await doctorText(envWith(`redis://limited:limited-pw-77@127.0.0.1:${redis.port}`))
    expect(run.code).toBe(1)
    expect(run.line('redis')).toMatch(/^FAIL {2}redis: Redis \S+ at redis:\/\/127\.0\.0\.1:\d+ refused: /)
    expect(run.line('redis')).toContain('fix: allow this user scripts and writes')
    expect(run.stdout).not.toContain('limited-pw-77')
  })

  test('a stopped Redis fails, and its round trip is skipped', async () => {
    await redis.stop()
    try {
      const run = await doctorText(envWith(redis.url))
      expect(run.code).toBe(1)
      expect(run.line('redis')).toStartWith(`FAIL  redis: cannot reach Redis at redis://127.0.0.1:${redis.port}`)
      expect(run.line('redis')).toContain('fix: start Redis, or correct the host and port in ALTTEXT_REDIS_URL')
      expect(run.line('redis round trip')).toStartWith('SKIP')
      expect(run.stdout).not.toContain(PASSWORD)
    } finally {
      await redis.start()
    }
  })

  test('without ALTTEXT_REDIS_URL on SQLite, no Redis line at all', async () => {
    const run = await doctorText(healthyEnv(dir, fake.url))
    expect(run.line('redis')).toBeUndefined()
    expect(run.line('redis round trip')).toBeUndefined()
  })
})
