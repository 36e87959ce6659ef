// Child process for the burst scenarios (queueing, memory): fires `count` POST /api/alt-text at once,
// each with its own cache key, and records every answer's status and time. Optionally probes
// GET /health every `probeIntervalMs` (idle first, then during the burst) to see the service's
// event-loop delay from outside. Loopback only; every request has a 30 s timeout; the process exits
// after 90 s whatever happens, or when its stdin closes.
//   BENCH_BURST='{"url":..., "key":..., "imageUrl":..., "count":40, "prefix":"q1", "warm":2, "probe":true}' bun burst.ts
// Prints one line `BENCH_RESULT {json}`.
import { boundLifetime } from './lib/child'

type Options = {
  url: string
  key: string
  imageUrl: string
  count: number
  prefix: string
  /** Requests run one after another before the burst (e.g. to give the queue its time estimate). */
  warm?: number
  probe?: boolean
  probeIntervalMs?: number
  idleProbeMs?: number
}

export type BurstAnswer = { status: number; startMs: number; ms: number; retryAfter: string | null; cached: boolean | null; error?: string }
export type BurstResult = { answers: BurstAnswer[]; burstMs: number; idleProbeMs: number[]; loadProbeMs: number[]; warmStatuses: number[] }

boundLifetime('burst.ts', 90_000)

const options = JSON.parse(process.env.BENCH_BURST ?? '{}') as Options

async function altText(context: string, t0: number): Promise<BurstAnswer> {
  const startMs = performance.now() - t0
  try {
    const response = await fetch(`${options.url}/api/alt-text`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': options.key },
      body: JSON.stringify({ image_url: options.imageUrl, context }),
      signal: AbortSignal.timeout(30_000),
    })
    const text = await response.text()
    const ms = performance.now() - t0 - startMs
    let cached: boolean | null = null
    try {
      cached = (JSON.parse(text) as { cached?: boolean }).cached ?? null
    } catch {
      // not JSON
    }
    return { status: response.status, startMs, ms, retryAfter: response.headers.get('retry-after'), cached }
  } catch (error) {
    return { status: 0, startMs, ms: performance.now() - t0 - startMs, retryAfter: null, cached: null, error: String(error) }
  }
}

/** GET /health one after another, one every `interval` ms, until `until()`; returns latencies. */
async function probe(interval: number, until: () => boolean): Promise<number[]> {
  const samples: number[] = []
  while (!until()) {
    const started = performance.now()
    try {
      const response = await fetch(`${options.url}/health`, { signal: AbortSignal.timeout(10_000) })
      await response.arrayBuffer()
      samples.push(performance.now() - started)
    } catch {
      samples.push(performance.now() - started)
    }
    const wait = interval - (performance.now() - started)
    if (wait > 0) await Bun.sleep(wait)
  }
  return samples
}

const interval = options.probeIntervalMs ?? 10
const warmStatuses: number[] = []
if (options.warm) {
  const t0 = performance.now()
  const warm = await Promise.all(Array.from({ length: options.warm }, (_, i) => altText(`${options.prefix}-warm-${i}`, t0)))
  warmStatuses.push(...warm.map((a) => a.status))
}
let idleProbeMs: number[] = []
if (options.probe) {
  const idleUntil = performance.now() + (options.idleProbeMs ?? 1000)
  idleProbeMs = await probe(interval, () => performance.now() > idleUntil)
}

let finished = false
const t0 = performance.now()
const burst = Promise.all(Array.from({ length: options.count }, (_, i) => altText(`${options.prefix}-${i}`, t0))).then((answers) => {
  finished = true
  return answers
})
const loadProbe = options.probe ? probe(interval, () => finished) : Promise.resolve([])
const answers = await burst
const burstMs = performance.now() - t0
const loadProbeMs = await loadProbe

const result: BurstResult = { answers, burstMs, idleProbeMs, loadProbeMs, warmStatuses }
console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
process.exit(0)
