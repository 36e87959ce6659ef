// Whose cached answers an account may get (ALTTEXT_CACHE_SCOPE): by default only its own, so that a new
// account neither gets another's answer for free nor learns which images another account described;
// `shared`, an operator's opt-in for a single organisation, serves every account from one cache.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'

const used = async (env: AltTextEnv, key: string) => (await env.service.api.get('/api/usage', key)).body.credits.used as number

describe('by default (ALTTEXT_CACHE_SCOPE=account)', () => {
  let env: AltTextEnv
  beforeAll(async () => {
    env = await startAltTextEnv()
  })
  afterAll(() => env.stop())

  test("another account's cached answer is not served: the new account's request is generated and charged", async () => {
    const url = env.serve(makePng(71, 53))
    const first = await env.generate({ image_url: url })
    expect([first.status, first.body.cached]).toEqual([200, false])

    const other = await env.service.api.register()
    const calls = env.ollama.chatRequests().length
    const theirs = await env.generate({ image_url: url }, other.apiKey)
    expect([theirs.status, theirs.body.cached]).toEqual([200, false])
    expect(env.ollama.chatRequests().length).toBe(calls + 1)
    expect(await used(env, other.apiKey)).toBe(1)

    // Each account's own repeat is a free cache hit.
    for (const key of [env.key, other.apiKey]) {
      const again = await env.generate({ image_url: url }, key)
      expect([again.status, again.body.cached]).toEqual([200, true])
    }
    expect(env.ollama.chatRequests().length).toBe(calls + 1)
    expect(await used(env, env.key)).toBe(1)
    expect(await used(env, other.apiKey)).toBe(1)
  })

  test("an identical request of another account under way is not shared either: each account's is generated", async () => {
    const url = env.serve(makePng(72, 54))
    const other = await env.service.api.register()
    env.ollama.behave({ hang: true })
    const calls = env.ollama.chatRequests().length
    const mine = env.generate({ image_url: url })
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
    const theirs = env.generate({ image_url: url }, other.apiKey)
    await env.ollama.waitFor(() => env.ollama.inFlight() === 2)
    env.ollama.behave({ hang: false })
    env.ollama.release()
    const answers = await Promise.all([mine, theirs])
    expect(answers.map((res) => [res.status, res.body.cached])).toEqual([
      [200, false],
      [200, false],
    ])
    expect(env.ollama.chatRequests().length).toBe(calls + 2)
  })
})

describe('ALTTEXT_CACHE_SCOPE=shared', () => {
  let env: AltTextEnv
  beforeAll(async () => {
    env = await startAltTextEnv({ env: { ALTTEXT_CACHE_SCOPE: 'shared' } })
  })
  afterAll(() => env.stop())

  test("serves every account from one cache: another account's answer is cached: true and free", async () => {
    const url = env.serve(makePng(73, 55))
    expect((await env.generate({ image_url: url })).body.cached).toBe(false)
    const other = await env.service.api.register()
    const calls = env.ollama.chatRequests().length
    const theirs = await env.generate({ image_url: url }, other.apiKey)
    expect([theirs.status, theirs.body.cached]).toEqual([200, true])
    expect(env.ollama.chatRequests().length).toBe(calls)
    expect(await used(env, other.apiKey)).toBe(0)
  })
})
