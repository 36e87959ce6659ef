// Operations: liveness, readiness, the request log and graceful shutdown of the real process.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { latestPostgresVersion } from '../../src/store/postgres/migrations'
import { latestSchemaVersion, migrate } from '../../src/store/sqlite/migrations'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { sharedPostgres, TEST_ENGINE } from '../support/postgres'
import { spawnService } from '../support/process'
import { startTestService, waitUntil, type TestService } from '../support/service'

let service: TestService
let fake: FakeOllama
let readyService: TestService

beforeAll(async () => {
  service = await startTestService()
  fake = await startFakeOllama({ models: ['llava:latest'] })
  readyService = await startTestService({ env: { OLLAMA_HOST: fake.url, ALTTEXT_MODEL: 'llava' } })
})
afterAll(async () => {
  await service.stop()
  await readyService.stop()
  await fake.stop()
})

type LogLine = Record<string, unknown>
const requestLines = (s: TestService): LogLine[] => s.logs.filter((l) => l.msg === 'request')

describe('GET /health', () => {
  test('200 {status: ok, version} with the version of package.json', async () => {
    const res = await service.api.get('/health')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.body).toEqual({ status: 'ok', version: pkg.version })
  })

  test('answers even when Ollama is unreachable (liveness does not depend on the model server)', async () => {
    // `service` points at a closed port.
    const res = await service.api.get('/health')
    expect(res.status).toBe(200)
    expect(res.body.status).toBe('ok')
  })
})

describe('GET /ready', () => {
  test('200 {status: ready, version, checks} when the database answers and the model is pulled', async () => {
    const res = await readyService.api.get('/ready')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'ready', version: pkg.version })
    expect(res.body.checks.database.ok).toBe(true)
    expect(res.body.checks.model.ok).toBe(true)
    // The readiness check really asked the model server which models it has.
    expect(fake.requests.some((r) => r.method === 'GET' && r.path === '/api/tags')).toBe(true)
  })

  test('a model named with its tag ("llava:latest") is found as well', async () => {
    const tagged = await startTestService({ env: { OLLAMA_HOST: fake.url, ALTTEXT_MODEL: 'llava:latest' } })
    try {
      const res = await tagged.api.get('/ready')
      expect(res.status).toBe(200)
      expect(res.body.status).toBe('ready')
    } finally {
      await tagged.stop()
    }
  })
})

