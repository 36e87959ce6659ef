// kill -9 in the middle of a 100-item batch, then a restart on the same database file: the batch resumes
// by itself and completes; every item is done exactly once, the answers given before the kill are
// unchanged, and the credits charged are exactly the fresh answers (an item cut off after its model call
// but before its charge comes back from the cache, free; none is charged twice).
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type FakeOllama, startFakeOllama } from '../support/fake-ollama'
import { type HttpsImageServer, startHttpsImageServer } from '../support/https-image-server'
import { makePng } from '../support/images'
import { type ServiceProcess, spawnService } from '../support/process'
import { sqliteOnly } from '../support/postgres'
import { apiClient, waitUntil } from '../support/service'
import { batchClient } from './support'

const ITEMS = 100

let ollama: FakeOllama
let images: HttpsImageServer
let dir: string
let dbPath: string
const processes: ServiceProcess[] = []

beforeAll(async () => {
  ;[ollama, images] = await Promise.all([startFakeOllama({ delayMs: 40, reply: 'A lighthouse on a rocky coast at dusk.' }), startHttpsImageServer()])
  dir = mkdtempSync(join(tmpdir(), 'alttext-batch-crash-'))
  dbPath = join(dir, 'alttext.db')
})
afterAll(async () => {
  for (const p of processes) {
    if (p.proc.exitCode === null && p.proc.signalCode === null) {
      p.proc.kill('SIGKILL')
      await p.exited
    }
  }
  await Promise.all([ollama.stop(), images.stop()])
  rmSync(dir, { recursive: true, force: true })
})

async function start(): Promise<ServiceProcess> {
  const service = await spawnService({
    ALTTEXT_DB: dbPath,
    OLLAMA_HOST: ollama.url,
    ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: images.caPath,
    ALTTEXT_RATE_LIMITS: 'off',
    ALTTEXT_FREE_CREDITS: '1000',
    ALTTEXT_MODEL_CONCURRENCY: '4',
  })
  processes.push(service)
  return service
}

type Item = { index: number; status: string; result?: { alt_text: string; cached: boolean }; metadata: { n: number } }

sqliteOnly(
  "a restart on the same SQLite file ends the killed process's claims at once and checks the file's integrity; PostgreSQL's takeover after the lease is in test/batches/lease.test.ts",
)(
  'kill -9 mid-batch and restart: every item done exactly once, charged == fresh answers, results complete',
  async () => {
    const first = await start()
    const api = apiClient(first.url)
    const account = await api.register()
    const batches = batchClient(api, account.apiKey)
    const items = Array.from({ length: ITEMS }, (_, n) => ({
      // Distinct images: every item is a fresh generation unless the crash left its answer in the cache.
      image_url: images.route(`/batch-crash-${n}.png`, { kind: 'bytes', body: makePng(20 + n, 11) }),
      metadata: { n },
    }))
    const created = await batches.create({ items })
    expect(created.status).toBe(202)
    const id: string = created.body.id

    // Kill with answers in and model calls under way.
    let before: Item[] = []
    await waitUntil(
      async () => {
        const view = await batches.get(id)
        before = view.body.items
        return view.body.succeeded >= 30 && ollama.inFlight() > 0
      },
      '30 items done and model calls under way',
      30_000,
    )
    first.proc.kill('SIGKILL')
    await first.exited
    expect(first.proc.signalCode).toBe('SIGKILL')
    const doneBefore = before.filter((item) => item.status === 'done')
    expect(doneBefore.length).toBeGreaterThanOrEqual(30)
    expect(doneBefore.length).toBeLessThan(ITEMS)

    // Restart on the same file: the batch resumes without being asked.
    const second = await start()
    expect(second.output()).toContain('pending again')
    const api2 = apiClient(second.url)
    const batches2 = batchClient(api2, account.apiKey)
    const ended = await batches2.ended(id, 60_000)
    expect(ended.body).toMatchObject({ id, status: 'completed', total: ITEMS, succeeded: ITEMS, failed: 0 })

    const after: Item[] = ended.body.items
    expect(after.map((item) => item.index)).toEqual(Array.from({ length: ITEMS }, (_, n) => n))
    expect(after.map((item) => item.metadata.n)).toEqual(Array.from({ length: ITEMS }, (_, n) => n))
    for (const item of after) {
      expect(item.status).toBe('done')
      expect(item.result!.alt_text).toBe('A lighthouse on a rocky coast at dusk.')
    }
    // Answers given before the kill are the ones kept: not redone, not charged again.
    for (const item of doneBefore) expect(after[item.index]).toEqual(item)

    const fresh = after.filter((item) => !item.result!.cached).length
    const usage = await api2.get('/api/usage', account.apiKey)
    expect(usage.body.credits.used).toBe(fresh)
    expect(fresh).toBeGreaterThanOrEqual(ITEMS - 4 * 2)

    second.proc.kill('SIGTERM')
    await second.exited
    const db = new Database(dbPath, { readonly: true })
    try {
      expect(db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }])
      const rows = db
        .query<{ status: string; n: number; charged: number }, [string]>(
          'SELECT status, count(*) AS n, sum(charged) AS charged FROM batch_items WHERE batch_id = ? GROUP BY status',
        )
        .all(id)
      expect(rows).toEqual([{ status: 'done', n: ITEMS, charged: fresh }])
      const used = db.query<{ used: number }, []>('SELECT sum(used) AS used FROM credit_usage').get()!.used
      expect(used).toBe(fresh)
    } finally {
      db.close()
    }
  },
  120_000,
)
