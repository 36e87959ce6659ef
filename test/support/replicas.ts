// Several real `alttext serve` processes behind a real HAProxy, all on loopback, for the replica tests.
//
// HAProxy runs from the documented file itself (docs/replicas/haproxy.cfg): the harness only fills in the
// environment variables the file reads (the replicas' addresses, where to listen, the stats page), so the
// file operators copy is the file the tests run. Each replica listens on an ephemeral loopback port, can
// be killed (SIGKILL by default) and started again on the same port, so HAProxy's checks see it come
// back. Replicas trust only HAProxy's address (127.0.0.1) for X-Forwarded-For, and `from(address)` sends
// a request through HAProxy from another loopback address (127.0.0.2 …), so that each test can be a
// client of its own for the rate limits. Everything ends with stop(), or, when the test process dies
// without stopping, with a watcher that kills what is left.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { generate } from 'selfsigned'
import { REPO_ROOT, SOURCE_COMMAND, spawnService, type ServiceProcess } from './process'
import { freePort } from './postgres'
import { type Api, type ApiResponse, uniqueEmail, VALID_PASSWORD } from './service'

export const HAPROXY = '/usr/sbin/haproxy'
/** The documented configuration, run as it is. */
export const HAPROXY_CFG = join(REPO_ROOT, 'docs', 'replicas', 'haproxy.cfg')
/** The file names servers replica1 … replica4 (more need more lines there). */
export const MAX_REPLICAS = 4
/** HAProxy connects to the replicas from here; the replicas believe X-Forwarded-For from this address only. */
export const PROXY_ADDRESS = '127.0.0.1'
/** The harness's own probes of a replica come from here, so they never use up a test client's rate limits. */
const HARNESS_ADDRESS = '127.0.0.254'

/** Why HAProxy cannot run here, or null. */
export function haproxyUnavailable(): string | null {
  return existsSync(HAPROXY) ? null : `HAProxy is not installed (Debian package haproxy, ${HAPROXY})`
}

/** A self-signed certificate for 127.0.0.1 and its key in one PEM file, as HAProxy's `crt` takes it; `ca` is the certificate. */
export async function writeTlsPem(dir: string): Promise<{ pemPath: string; ca: string }> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 3_600_000),
    notAfterDate: new Date(Date.now() + 86_400_000),
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  })
  const pemPath = join(dir, 'alttext.pem')
  writeFileSync(pemPath, `${pems.cert}\n${pems.private}`, { mode: 0o600 })
  return { pemPath, ca: pems.cert }
}

/** `haproxy -c` on the documented file with this environment: exit code and output. */
export async function checkHaproxyConfig(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn([HAPROXY, '-c', '-f', HAPROXY_CFG], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, output: out + err }
}

/** The newest modification time of any file under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

/**
 * How a replica is run: the compiled binary (dist/alttext) when it is there and newer than every source
 * file, so that a stale build never stands in for the code under test; otherwise the source through Bun.
 */
export function replicaCommand(): { command: string[]; what: string } {
  const binary = join(REPO_ROOT, 'dist', 'alttext')
  if (existsSync(binary) && statSync(binary).mtimeMs > newestMtime(join(REPO_ROOT, 'src'))) return { command: [binary], what: 'dist/alttext' }
  return { command: SOURCE_COMMAND, what: 'bun src/main.ts' }
}

export type ServerState = {
  backend: string
  server: string
  /** HAProxy's state: UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (coming up), MAINT, no check. */
  status: string
  /** The last check's result: L7OK, L7STS (a status other than 200), L4CON (connection refused), … */
  checkStatus: string
  checkCode: string
  /** Requests HAProxy sent to this server. */
  sent: number
}

export type Replica = {
  /** As in haproxy.cfg: replica1, replica2, … */
  name: string
  /** 0-based. */
  index: number
  port: number
  /** Direct, bypassing HAProxy: http://127.0.0.1:port. */
  url: string
  /** Direct requests to this replica. */
  api: Api
  running(): boolean
  pid(): number | null
  /** Everything this replica wrote, over all its runs. */
  output(): string
  /** Its JSON log lines, parsed, over all its runs. */
  logs(): Record<string, unknown>[]
  /** Sends a signal (SIGKILL unless told) and resolves with the exit code once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<number>
  /** Starts it again on the same port and waits for /ready (unless told not to). */
  restart(options?: { waitReady?: boolean }): Promise<void>
}

