// The store speaks in its own terms: a write that stays locked rejects with StoreBusyError (which the HTTP
// layer turns into 503 database_busy, see busy.test.ts), and nothing in src/store knows about HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StoreBusyError } from '../../src/store/errors'
import { createSqliteStore } from '../../src/store/sqlite'
import { REPO_ROOT } from '../support/process'
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
