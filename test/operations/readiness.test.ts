// Readiness tells the truth: the database must take a write (a probe that commits), a damaged database
// refuses to start, the model check is cached and shared, and the public body names no address.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, openSync, rmSync, writeSync, closeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createOllamaProvider } from '../../src/model-provider/ollama'
import type { ModelHealth, ModelProvider } from '../../src/model-provider/provider'
import { createHealthService } from '../../src/modules/health/service'
import { createLogger } from '../../src/shared/logger'
import { createSqliteStore } from '../../src/store/sqlite/store'
import type { Store } from '../../src/store/contract'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { spawnService } from '../support/process'
import { startTestService, type TestService } from '../support/service'

let tmp: string
let fake: FakeOllama
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-ready-'))
  fake = await startFakeOllama({ models: ['llava:latest'] })
})
afterAll(async () => {
  await fake.stop()
  rmSync(tmp, { recursive: true, force: true })
})

const freshDir = (tag: string) => mkdtempSync(join(tmp, `${tag}-`))
const tagsCalls = () => fake.requests.filter((r) => r.path === '/api/tags').length
const showCalls = () => fake.requests.filter((r) => r.path === '/api/show').length

describe('the database check writes', () => {
  test('/ready is 503 when the write probe fails; /health still answers', async () => {
    const dir = freshDir('probe-fails')
    const real = createSqliteStore(join(dir, 'alttext.db'))
    const store: Store = {
      ...real,
      probe: async () => {
        throw new Error('database or disk is full')
      },
    }
    const service = await startTestService({ dir, env: { OLLAMA_HOST: fake.url }, overrides: { store } })
    try {
      const res = await service.api.get('/ready')
      expect(res.status).toBe(503)
      expect(res.body.error.code).toBe('not_ready')
      expect(res.body.checks.database).toEqual({ ok: false, detail: expect.stringContaining('disk is full') })
      expect(res.body.checks.model.ok).toBe(true)
      expect(res.body.error.message).toContain('database')
      expect((await service.api.get('/health')).status).toBe(200)
    } finally {
      await service.stop()
    }
  })

  test('the probe is a write that really commits: another connection sees it', async () => {
    const dbPath = join(freshDir('probe-commits'), 'alttext.db')
    const store = createSqliteStore(dbPath)
    try {
      const read = () => {
        const other = new Database(dbPath, { readonly: true })
        try {
          return other.query<{ checked_at: number }, []>('SELECT checked_at FROM health_probe').get()!.checked_at
        } finally {
          other.close()
        }
      }
      const before = read()
      await store.probe()
      expect(read()).toBeGreaterThan(before)
    } finally {
      store.close()
    }
  })

  test('the database locked by another connection fails the probe with a clear reason', async () => {
    const dbPath = join(freshDir('probe-locked'), 'alttext.db')
    const store = createSqliteStore(dbPath)
    const other = new Database(dbPath)
    try {
      other.exec('BEGIN IMMEDIATE')
      await expect(store.probe()).rejects.toThrow(/locked by another process/)
      other.exec('ROLLBACK')
      await store.probe()
    } finally {
      other.close()
      store.close()
    }
  })
})

