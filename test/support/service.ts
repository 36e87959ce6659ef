// Starts the real service on an ephemeral loopback port with a real SQLite file (or, with
// ALTTEXT_TEST_ENGINE=postgres, a PostgreSQL database of its own), and talks HTTP to it.
import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore, startService, type Overrides, type RunningService } from '../../src/app'
import { loadConfig, type Config } from '../../src/config'
import type { Store } from '../../src/store/contract'
import { createLogger } from '../../src/shared/logger'
import { openTestDatabase, type TestDatabase } from './database'
import { sharedPostgres, TEST_ENGINE } from './postgres'
import { CHEAP_PASSWORDS } from './session'
import { startSmtpCapture, type SmtpCapture } from './smtp'

export type TestService = {
  url: string
  config: Config
  dir: string
  dbPath: string
  /** Every log line the service wrote, parsed. */
  logs: Record<string, unknown>[]
  /** The raw log text, for "never logs a secret" checks. */
  logText(): string
  /** One statement on the service's database, SQLite's or PostgreSQL's alike (see database.ts). */
  query: TestDatabase['query']
  /** The names of the database's tables. */
  tables: TestDatabase['tables']
  /** The access-log line of a request, once written (it is written after the response is sent). */
  accessLine(requestId: string): Promise<Record<string, unknown>>
  running: RunningService
  api: Api
  stop(): Promise<void>
}

export type ApiResponse<T = any> = { status: number; body: T; headers: Headers; text: string }

