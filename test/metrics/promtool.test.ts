// GET /metrics passes Prometheus's own linter, `promtool check metrics` (Debian's `prometheus` package),
// after traffic that fills every kind of series: requests, a generation's stages, the cache, the queue,
// the event loop. Without promtool the test fails under CI (CI=true) and says loudly that it was skipped
// elsewhere.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { scrape } from '../support/metrics'

const PROMTOOL = Bun.which('promtool')
const inCi = process.env.CI === 'true'

let env: AltTextEnv | undefined

beforeAll(async () => {
  if (PROMTOOL === null) {
    if (!inCi) console.warn('[promtool test] SKIPPED: promtool is not installed (apt install prometheus); under CI=true this fails')
    return
  }
  env = await startAltTextEnv()
})
afterAll(() => env?.stop())

test.if(PROMTOOL !== null || inCi)('promtool check metrics accepts the exposition', async () => {
  if (PROMTOOL === null) throw new Error('promtool is not installed: install Debian\'s "prometheus" package (it provides /usr/bin/promtool)')
  const current = env!
  const url = current.serve(makePng(44, 33))
  expect((await current.generate({ image_url: url })).status).toBe(200)
  expect((await current.generate({ image_url: url })).body.cached).toBe(true)
  expect((await current.service.api.get('/no/such/path')).status).toBe(404)

  const metrics = await scrape(current.service.url)
  expect(metrics.status).toBe(200)
  const check = Bun.spawn([PROMTOOL, 'check', 'metrics'], { stdin: new TextEncoder().encode(metrics.text), stdout: 'pipe', stderr: 'pipe' })
  const [code, stdout, stderr] = await Promise.all([check.exited, new Response(check.stdout).text(), new Response(check.stderr).text()])
  expect({ code, problems: `${stdout}${stderr}`.trim() }).toEqual({ code: 0, problems: '' })
})
