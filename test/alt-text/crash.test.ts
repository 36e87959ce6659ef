// kill -9 during generation load loses nothing: every answered request stays charged and cached, nothing
// unanswerable is charged, the credits held by the requests cut off are free again after the restart
// (holds live in memory), and the account, its keys and the database are intact.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server'
import { makePng } from '../support/images'
import { spawnService, type ServiceProcess } from '../support/process'
import { sqliteOnly } from '../support/postgres'
import { apiClient, waitUntil } from '../support/service'

let ollama: FakeOllama
let images: HttpsImageServer
let dir: string
let dbPath: string
const processes: ServiceProcess[] = []

beforeAll(async () => {
  ;[ollama, images] = await Promise.all([startFakeOllama({ delayMs: 150, reply: 'A lighthouse on a rocky coast at dusk.' }), startHttpsImageServer()])
  dir = mkdtempSync(join(tmpdir(), 'alttext-crash-'))
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

const serviceEnv = () => ({
  ALTTEXT_DB: dbPath,
  OLLAMA_HOST: ollama.url,
  ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
  NODE_EXTRA_CA_CERTS: images.caPath,
  ALTTEXT_RATE_LIMITS: 'off',
  ALTTEXT_FREE_CREDITS: '1000',
})

async function start(): Promise<ServiceProcess> {
  const service = await spawnService(serviceEnv())
  processes.push(service)
  return service
}

type Answered = { request: { image_url: string; style: string; max_length: number }; altText: string }

sqliteOnly(
  "a restart on the same SQLite file frees the killed process's holds at once and checks the file's integrity; on PostgreSQL holds lapse (test/store/claims.test.ts)",
)('kill -9 during generation load: no answered charge lost, nothing unanswerable charged, held credits free again, answers cached', async () => {
  const first = await start()
  const api = apiClient(first.url)
  const account = await api.register()

  const answered: Answered[] = []
  const unexpected: string[] = []
  let inFlight = 0
  let sent = 0
  let stopping = false

  const loop = async (worker: number) => {
    while (!stopping) {
      const n = ++sent
      const request = {
        image_url: images.route(`/crash-${worker}-${n}.png`, { kind: 'bytes', body: makePng(40 + n, 30 + worker) }),
        style: n % 2 ? 'concise' : 'descriptive',
        max_length: 100 + (n % 5),
      }
      inFlight++
      try {
        const res = await api.post('/api/alt-text', request, account.apiKey)
        if (res.status === 200) answered.push({ request, altText: res.body.alt_text })
        else unexpected.push(`${res.status} ${res.text}`)
      } catch {
        // The connection died with the process: this loop is over.
        return
      } finally {
        inFlight--
      }
    }
  }
  const loops = Array.from({ length: 4 }, (_, worker) => loop(worker))

  // Kill while answers are in and a model call has just begun (150 ms to go, so its credit is held
  // and not yet charged).
  const modelCallJustStarted = () => ollama.requests.some((r) => r.path === '/api/chat' && Date.now() - r.receivedAt < 60)
  await waitUntil(
    () => answered.length >= 10 && inFlight > 0 && ollama.inFlight() > 0 && modelCallJustStarted(),
    '10 answers and a model call just started',
    15_000,
  )
  const answeredAtKill = answered.length
  const inFlightAtKill = inFlight
  stopping = true
  first.proc.kill('SIGKILL')
  await first.exited
  expect(first.proc.signalCode).toBe('SIGKILL')
  await Promise.all(loops)
  expect(unexpected).toEqual([])
  expect(inFlightAtKill).toBeGreaterThanOrEqual(1)

  // Restart on the same database file.
  const second = await start()
  const api2 = apiClient(second.url)

  // Every answer the client got is charged; nothing beyond what could have been answered is.
  const usage = await api2.get('/api/usage', account.apiKey)
  expect(usage.status).toBe(200)
  const used: number = usage.body.credits.used
  expect(used).toBeGreaterThanOrEqual(answered.length)
  expect(used).toBeLessThanOrEqual(answeredAtKill + inFlightAtKill)
  expect(usage.body.credits.total).toBe(1000)
  expect(usage.body.credits.remaining).toBe(1000 - used)

  // Every answer given before the kill comes back from the cache: same text, free, no model call.
  const modelCalls = ollama.chatRequests().length
  for (const { request, altText } of answered) {
    const again = await api2.post('/api/alt-text', request, account.apiKey)
    expect(again.status).toBe(200)
    expect(again.body.cached).toBe(true)
    expect(again.body.alt_text).toBe(altText)
  }
  expect(ollama.chatRequests().length).toBe(modelCalls)
  expect((await api2.get('/api/usage', account.apiKey)).body.credits.used).toBe(used)

  // The account and its key survived.
  const login = await api2.post('/api/login', { email: account.email, password: account.password })
  expect(login.status).toBe(200)
  expect(login.body.keys.map((k: { prefix: string }) => k.prefix)).toEqual([account.prefix])
  const keys = await api2.get('/api/keys', account.apiKey)
  expect(keys.status).toBe(200)
  expect(keys.body.keys.map((k: { prefix: string }) => k.prefix)).toEqual([account.prefix])

  // A clean stop, then the file itself.
  second.proc.kill('SIGTERM')
  await second.exited
  const db = new Database(dbPath, { readonly: true })
  try {
    expect(db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }])
    expect(db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts').get()!.n).toBe(1)
  } finally {
    db.close()
  }
})
