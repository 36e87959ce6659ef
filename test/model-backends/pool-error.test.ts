// Failures in a pool: a host that fails before any answer arrived is replaced once by another, charged
// once; a host taken out comes back after its backoff when its health check passes.
import { afterEach, describe, expect, test } from 'bun:test'
import { MAX_MODEL_ANSWER_BYTES } from '../../src/shared/limits'
import { waitUntil } from '../support/service'
import { startPoolEnv, type PoolEnv } from './pool-env'

let env: PoolEnv | undefined
afterEach(async () => {
  await env?.stop()
  env = undefined
})

describe('failover before the first answer', () => {
  test('a host refusing connections: the call is retried on another host, charged once', async () => {
    env = await startPoolEnv(['stopped', {}])
    for (let i = 0; i < 4; i++) expect((await env.generate()).status).toBe(200)
    expect(env.chats()[1]).toBe(4)
    expect(await env.creditsUsed()).toBe(4)
    expect(env.service.logs.some((l) => l.msg === 'model host taken out' && l.host === env!.hosts[0]!.url)).toBe(true)
    expect((await env.service.api.get('/ready')).body.hosts).toEqual({ healthy: 1, total: 2 })
  })

  test('a host answering 5xx: retried on another host, never charged twice', async () => {
    env = await startPoolEnv([{ failStatus: 503 }, {}])
    for (let i = 0; i < 4; i++) expect((await env.generate()).status).toBe(200)
    const [failing, good] = env.chats()
    expect(failing).toBeGreaterThan(0)
    expect(good).toBe(4)
    expect(await env.creditsUsed()).toBe(4)
  })

  test('a host answering invalid JSON (cut off, an HTML page, a broken stream line, a dropped body): retried on another host, charged once', async () => {
    for (const malformed of ['truncated-json', 'html', 'bad-stream-line', 'cut-off'] as const) {
      env = await startPoolEnv([{ malformed }, {}])
      for (let i = 0; i < 4; i++) expect((await env.generate()).status).toBe(200)
      const [failing, good] = env.chats()
      expect(failing).toBeGreaterThan(0)
      expect(good).toBe(4)
      expect(await env.creditsUsed()).toBe(4)
      await env.stop()
      env = undefined
    }
  })

  for (const streamed of [false, true]) {
    test(`a host answering over the byte cap${streamed ? ' (streamed)' : ''}: retried on another host, every call 200, charged once each`, async () => {
      env = await startPoolEnv([{ hugeReply: { bytes: MAX_MODEL_ANSWER_BYTES + 1024 * 1024, streamed } }, {}])
      for (let i = 0; i < 4; i++) expect((await env.generate()).status).toBe(200)
      const [huge, good] = env.chats()
      expect(huge).toBeGreaterThan(0)
      expect(good).toBe(4)
      expect(await env.creditsUsed()).toBe(4)
      expect(env.service.logs.some((l) => l.msg === 'model host failed before answering; trying another' && l.host === env!.hosts[0]!.url)).toBe(true)
    })
  }

  test('every host answering invalid JSON: 502, nothing charged', async () => {
    env = await startPoolEnv([{ malformed: 'truncated-json' }, { malformed: 'html' }])
    const res = await env.generate()
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect(await env.creditsUsed()).toBe(0)
  })

  test('every host failing: 502, nothing charged', async () => {
    env = await startPoolEnv([{ failStatus: 500 }, { failStatus: 500 }])
    const res = await env.generate()
    expect(res.status).toBe(502)
    expect(await env.creditsUsed()).toBe(0)
  })
})

describe('a host coming back', () => {
  test('taken out by a failed health check, probed back in after its backoff', async () => {
    env = await startPoolEnv([{}, { models: [] }])
    expect((await env.service.api.get('/ready')).body.hosts).toEqual({ healthy: 1, total: 2 })
    env.hosts[1]!.behave({ models: ['llava:latest'] })
    await waitUntil(() => env!.service.logs.some((l) => l.msg === 'model host back' && l.host === env!.hosts[1]!.url), 'the host comes back')
    expect((await env.service.api.get('/ready')).body.hosts).toEqual({ healthy: 2, total: 2 })
    for (let i = 0; i < 4; i++) expect((await env.generate()).status).toBe(200)
    expect(env.chats()[1]).toBeGreaterThan(0)
  })
})