describe('a damaged database refuses to start', () => {
  /** A database with accounts whose table page is then overwritten with garbage. */
  async function damagedDatabase(tag: string): Promise<{ dir: string; dbPath: string }> {
    const dir = freshDir(tag)
    const dbPath = join(dir, 'alttext.db')
    const service = await startTestService({ dir })
    for (let i = 0; i < 3; i++) await service.api.register()
    await service.stop() // checkpoints the WAL into the file
    const db = new Database(dbPath, { readonly: true })
    const { rootpage } = db.query<{ rootpage: number }, []>("SELECT rootpage FROM sqlite_master WHERE name = 'accounts'").get()!
    const pageSize = db.query<{ page_size: number }, []>('PRAGMA page_size').get()!.page_size
    db.close()
    const fd = openSync(dbPath, 'r+')
    writeSync(fd, new Uint8Array(pageSize).fill(0xa5), 0, pageSize, (rootpage - 1) * pageSize)
    closeSync(fd)
    return { dir, dbPath }
  }

  test('in process: start-up throws naming the file', async () => {
    const { dir, dbPath } = await damagedDatabase('damaged-in-process')
    let error: unknown
    try {
      const service = await startTestService({ dir })
      await service.stop()
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toContain(dbPath)
    expect((error as Error).message).toMatch(/damaged/)
  })

  test('the process exits non-zero without listening and says why', async () => {
    const { dbPath } = await damagedDatabase('damaged-process')
    let error: unknown
    try {
      const svc = await spawnService({ ALTTEXT_DB: dbPath })
      svc.proc.kill('SIGKILL')
      await svc.exited
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/exited with [1-9]/)
    expect((error as Error).message).toContain(`the database file ${dbPath} is damaged`)
  }, 30_000)
})

describe('the model check', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService({ env: { OLLAMA_HOST: fake.url, ALTTEXT_MODEL: 'llava' } })
  })
  afterAll(async () => {
    await service.stop()
  })

  test('three /ready hits, two of them at once, within the cache time cost the model server at most one check', async () => {
    expect((await service.api.get('/ready')).status).toBe(200)
    // Every check begun so far has finished (each is a /api/tags then a /api/show).
    await fake.waitFor(() => fake.inFlight() === 0 && showCalls() === tagsCalls())
    const before = tagsCalls()
    const answers = await Promise.all([service.api.get('/ready'), service.api.get('/ready')])
    answers.push(await service.api.get('/ready'))
    for (const res of answers) expect(res.status).toBe(200)
    expect(tagsCalls() - before).toBeLessThanOrEqual(1)
  })

  test('the public body names no address, whether ready, unreachable or missing the model', async () => {
    const ready = await service.api.get('/ready')
    expect(ready.status).toBe(200)
    expect(ready.body.checks.model).toEqual({ ok: true, detail: 'model llava present' })
    expect(ready.text).not.toContain('127.0.0.1')

    const unreachable = await startTestService({ env: { OLLAMA_HOST: 'http://127.0.0.1:9' } })
    const missing = await startFakeOllama({ models: ['moondream:latest'] })
    const lacking = await startTestService({ env: { OLLAMA_HOST: missing.url, ALTTEXT_MODEL: 'llava' } })
    try {
      for (const res of [await unreachable.api.get('/ready'), await lacking.api.get('/ready')]) {
        expect(res.status).toBe(503)
        expect(res.body.checks.model.ok).toBe(false)
        expect(res.text).not.toContain('127.0.0.1')
        expect(JSON.stringify(res.body.checks)).not.toContain('http')
        expect(res.body.error.message).not.toContain('http')
      }
      expect((await lacking.api.get('/ready')).body.checks.model.detail).toContain('ollama pull llava')
    } finally {
      await unreachable.stop()
      await lacking.stop()
      await missing.stop()
    }
  })
})

describe('the health service', () => {
  const healthyStore = { probe: async () => {} } as unknown as Store

  function heldProvider() {
    let calls = 0
    let answer: (h: ModelHealth) => void = () => {}
    const provider: ModelProvider = {
      name: 'held',
      model: 'llava',
      health: () => {
        calls++
        return new Promise<ModelHealth>((resolve) => (answer = resolve))
      },
      describe: async () => ({ content: '', structured: false }),
    }
    return { provider, calls: () => calls, answer: (h: ModelHealth) => answer(h) }
  }

  test('one model check in flight is shared by concurrent readiness requests, then cached', async () => {
    const held = heldProvider()
    const health = createHealthService(healthyStore, held.provider, { modelCacheMs: 60_000 })
    const first = health.readiness()
    const second = health.readiness()
    expect(held.calls()).toBe(1)
    held.answer({ ok: true, detail: 'model llava present at http://10.0.0.3:11434', publicDetail: 'model llava present' })
    for (const result of await Promise.all([first, second])) expect(result.checks.model).toEqual({ ok: true, detail: 'model llava present' })
    await health.readiness()
    expect(held.calls()).toBe(1)
  })

  test('after the cache time the model server is asked again', async () => {
    const held = heldProvider()
    // Checks follow each other at once here: this is about the model check's cache.
    const health = createHealthService(healthyStore, held.provider, { modelCacheMs: 0, minIntervalMs: 0 })
    const first = health.readiness()
    held.answer({ ok: true, detail: 'present at http://10.0.0.3:11434', publicDetail: 'model llava present' })
    await first
    const second = health.readiness()
    expect(held.calls()).toBe(2)
    held.answer({ ok: false, detail: 'Ollama not reachable at http://10.0.0.3:11434', publicDetail: 'the model server is not reachable' })
    expect((await second).checks.model).toEqual({ ok: false, detail: 'the model server is not reachable' })
  })

  test('the operator log gets the address of a failing model server, once per change', async () => {
    const lines: string[] = []
    const logger = createLogger((line) => lines.push(line))
    const provider = createOllamaProvider({ host: 'http://127.0.0.1:9', model: 'llava' })
    const health = createHealthService(healthyStore, provider, { logger, modelCacheMs: 0 })
    const result = await health.readiness()
    expect(result.ready).toBe(false)
    expect(JSON.stringify(result)).not.toContain('127.0.0.1')
    await health.readiness()
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0].check).toBe('model')
    expect(warnings[0].detail).toContain('http://127.0.0.1:9')
  })
})