export type ReplicaSet = {
  /** HAProxy's front: http(s)://127.0.0.1:port. */
  url: string
  /** Requests through HAProxy from 127.0.0.1. */
  api: Api
  /** Requests through HAProxy from another loopback address: a client of its own for the rate limits. */
  from(address: string): Api
  replicas: Replica[]
  /** What HAProxy wrote (its log lines, alerts). */
  haproxyOutput(): string
  /** The servers of both backends as HAProxy's stats page (CSV) shows them now. */
  serverStates(): Promise<ServerState[]>
  /** Waits until a server of a backend is in `status` (e.g. "DOWN", "UP"), and returns its state. */
  waitForServer(backend: 'alttext_ready' | 'alttext_live', server: string, status: string, timeoutMs?: number): Promise<ServerState>
  /** The command the replicas run (dist/alttext or bun src/main.ts). */
  what: string
  stop(): Promise<void>
}

export type ReplicaSetOptions = {
  /** How many replicas, 1 to MAX_REPLICAS. */
  replicas: number
  /**
   * Environment of every replica: ALTTEXT_DATABASE_URL, ALTTEXT_REDIS_URL, OLLAMA_HOST … Without
   * ALTTEXT_DATABASE_URL each replica gets an SQLite file of its own (one process per file): a set-up that
   * shows the proxy at work, not shared state.
   */
  env: Record<string, string>
  /** Additions for one replica (0-based index), e.g. a model host of its own. */
  replicaEnv?: (index: number) => Record<string, string>
  /** A PEM file with certificate and key: HAProxy ends TLS (ALTTEXT_TLS_PEM), and `ca` is trusted by the clients. */
  tls?: { pemPath: string; ca: string }
  /** Wait for every replica's /ready before starting HAProxy (default true). */
  waitReady?: boolean
  command?: string[]
}

/** Resolves with the response of one request from `localAddress` (node:http: fetch cannot choose its source address). */
function requestFrom(
  url: URL,
  localAddress: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  ca: string | undefined,
): Promise<{ status: number; headers: Headers; text: string }> {
  const { promise, resolve, reject } = Promise.withResolvers<{ status: number; headers: Headers; text: string }>()
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  const outgoing = { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) }
  const req = send(
    { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: outgoing, localAddress, ...(ca ? { ca } : {}), agent: false },
    (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: toHeaders(res.headers), text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    },
  )
  req.on('error', reject)
  req.end(body)
  return promise
}

function toHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  return headers
}

