// ALTTEXT_MODEL_HOSTS: calls spread over the healthy hosts, least-loaded first, each host with its own concurrency.
import { afterEach, describe, expect, test } from 'bun:test'
import { startPoolEnv, type PoolEnv } from './pool-env'

let env: PoolEnv | undefined
afterEach(async () => {
  await env?.stop()
  env = undefined
})

describe('a pool of model hosts', () => {
  test('concurrent calls go one to each idle host (least-loaded first)', async () => {
    env = await startPoolEnv([{ delayMs: 300 }, { delayMs: 300 }, { delayMs: 300 }], { ALTTEXT_MODEL_CONCURRENCY: '1' })
    const answers = await Promise.all([env.generate(), env.generate(), env.generate()])
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
    expect(env.chats()).toEqual([1, 1, 1])
    expect(await env.creditsUsed()).toBe(3)
  })

  test('per-host concurrency: three hosts at 1 each run three calls at once', async () => {
    env = await startPoolEnv([{ hang: true }, { hang: true }, { hang: true }], { ALTTEXT_MODEL_CONCURRENCY: '1' })
    const answers = Promise.all([env.generate(), env.generate(), env.generate()])
    // All three are held by their hosts at the same time: none waited for another to finish.
    await Promise.all(env.hosts.map((host) => host.waitFor(() => host.inFlight() === 1)))
    for (const host of env.hosts) host.release()
    expect((await answers).every((a) => a.status === 200)).toBe(true)
    expect(env.chats()).toEqual([1, 1, 1])
  })

  test('one stopped, one slow, one failing: after /ready, all traffic goes to the slow healthy host', async () => {
    env = await startPoolEnv(['stopped', { delayMs: 200 }, { models: [], failStatus: 500 }])
    const ready = await env.service.api.get('/ready')
    expect(ready.status).toBe(200)
    expect(ready.body.hosts).toEqual({ healthy: 1, total: 3 })
    for (let i = 0; i < 4; i++) expect((await env.generate()).status).toBe(200)
    expect(env.chats()).toEqual([0, 4, 0])
    expect(await env.creditsUsed()).toBe(4)
  })

  test('a lone OLLAMA_HOST is a pool of one', async () => {
    env = await startPoolEnv([{}])
    expect((await env.generate()).status).toBe(200)
    expect((await env.service.api.get('/ready')).body.hosts).toEqual({ healthy: 1, total: 1 })
  })
})
