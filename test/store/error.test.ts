// The store speaks in its own terms: a write that stays locked rejects with StoreBusyError (which the HTTP
// layer turns into 503 database_busy, see busy.test.ts), and nothing in src/store knows about HTTP. The
// services treat it as they treated that 503: an alt-text request answers it, a batch item retries.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StoreBusyError } from '../../src/store/contract'
import { createSqliteStore } from '../../src/store/sqlite/store'
import type { Store } from '../../src/store/contract'
import { startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { REPO_ROOT } from '../support/process'
import { waitUntil } from '../support/service'
import { batchClient } from '../batches/support'
import { holdWriteLock } from './lock-holder'

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-store-error-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

describe('store errors', () => {
  test('a write locked past its wait rejects with StoreBusyError, naming the file for the log and the seconds to wait', async () => {
    const dbPath = join(tmp, 'busy.db')
    const store = createSqliteStore(dbPath, { busyWaitMs: 1500 })
    const holder = await holdWriteLock(dbPath)
    try {
      const error = await store.cache.purgeExpired(Date.now()).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(StoreBusyError)
      expect((error as StoreBusyError).retryAfterSeconds).toBe(2)
      expect((error as StoreBusyError).detail).toContain(dbPath)
      expect((error as StoreBusyError).message).toMatch(/locked by another process/)
    } finally {
      await holder.stop()
      store.close()
    }
  })

  test('no file of src/store uses the HTTP error type or headers', () => {
    const root = join(REPO_ROOT, 'src', 'store')
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'))
    expect(files.length).toBeGreaterThan(5)
    const http = files.filter((name) => /\bApiError\b|Retry-After|shared\/errors/.test(readFileSync(join(root, name), 'utf8')))
    expect(http).toEqual([])
  })
})

describe('a busy database in the services', () => {
  test('an alt-text request answers 503 database_busy with Retry-After; a batch item is retried and done, not failed', async () => {
    const dir = mkdtempSync(join(tmp, 'services-'))
    const real = createSqliteStore(join(dir, 'alttext.db'))
    // The cache read fails the next `busyReads` times, as a database locked past its wait would.
    let busyReads = 0
    const store: Store = {
      ...real,
      cache: {
        ...real.cache,
        get: (...args) => (busyReads-- > 0 ? Promise.reject(new StoreBusyError(3, 'test: locked')) : real.cache.get(...args)),
      },
    }
    const env = await startAltTextEnv({ overrides: { store, batchRetryDelaysMs: [10, 10] } })
    try {
      busyReads = 1
      const refused = await env.generate({ image_url: env.serve(makePng(21, 22)) })
      expect(refused.status).toBe(503)
      expect(refused.body.error.code).toBe('database_busy')
      expect(refused.headers.get('retry-after')).toBe('3')

      busyReads = 1
      const batches = batchClient(env.service.api, env.key)
      const created = await batches.create({ items: [{ image_url: env.serve(makePng(23, 24)) }] })
      expect(created.status).toBe(202)
      const ended = await batches.ended(created.body.id)
      expect(ended.body.items[0]).toMatchObject({ status: 'done' })
      await waitUntil(() => busyReads < 0, 'the retried cache read')
    } finally {
      await env.stop()
    }
  }, 30_000)
})
