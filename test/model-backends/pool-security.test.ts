// /ready counts the pool's hosts without naming them; the operator log names them.
import { afterEach, describe, expect, test } from 'bun:test'
import { startPoolEnv, type PoolEnv } from './pool-env'

let env: PoolEnv | undefined
afterEach(async () => {
  await env?.stop()
  env = undefined
})

const leaks = (text: string, e: PoolEnv) => text.includes('127.0.0.1') || e.hosts.some((h) => text.includes(String(h.port)))

describe('/ready of a pool', () => {
  test('counts healthy hosts without addresses', async () => {
    env = await startPoolEnv(['stopped', {}, {}])
    const res = await env.service.api.get('/ready')
    expect(res.status).toBe(200)
    expect(res.body.hosts).toEqual({ healthy: 2, total: 3 })
    expect(leaks(res.text, env)).toBe(false)
    expect(env.service.logs.some((l) => l.msg === 'model host taken out' && l.host === env!.hosts[0]!.url)).toBe(true)
  })

  test('no healthy host: 503 not_ready, still without addresses', async () => {
    env = await startPoolEnv(['stopped', 'stopped'])
    const res = await env.service.api.get('/ready')
    expect(res.status).toBe(503)
    expect(res.body.hosts).toEqual({ healthy: 0, total: 2 })
    expect(leaks(res.text, env)).toBe(false)
  })
})