describe('request log', () => {
  test('one JSON line per request with method, path, status, duration_ms and the response request id', async () => {
    const before = requestLines(service).length
    const res = await service.api.get('/health')
    const id = res.headers.get('x-request-id')
    expect(id).toBeTruthy()
    await waitUntil(() => requestLines(service).length > before, 'the request log line')
    const mine = requestLines(service).filter((l) => l.request_id === id)
    expect(mine).toHaveLength(1)
    const line = mine[0]!
    expect(line.method).toBe('GET')
    expect(line.path).toBe('/health')
    expect(line.status).toBe(200)
    expect(typeof line.duration_ms).toBe('number')
    expect(line.duration_ms as number).toBeGreaterThanOrEqual(0)
    // Every line the service writes is one JSON object.
    for (const raw of service.logText().split('\n')) expect(() => JSON.parse(raw)).not.toThrow()
  })

  test('a valid incoming X-Request-Id is kept, echoed and logged', async () => {
    const id = `trace-${Date.now()}-abc`
    const res = await service.api.request('GET', '/health', { headers: { 'X-Request-Id': id } })
    expect(res.headers.get('x-request-id')).toBe(id)
    await waitUntil(() => requestLines(service).some((l) => l.request_id === id), 'the request log line')
    expect(requestLines(service).filter((l) => l.request_id === id)).toHaveLength(1)
  })

  test('the logged path has no query string', async () => {
    const res = await service.api.get('/health?token=querysecret123&x=1')
    expect(res.status).toBe(200)
    const id = res.headers.get('x-request-id')
    await waitUntil(() => requestLines(service).some((l) => l.request_id === id), 'the request log line')
    const line = requestLines(service).find((l) => l.request_id === id)!
    expect(line.path).toBe('/health')
    expect(service.logText()).not.toContain('querysecret123')
    expect(service.logText()).not.toContain('?token=')
  })

  test('errors are logged too: a 404 and a 400 each give one line with their status', async () => {
    const notFound = await service.api.get('/no/such/route')
    expect(notFound.status).toBe(404)
    const bad = await service.api.request('POST', '/api/login', { rawBody: '{not json', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    for (const [res, path, status] of [
      [notFound, '/no/such/route', 404],
      [bad, '/api/login', 400],
    ] as const) {
      const id = res.headers.get('x-request-id')
      await waitUntil(() => requestLines(service).some((l) => l.request_id === id), `the log line of ${path}`)
      const lines = requestLines(service).filter((l) => l.request_id === id)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatchObject({ method: res === bad ? 'POST' : 'GET', path, status })
    }
  })
})

/** A model server whose /api/tags answers only when released (so a /ready request stays in flight); /api/show at once. */
function startHeldOllama() {
  let inFlight = 0
  const waiting: (() => void)[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      if (path === '/api/show') return Response.json({ capabilities: ['completion', 'vision'], details: {} })
      if (path !== '/api/tags') return new Response('404 page not found', { status: 404 })
      inFlight++
      await new Promise<void>((resolve) => waiting.push(resolve))
      inFlight--
      return Response.json({
        models: [{ name: 'llava:latest', model: 'llava:latest', modified_at: '2025-09-18T10:21:43Z', size: 1, digest: 'a'.repeat(64), details: {} }],
      })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    inFlight: () => inFlight,
    release: () => {
      for (const resolve of waiting.splice(0)) resolve()
    },
    stop: () => server.stop(true),
  }
}

describe('graceful shutdown (child process)', () => {
  test('SIGTERM lets an in-flight request finish, refuses new connections, logs "stopped" and exits 0', async () => {
    const held = startHeldOllama()
    const dir = mkdtempSync(join(tmpdir(), 'alttext-shutdown-'))
    try {
      const svc = await spawnService({ ALTTEXT_DB: join(dir, 'alttext.db'), OLLAMA_HOST: held.url, ALTTEXT_MODEL: 'llava' })
      try {
        // The start-up check of the model server comes first: let it through, so the one held next is /ready's.
        await waitUntil(() => held.inFlight() > 0, 'the start-up check to reach the model server')
        held.release()
        await waitUntil(() => held.inFlight() === 0, 'the start-up check to finish')
        const pending = fetch(`${svc.url}/ready`).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }))
        await waitUntil(() => held.inFlight() > 0, 'the readiness request to reach the model server')

        svc.proc.kill('SIGTERM')
        await waitUntil(() => svc.output().includes('"msg":"shutting down"'), 'the shutdown log line')

        // The listener is closed: a new connection is refused while the old request is still in flight.
        let refused = false
        try {
          await fetch(`${svc.url}/health`, { keepalive: false })
        } catch {
          refused = true
        }
        expect(refused).toBe(true)

        held.release()
        const res = await pending
        expect(res.status).toBe(200)
        expect(res.body).toMatchObject({ status: 'ready', version: pkg.version })

        expect(await svc.exited).toBe(0)
        const output = svc.output()
        expect(output).toContain('"msg":"stopped"')
        // The in-flight request was logged before the process stopped.
        const lines = output
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as LogLine)
        const requestIndex = lines.findIndex((l) => l.msg === 'request' && l.path === '/ready' && l.status === 200)
        const stoppedIndex = lines.findIndex((l) => l.msg === 'stopped')
        expect(requestIndex).toBeGreaterThanOrEqual(0)
        expect(stoppedIndex).toBeGreaterThan(requestIndex)

        // After exit nothing listens any more.
        let afterExitFailed = false
        try {
          await fetch(`${svc.url}/health`, { keepalive: false })
        } catch {
          afterExitFailed = true
        }
        expect(afterExitFailed).toBe(true)
      } finally {
        if (svc.proc.exitCode === null && svc.proc.signalCode === null) svc.proc.kill('SIGKILL')
        await svc.exited
      }
    } finally {
      held.release()
      await held.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  test('SIGTERM with no traffic exits 0 promptly and logs "stopped"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-shutdown-'))
    try {
      const svc = await spawnService({ ALTTEXT_DB: join(dir, 'alttext.db') })
      try {
        expect((await fetch(`${svc.url}/health`)).status).toBe(200)
        svc.proc.kill('SIGTERM')
        expect(await svc.exited).toBe(0)
        expect(svc.output()).toContain('"msg":"stopped"')
      } finally {
        if (svc.proc.exitCode === null && svc.proc.signalCode === null) svc.proc.kill('SIGKILL')
        await svc.exited
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})

describe('the start-up log names the schema and the migrations that ran', () => {
  const latest = () => (TEST_ENGINE === 'postgres' ? latestPostgresVersion() : latestSchemaVersion())
  const schemaLine = (s: TestService) => s.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('database schema'))

  test('a new database: every migration; started again: none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-schema-log-'))
    try {
      // PostgreSQL: an empty database (the harness's usual ones are copies of a migrated template).
      const env: Record<string, string> =
        TEST_ENGINE === 'postgres' ? { ALTTEXT_DATABASE_URL: await (await sharedPostgres()).createDatabase({ empty: true }) } : {}
      const first = await startTestService({ dir, env })
      await first.stop()
      expect(schemaLine(first)).toMatchObject({
        level: 'info',
        msg: `database schema 0→${latest()}: applied migrations 1..${latest()}`,
        schema_version: latest(),
        applied_migrations: Array.from({ length: latest() }, (_, i) => i + 1),
      })
      const again = await startTestService({ dir, env })
      await again.stop()
      expect(schemaLine(again)).toMatchObject({ msg: `database schema at ${latest()}: no migrations`, applied_migrations: [] })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test.skipIf(TEST_ENGINE === 'postgres')('an older SQLite file (an upgrade): the migrations from its version on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-schema-log-'))
    try {
      const older = new Database(join(dir, 'alttext.db'))
      migrate(older, undefined, undefined, latest() - 2)
      older.close()
      const upgraded = await startTestService({ dir })
      await upgraded.stop()
      expect(schemaLine(upgraded)).toMatchObject({
        msg: `database schema ${latest() - 2}→${latest()}: applied migrations ${latest() - 1}..${latest()}`,
        applied_migrations: [latest() - 1, latest()],
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