/** The same Api as test/support/service.ts, sent from a chosen loopback address. */
export function clientFrom(baseUrl: string, localAddress: string, ca?: string): Api {
  const request = async <T>(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string; key?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.key !== undefined) headers['x-api-key'] = options.key
    let body = options.rawBody
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await requestFrom(new URL(baseUrl + path), localAddress, method, headers, body, ca)
    let parsed: unknown
    try {
      parsed = JSON.parse(res.text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text: res.text }
  }
  const api: Api = {
    request,
    post: (path, body, key) => request('POST', path, { body, key }),
    get: (path, key) => request('GET', path, { key }),
    patch: (path, body, key) => request('PATCH', path, { body, key }),
    delete: (path, key) => request('DELETE', path, { key }),
    async register(email = uniqueEmail(), password = VALID_PASSWORD) {
      const res = await api.post('/api/register', { email, password })
      if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`)
      return { email, password, apiKey: res.body.api_key, prefix: res.body.prefix }
    },
  }
  return api
}

/** Polls `check` every `everyMs` until it is true; fails naming `what` after `timeoutMs`. */
async function poll(check: () => Promise<boolean>, what: string, timeoutMs: number, everyMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await Bun.sleep(everyMs)
  }
}

function parseLogLines(text: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = []
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>)
    } catch {
      // A line cut by a kill -9 mid-write.
    }
  }
  return lines
}

/** Parses HAProxy's stats CSV ("# pxname,svname,…" then one row per proxy and server). */
function parseStats(csv: string): ServerState[] {
  const [head = '', ...rows] = csv.trim().split('\n')
  const columns = head.replace(/^# /, '').split(',')
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? ''
  return rows
    .map((line) => line.split(','))
    .filter((row) => !['FRONTEND', 'BACKEND'].includes(at(row, 'svname')))
    .map((row) => ({
      backend: at(row, 'pxname'),
      server: at(row, 'svname'),
      status: at(row, 'status'),
      checkStatus: at(row, 'check_status'),
      checkCode: at(row, 'check_code'),
      sent: Number(at(row, 'lbtot')),
    }))
}

export async function startReplicaSet(options: ReplicaSetOptions): Promise<ReplicaSet> {
  if (options.replicas < 1 || options.replicas > MAX_REPLICAS) throw new RangeError(`1 to ${MAX_REPLICAS} replicas, not ${options.replicas}`)
  const unavailable = haproxyUnavailable()
  if (unavailable) throw new Error(unavailable)
  const { command, what } = options.command ? { command: options.command, what: options.command.join(' ') } : replicaCommand()
  const dir = mkdtempSync(join(tmpdir(), 'alttext-replicas-'))
  const frontPort = freePort()
  const statsPort = freePort()
  const scheme = options.tls ? 'https' : 'http'
  const url = `${scheme}://127.0.0.1:${frontPort}`
  const statsUrl = `http://127.0.0.1:${statsPort}`
  const waitReady = options.waitReady ?? true

  // Whatever is still running when this process dies (bun test runs no exit hooks) is killed by this watcher.
  const pidFile = join(dir, 'pids')
  const pids = new Map<string, number>()
  const recordPids = () => writeFileSync(pidFile, [...pids.values()].join(' '))
  recordPids()
  const watcher = Bun.spawn(
    ['sh', '-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; kill -9 $(cat '${pidFile}') 2>/dev/null; rm -rf '${dir}'`],
    { stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' },
  )
  watcher.unref()

  const replicaEnv = (index: number, port: number): Record<string, string> => ({
    HOST: '127.0.0.1',
    PORT: String(port),
    ALTTEXT_PUBLIC_URL: url,
    ALTTEXT_TRUST_PROXY: '1',
    ALTTEXT_TRUSTED_PROXIES: `${PROXY_ADDRESS}/32`,
    ...(options.env.ALTTEXT_DATABASE_URL === undefined ? { ALTTEXT_DB: join(dir, `replica${index + 1}.db`) } : {}),
    ...options.env,
    ...options.replicaEnv?.(index),
  })

  const probe = (port: number) => clientFrom(`http://127.0.0.1:${port}`, HARNESS_ADDRESS)
  // Neither /health nor /ready is rate limited; /ready is asked every 250 ms, which is plenty.
  const untilReady = (port: number, name: string) =>
    poll(async () => (await probe(port).get('/ready')).status === 200, `${name} on port ${port} to be ready`, 30_000, 250)

  const replicas: Replica[] = []
  // Every run of each replica, the current one last (null while it is down).
  const runs: ServiceProcess[][] = []
  const processes: (ServiceProcess | null)[] = []
  const startReplica = async (index: number, port: number): Promise<ServiceProcess> => {
    // A port just freed by a killed replica is normally free at once; another process may have taken it.
    for (let attempt = 1; ; attempt++) {
      try {
        const started = await spawnService(replicaEnv(index, port), command, REPO_ROOT, 30_000)
        pids.set(`replica${index + 1}`, started.proc.pid)
        recordPids()
        processes[index] = started
        runs[index] = [...(runs[index] ?? []), started]
        return started
      } catch (error) {
        if (port === 0 || attempt >= 5 || !/EADDRINUSE|in use/i.test(String(error))) throw error
        await Bun.sleep(200)
      }
    }
  }

  let haproxy: Subprocess<'ignore', 'pipe', 'pipe'> | null = null
  let haproxyText = ''
  const stopAll = async () => {
    await Promise.all(
      processes.map(async (running) => {
        if (running === null) return
        running.proc.kill('SIGTERM')
        const killer = setTimeout(() => running.proc.kill('SIGKILL'), 25_000)
        await running.exited
        clearTimeout(killer)
      }),
    )
    if (haproxy !== null) {
      haproxy.kill('SIGTERM')
      await haproxy.exited
    }
    watcher.kill()
    rmSync(dir, { recursive: true, force: true })
  }

  try {
    for (let index = 0; index < options.replicas; index++) {
      const started = await startReplica(index, 0)
      const port = Number(new URL(started.url).port)
      const name = `replica${index + 1}`
      const replica: Replica = {
        name,
        index,
        port,
        url: `http://127.0.0.1:${port}`,
        api: clientFrom(`http://127.0.0.1:${port}`, HARNESS_ADDRESS),
        running: () => processes[index] !== null,
        pid: () => processes[index]?.proc.pid ?? null,
        output: () => (runs[index] ?? []).map((run) => run.output()).join(''),
        logs: () => parseLogLines(replica.output()),
        async kill(signal = 'SIGKILL') {
          const running = processes[index]
          if (!running) throw new Error(`${name} is not running`)
          running.proc.kill(signal)
          const code = await running.exited
          processes[index] = null
          pids.delete(name)
          recordPids()
          return code
        },
        async restart(restartOptions = {}) {
          if (processes[index]) throw new Error(`${name} is running already`)
          await startReplica(index, port)
          if (restartOptions.waitReady ?? waitReady) await untilReady(port, name)
        },
      }
      replicas.push(replica)
    }
    if (waitReady) await Promise.all(replicas.map((r) => untilReady(r.port, r.name)))

    const haproxyEnv: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ALTTEXT_LISTEN: `127.0.0.1:${frontPort}`,
      ALTTEXT_HAPROXY_STATS: `127.0.0.1:${statsPort}`,
      ...Object.fromEntries(replicas.map((r) => [`ALTTEXT_REPLICA_${r.index + 1}`, `127.0.0.1:${r.port}`])),
      ...(options.tls ? { ALTTEXT_TLS_PEM: options.tls.pemPath } : {}),
      // As root (the tests' usual case) HAProxy drops to its own user in a chroot, as in production.
      ...(process.getuid?.() === 0 ? {} : { ALTTEXT_HAPROXY_UNPRIVILEGED: '1' }),
    }
    const proc = Bun.spawn([HAPROXY, '-db', '-f', HAPROXY_CFG], { env: haproxyEnv, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
    haproxy = proc
    pids.set('haproxy', proc.pid)
    recordPids()
    const decoder = new TextDecoder()
    for (const stream of [proc.stdout, proc.stderr])
      void (async () => {
        for await (const chunk of stream) haproxyText += decoder.decode(chunk, { stream: true })
      })()
    let exitedEarly = false
    void proc.exited.then(() => {
      exitedEarly = true
    })
    await poll(
      async () => {
        if (exitedEarly) throw new Error(`haproxy exited:\n${haproxyText}`)
        return (await fetch(`${statsUrl}/;csv`)).ok
      },
      'HAProxy to listen',
      10_000,
      50,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${haproxyText}`)
    })
  } catch (error) {
    await stopAll()
    throw error
  }

  const serverStates = async () => parseStats(await (await fetch(`${statsUrl}/;csv`)).text())
  return {
    url,
    api: clientFrom(url, '127.0.0.1', options.tls?.ca),
    from: (address) => clientFrom(url, address, options.tls?.ca),
    replicas,
    haproxyOutput: () => haproxyText,
    serverStates,
    async waitForServer(backend, server, status, timeoutMs = 20_000) {
      let found: ServerState | undefined
      await poll(
        async () => {
          found = (await serverStates()).find((s) => s.backend === backend && s.server === server)
          return found?.status === status
        },
        `${backend}/${server} to be ${status} (last seen: ${JSON.stringify(found)})`,
        timeoutMs,
        100,
      )
      return found!
    },
    what,
    stop: stopAll,
  }
}
/**
 * Whether `alttext serve` accepts ALTTEXT_DATABASE_URL: it is started once on `databaseUrl` and either
 * listens (then it is stopped) or exits first, whose output says why.
 */
export async function servesPostgres(databaseUrl: string, command = replicaCommand().command): Promise<{ accepted: true } | { accepted: false; why: string }> {
  try {
    const running = await spawnService({ ALTTEXT_DATABASE_URL: databaseUrl }, command, REPO_ROOT, 30_000)
    running.proc.kill('SIGTERM')
    await running.exited
    return { accepted: true }
  } catch (error) {
    const text = String(error)
    // The log line's `error`, or the plain line on stderr, or everything.
    const line = text.split('\n').find((l) => l.includes('ALTTEXT_DATABASE_URL')) ?? text
    let why = line
    try {
      why = String((JSON.parse(line) as { error?: unknown }).error ?? line)
    } catch {
      why = line.replace(/^alttext: /, '')
    }
    return { accepted: false, why: why.slice(0, 500) }
  }
}