export type Api = {
  request<T = any>(
    method: string,
    path: string,
    options?: { body?: unknown; rawBody?: string; key?: string; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>
  post<T = any>(path: string, body?: unknown, key?: string): Promise<ApiResponse<T>>
  get<T = any>(path: string, key?: string): Promise<ApiResponse<T>>
  patch<T = any>(path: string, body?: unknown, key?: string): Promise<ApiResponse<T>>
  delete<T = any>(path: string, key?: string): Promise<ApiResponse<T>>
  /** Registers a fresh account and returns its email, password and first key. */
  register(email?: string, password?: string): Promise<{ email: string; password: string; apiKey: string; prefix: string }>
}

let accountCounter = 0
export const uniqueEmail = (tag = 'user') => `${tag}-${process.pid}-${Date.now()}-${++accountCounter}@example.com`

export function apiClient(baseUrl: string): Api {
  const request = async <T>(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string; key?: string; headers?: Record<string, string> } = {},
  ) => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.key !== undefined) headers['x-api-key'] = options.key
    let body: string | undefined = options.rawBody
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await fetch(baseUrl + path, { method, headers, body })
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text }
  }
  const api: Api = {
    request,
    post: (path, body, key) => request('POST', path, { body, key }),
    get: (path, key) => request('GET', path, { key }),
    patch: (path, body, key) => request('PATCH', path, { body, key }),
    delete: (path, key) => request('DELETE', path, { key }),
    async register(email = uniqueEmail(), password = 'correct horse battery') {
      const res = await api.post('/api/register', { email, password })
      if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`)
      return { email, password, apiKey: res.body.api_key, prefix: res.body.prefix }
    },
  }
  return api
}

/** Under ALTTEXT_TEST_ENGINE=postgres, the database of each `dir` a caller passed (see startTestService). */
const databasesOfDirs = new Map<string, string>()

export type TestServiceOptions = {
  env?: Record<string, string>
  overrides?: Overrides
  dir?: string
  /** Wraps the store of the test's engine (to watch or fail its calls) before the service gets it. */
  wrapStore?: (store: Store) => Store
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'alttext-test-'))
  const dbPath = join(dir, 'alttext.db')
  const lines: string[] = []
  const logger = createLogger((line) => lines.push(line))
  // ALTTEXT_TEST_ENGINE=postgres: a PostgreSQL database of its own instead of the SQLite file (a test's own
  // env wins). A service started again on the same `dir` gets the same database, as it would the same file.
  const ownDatabase = TEST_ENGINE === 'postgres' && options.overrides?.store === undefined && options.env?.ALTTEXT_DATABASE_URL === undefined
  const cluster = ownDatabase ? await sharedPostgres() : null
  let databaseUrl: string | undefined
  if (cluster) {
    databaseUrl = options.dir === undefined ? undefined : databasesOfDirs.get(options.dir)
    databaseUrl ??= await cluster.createDatabase()
    if (options.dir !== undefined) databasesOfDirs.set(options.dir, databaseUrl)
  }
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ALTTEXT_DB: dbPath,
    ...(databaseUrl ? { ALTTEXT_DATABASE_URL: databaseUrl } : {}),
    // Nothing listens here unless a test starts the fake Ollama and passes its url.
    OLLAMA_HOST: 'http://127.0.0.1:9',
    ALTTEXT_PUBLIC_URL: 'http://alttext.test',
    // The real OCR costs a core for a fifth of a second per image and reads nothing in the tests' plain
    // images: only the tests of the text in images turn it on (or give a stand-in reader).
    ALTTEXT_OCR: 'off',
    ...options.env,
  })
  // PostgreSQL is opened first, as `alttext serve` opens it; the service closes it.
  // A test that moves the service's clock moves PostgreSQL's for its leases and holds too (clock: 'caller').
  const storeClock = options.overrides?.clock ? ('caller' as const) : ('database' as const)
  const opened =
    (config.databaseUrl !== undefined && options.overrides?.store === undefined) || options.wrapStore
      ? // A loaded test machine can hold a heartbeat past the feed's 1 s and turn every cache off; only the
        // silent-network tests judge the feed's health, on stores of their own.
        await openStore(config, { clock: storeClock, feed: { timing: { staleMs: 30_000 } } })
      : undefined
  const store = opened && options.wrapStore ? options.wrapStore(opened) : opened
  // argon2id at its smallest cost unless a test passes its own hasher: the production parameters cost a
  // core for tens of milliseconds (seconds on a loaded machine) per sign-up and sign-in, and test/accounts
  // checks them with the real hasher.
  const running = startService(config, { logger, passwords: CHEAP_PASSWORDS, ...options.overrides, ...(store ? { store } : {}) })
  const url = running.url
  const database = openTestDatabase({ dbPath: config.dbPath, databaseUrl: config.databaseUrl })
  return {
    url,
    config,
    dir,
    dbPath,
    get logs() {
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    },
    logText: () => lines.join('\n'),
    query: database.query,
    tables: database.tables,
    async accessLine(requestId) {
      const find = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request' && l.request_id === requestId)
      await waitUntil(() => find() !== undefined, `the access-log line of request ${requestId}`)
      return find()!
    },
    running,
    api: apiClient(url),
    async stop() {
      await running.stop()
      await database.close()
      // A caller's `dir` may be started again: its database stays (the cluster goes with the test process).
      if (databaseUrl && !options.dir) await cluster?.dropDatabase(databaseUrl)
      if (!options.dir) rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Awaits a condition instead of sleeping; fails with `what` after `timeoutMs`. */
export type RegisteredAccount = Awaited<ReturnType<Api['register']>>
export type StartedForFile = { service: TestService; account: RegisteredAccount; smtp: SmtpCapture }

/**
 * The real service for one test file (or, called in a describe block, for that block): started before its
 * tests and stopped after them. With `account`, a fresh account is registered; with `smtp`, the service
 * mails through a local SMTP capture (else those two fields stay unset). `onStarted` hands them to the
 * file's own variables.
 */
export function serviceForFile(
  options: { env?: Record<string, string>; overrides?: Overrides; account?: boolean; smtp?: boolean },
  onStarted: (started: StartedForFile) => void,
): void {
  let started: Partial<StartedForFile> = {}
  beforeAll(async () => {
    const smtp = options.smtp ? await startSmtpCapture() : undefined
    const smtpEnv: Record<string, string> = smtp ? { ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test' } : {}
    const service = await startTestService({ env: { ...smtpEnv, ...options.env }, overrides: options.overrides })
    const account = options.account ? await service.api.register() : undefined
    started = { service, account, smtp }
    onStarted(started as StartedForFile)
  })
  afterAll(async () => {
    await started.service?.stop()
    await started.smtp?.stop()
  })
}

export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(10)
  }
}

export const VALID_PASSWORD = 'correct horse battery'
