// Credit holds are rows every process counts. Holds of a process killed with SIGKILL count, for any other
// process on the database, until they lapse (CREDIT_HOLD_SECONDS, reached here by injected time); SQLite's
// next serving process drops them at its start. Concurrent generations, single requests and batch items
// together, never charge more than the account has, nor leave holds behind.
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CREDIT_HOLD_MS } from '../../src/shared/limits'
import { batchClient } from '../batches/support'
import { startAltTextEnv } from '../support/alt-text-env'
import { startFakeOllama } from '../support/fake-ollama'
import { startHttpsImageServer } from '../support/https-image-server'
import { makePng } from '../support/images'
import { sqliteOnly } from '../support/postgres'
import { spawnService } from '../support/process'
import { apiClient, startTestService } from '../support/service'
import { createSqliteStore } from '../../src/store/sqlite/store'

const dir = mkdtempSync(join(tmpdir(), 'alttext-credit-holds-'))
const stops: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
  rmSync(dir, { recursive: true, force: true })
})

const holdRows = (dbPath: string) => {
  const db = new Database(dbPath, { readonly: true })
  try {
    return db.query<{ n: number }, []>('SELECT count(*) AS n FROM credit_holds').get()!.n
  } finally {
    db.close()
  }
}

sqliteOnly("SQLite's next serving process frees a killed process's holds at its start; on PostgreSQL they lapse (test/store/claims.test.ts)")(
  'the holds of a process killed mid-generation count until they lapse; the next serving process frees them at its start',
  async () => {
    const ollama = await startFakeOllama({ reply: 'A lighthouse on a rocky coast at dusk.', hang: true })
    const images = await startHttpsImageServer()
    stops.push(() => Promise.all([ollama.stop(), images.stop()]))
    const dbPath = join(dir, 'alttext.db')
    const env = {
      ALTTEXT_DB: dbPath,
      OLLAMA_HOST: ollama.url,
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: images.caPath,
      ALTTEXT_RATE_LIMITS: 'off',
      ALTTEXT_FREE_CREDITS: '2',
    }
    const first = await spawnService(env)
    stops.push(async () => {
      if (first.proc.exitCode === null && first.proc.signalCode === null) first.proc.kill('SIGKILL')
      await first.exited
    })
    const api = apiClient(first.url)
    const account = await api.register()
    const image = (n: number) => images.route(`/holds-${n}.png`, { kind: 'bytes', body: makePng(60 + n, 30) })
    // Both credits held by generations at the model when the process dies.
    const cut = [0, 1].map((n) => api.post('/api/alt-text', { image_url: image(n) }, account.apiKey).catch(() => null))
    await ollama.waitFor(() => ollama.inFlight() === 2)
    first.proc.kill('SIGKILL')
    await first.exited
    await Promise.all(cut)
    expect(holdRows(dbPath)).toBe(2)

    // Another process sharing the database counts them until they lapse.
    const db = new Database(dbPath, { readonly: true })
    const dead = db.query<{ account_id: number; period: string; expires_at: number }, []>('SELECT account_id, period, expires_at FROM credit_holds').all()
    db.close()
    const lapse = Math.min(...dead.map((hold) => hold.expires_at))
    const { account_id: accountId, period } = dead[0]!
    const other = createSqliteStore(dbPath)
    try {
      expect(await other.credits.hold(accountId, period, 2, lapse - 1, lapse + CREDIT_HOLD_MS)).toMatchObject({ kind: 'exhausted' })
      const held = await other.credits.hold(accountId, period, 2, lapse + CREDIT_HOLD_MS, lapse + 2 * CREDIT_HOLD_MS)
      expect(held).toBeNumber()
      await other.credits.releaseHold(held as number)
    } finally {
      other.close()
    }

    // SQLite's next serving process knows they are dead: the credits are free at once, as the answers were never given.
    ollama.behave({ hang: false })
    ollama.release()
    const second = await startTestService({ env, dir })
    stops.push(() => second.stop())
    const answered = await second.api.post('/api/alt-text', { image_url: image(2) }, account.apiKey)
    expect(answered.status).toBe(200)
    expect(answered.body).toMatchObject({ cached: false, credits_remaining: 1 })
    expect((await second.api.get('/api/usage', account.apiKey)).body.credits).toEqual({ total: 2, used: 1, remaining: 1 })
    expect(holdRows(dbPath)).toBe(0)
  },
  60_000,
)

test('2N concurrent generations (single requests and batch items) on N credits: N charged, one per fresh answer, no hold left', async () => {
  const N = 4
  const env = await startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: String(N) }, ollama: { delayMs: 100 } })
  stops.push(() => env.stop())
  let size = 400
  const fresh = () => env.serve(makePng(++size, 20))
  const batches = batchClient(env.service.api, env.key)
  const [created, ...single] = await Promise.all([
    batches.create({ items: Array.from({ length: N }, () => ({ image_url: fresh() })) }),
    ...Array.from({ length: N }, () => env.generate({ image_url: fresh() })),
  ])
  expect(created!.status).toBe(202)
  const ended = await batches.ended(created!.body.id)

  const answeredSingly = single.filter((r) => r.status === 200)
  for (const r of single.filter((r) => r.status !== 200)) expect(r.body.error.code).toBe('quota_exceeded')
  const doneItems = ended.body.items.filter((item: { status: string }) => item.status === 'done')
  for (const item of ended.body.items.filter((item: { status: string }) => item.status !== 'done')) expect(item.error.code).toBe('quota_exceeded')
  const freshAnswers =
    answeredSingly.filter((r) => !r.body.cached).length + doneItems.filter((item: { result: { cached: boolean } }) => !item.result.cached).length
  expect(freshAnswers).toBe(N)
  expect((await env.service.api.get('/api/usage', env.key)).body.credits).toEqual({ total: N, used: N, remaining: 0 })
  expect((await env.service.query<{ n: number }>('SELECT count(*) AS n FROM credit_holds'))[0]!.n).toBe(0)
})
