// Child process of scenarios 9 and 17: a steady stream of requests at a fixed rate (open loop: each request is
// sent at its scheduled time whether or not the ones before have been answered, and its latency counts
// from that time, so a stalled server shows in every request it held up, not in one slow sample).
// GET /health every `healthIntervalMs` (or GET `path` with `headers`: scenario 19's authenticated
// GET /api/usage, from `clients` clients in turn); with `keys`, also POST /api/keys every `keys.intervalMs`.
// Runs until `untilEpochMs` (or for `durationMs`). Loopback only; each request has a timeout
// (`timeoutMs`, 15 s); at most `maxInFlight` requests of a kind at once; exits after its time plus
// 60 s whatever happens, or when its stdin closes.
//   BENCH_STREAM='{"url":...,"durationMs":1000,"healthIntervalMs":10,"keys":{"key":...,"intervalMs":500}}' bun stream.ts
// Prints one line `BENCH_RESULT {json}`.
import { boundLifetime } from './lib/child'
import { loopback } from './lib/common'

type Options = {
  url: string
  durationMs?: number
  untilEpochMs?: number
  healthIntervalMs: number
  path?: string
  headers?: Record<string, string>
  keys?: { key: string; intervalMs: number }
  /** Each request of `path` as from one of this many clients in turn (X-Forwarded-For, documentation addresses 2001:db8::/32). */
  clients?: number
  /**
   * Instead of `url` and `headers`: the stream goes to each of these in turn, `sliceMs` each, so services
   * compared see the same moments of a noisy machine; each sample names its target (index).
   */
  targets?: { url: string; headers: Record<string, string> }[]
  sliceMs?: number
  timeoutMs?: number
  maxInFlight?: number
}

/** `atMs`: scheduled send time from the start; `ms`: from that time (or the send, if earlier) to the whole answer. */
export type StreamSample = { atMs: number; ms: number; status: number; code?: string; error?: string; target?: number }
/** `startEpochMs`: when the samples' `atMs` count from, on the wall clock (to match them with another process's events). */
export type StreamResult = { health: StreamSample[]; keys: StreamSample[]; ranMs: number; startEpochMs: number }

const options = JSON.parse(process.env.BENCH_STREAM ?? '{}') as Options
const startEpoch = Date.now()
const durationMs = Math.min(120_000, Math.max(0, options.untilEpochMs !== undefined ? options.untilEpochMs - startEpoch : (options.durationMs ?? 1000)))
const timeoutMs = options.timeoutMs ?? 15_000
const maxInFlight = options.maxInFlight ?? 256
boundLifetime('stream.ts', durationMs + timeoutMs + 60_000)
loopback(options.url)

for (const target of options.targets ?? []) loopback(target.url)

async function send(path: string, init: RequestInit = {}, url = options.url): Promise<Omit<StreamSample, 'atMs' | 'ms'>> {
  try {
    const response = await fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) })
    const text = await response.text()
    let code: string | undefined
    try {
      const body = JSON.parse(text) as { error?: { code?: string } | string }
      if (typeof body.error === 'object') code = body.error?.code
    } catch {
      // not JSON
    }
    return { status: response.status, ...(code ? { code } : {}) }
  } catch (error) {
    return { status: 0, error: String(error) }
  }
}

async function openLoop(intervalMs: number, request: (atMs: number) => Promise<Omit<StreamSample, 'atMs' | 'ms'>>): Promise<StreamSample[]> {
  const samples: StreamSample[] = []
  const pending = new Set<Promise<void>>()
  const t0 = performance.now()
  for (let i = 0; i * intervalMs < durationMs; i++) {
    const scheduled = t0 + i * intervalMs
    const wait = scheduled - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    while (pending.size >= maxInFlight) await Promise.race(pending)
    // From the scheduled time when sent late (the wait counts, open loop); from the send when a timer woke early.
    const from = Math.min(scheduled, performance.now())
    const done: Promise<void> = request(scheduled - t0).then((answer) => {
      samples.push({ atMs: scheduled - t0, ms: performance.now() - from, ...answer })
      pending.delete(done)
    })
    pending.add(done)
  }
  await Promise.all(pending)
  return samples.sort((a, b) => a.atMs - b.atMs)
}

const started = performance.now()
const startEpochMs = Date.now()
const keys = options.keys
let sent = 0
/** The next client's headers: one /64 each (the service counts IPv6 per /64), so each has its own rate limit. */
const streamHeaders = (base = options.headers): Record<string, string> => {
  const headers = base ?? {}
  if (!options.clients) return headers
  return { ...headers, 'x-forwarded-for': `2001:db8:${(sent++ % options.clients).toString(16)}::1` }
}
const [health, keySamples] = await Promise.all([
  openLoop(options.healthIntervalMs, (atMs) => {
    const targets = options.targets
    if (!targets?.length) return send(options.path ?? '/health', { headers: streamHeaders() })
    const index = Math.floor(atMs / (options.sliceMs ?? 250)) % targets.length
    const target = targets[index]!
    return send(options.path ?? '/health', { headers: streamHeaders(target.headers) }, target.url).then((answer) => ({ ...answer, target: index }))
  }),
  keys
    ? openLoop(keys.intervalMs, () =>
        send('/api/keys', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': keys.key },
          body: JSON.stringify({ label: 'bench during a database lock' }),
        }),
      )
    : Promise.resolve([]),
])
const result: StreamResult = { health, keys: keySamples, ranMs: performance.now() - started, startEpochMs }
console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
process.exit(0)
