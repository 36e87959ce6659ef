// A client that hangs up is neither a model failure nor a timeout: its model call is ended, nothing is
// charged, and the service logs no model error for it. An identical request that was waiting for the
// abandoned generation gets one of its own; requests waiting for one that fails share its failure.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { waitUntil } from '../support/service'

let env: AltTextEnv
let size = 900

beforeAll(async () => {
  env = await startAltTextEnv()
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const freshImage = () => env.serve(makePng(++size, 30))

/** POST /api/alt-text that the test can hang up on; `done` settles with the status, or 'hung up'. */
function abandonable(body: Record<string, unknown>, key: string) {
  const controller = new AbortController()
  const done = fetch(`${env.service.url}/api/alt-text`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
    signal: controller.signal,
  }).then(
    (res) => res.status,
    () => 'hung up' as const,
  )
  return { hangUp: () => controller.abort(), done }
}

/** Lines that end a request: the access line, the HTTP layer's hang-up or error line, or a model failure. */
const isEnding = (line: Record<string, unknown>) =>
  (line.msg === 'request' && line.path === '/api/alt-text') || /client closed|model call|unhandled/.test(String(line.msg))

const usedBy = async (key: string) => (await env.service.api.get('/api/usage', key)).body.credits.used

describe('the client hangs up', () => {
  test('during the model call: the call is ended, nothing is charged, no model failure or timeout is logged', async () => {
    const { apiKey } = await env.service.api.register()
    env.ollama.behave({ hang: true })
    const from = env.service.logs.length
    const request = abandonable({ image_url: freshImage() }, apiKey)
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
    request.hangUp()
    expect(await request.done).toBe('hung up')
    await env.ollama.waitFor(() => env.ollama.aborted() === 1)
    await waitUntil(() => env.service.logs.slice(from).some(isEnding), 'the end of the abandoned request in the log')
    // The HTTP layer names the hang-up (an info line, with the stage), never an error.
    await waitUntil(() => env.service.logs.slice(from).some((line) => line.msg === 'client closed the connection'), 'the hang-up line')

    const logged = env.service.logs.slice(from)
    expect(logged.filter((line) => /model call/.test(String(line.msg)))).toEqual([])
    expect(JSON.stringify(logged)).not.toContain('did not answer')
    expect(logged.filter((line) => line.level === 'error')).toEqual([])
    expect(logged.find((line) => line.msg === 'client closed the connection')).toMatchObject({ level: 'info', stage: 'model' })
    expect(await usedBy(apiKey)).toBe(0)
  })

  test('while an identical request waits for its generation: that request gets its own, charged to it alone', async () => {
    const leader = await env.service.api.register()
    const follower = await env.service.api.register()
    const url = freshImage()
    env.ollama.behave({ hang: true })
    const first = abandonable({ image_url: url }, leader.apiKey)
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
    const second = env.generate({ image_url: url }, follower.apiKey)
    await env.images.waitForRequest(new URL(url).pathname, 2)
    env.ollama.behave({ hang: false })
    first.hangUp()

    const res = await second
    expect(res.status).toBe(200)
    expect(res.body.cached).toBe(false)
    expect(await first.done).toBe('hung up')
    expect(env.ollama.chatRequests().length).toBe(2)
    expect(await usedBy(leader.apiKey)).toBe(0)
    expect(await usedBy(follower.apiKey)).toBe(1)
  })
})

describe('identical requests waiting together', () => {
  const waitingSince = (from: number) => env.service.logs.slice(from).filter((line) => line.msg === 'waiting for an identical generation under way').length

  test('the leader hangs up while three wait: one new generation for the three, charged once', async () => {
    const { apiKey } = await env.service.api.register()
    const url = freshImage()
    env.ollama.behave({ hang: true })
    const from = env.service.logs.length
    const leader = abandonable({ image_url: url }, apiKey)
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
    const followers = [1, 2, 3].map(() => env.generate({ image_url: url }, apiKey))
    await waitUntil(() => waitingSince(from) === 3, 'three requests waiting for the first')
    env.ollama.behave({ hang: false })
    leader.hangUp()

    const answers = await Promise.all(followers)
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200])
    expect(answers.filter((res) => res.body.cached === false)).toHaveLength(1)
    expect(await leader.done).toBe('hung up')
    expect(env.ollama.chatRequests()).toHaveLength(2)
    expect(await usedBy(apiKey)).toBe(1)
  })

  test('the model fails while four wait: the five get the one failure, one model call, nothing charged; the next request tries again', async () => {
    const { apiKey } = await env.service.api.register()
    const url = freshImage()
    env.ollama.behave({ hang: true })
    const from = env.service.logs.length
    const first = env.generate({ image_url: url }, apiKey)
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
    const waiting = [1, 2, 3, 4].map(() => env.generate({ image_url: url }, apiKey))
    await waitUntil(() => waitingSince(from) === 4, 'four requests waiting for the first')
    env.ollama.release({ status: 500, message: 'llama runner process has terminated' })

    const answers = await Promise.all([first, ...waiting])
    expect(answers.map((res) => [res.status, res.body.error?.code])).toEqual(Array.from({ length: 5 }, () => [502, 'upstream_error']))
    expect(env.ollama.chatRequests()).toHaveLength(1)
    expect(await usedBy(apiKey)).toBe(0)

    env.ollama.reset()
    const again = await env.generate({ image_url: url }, apiKey)
    expect(again.status).toBe(200)
    expect(again.body.cached).toBe(false)
    expect(env.ollama.chatRequests()).toHaveLength(1)
    expect(await usedBy(apiKey)).toBe(1)
  })
})
