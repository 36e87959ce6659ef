// Child process for the burst scenarios (queueing, memory, bombs): fires `count` POST /api/alt-text at
// once (or, with `groups`, every group's requests at once, in the order given), each with its own cache
// key, and records every answer's status and time. Optionally probes GET /health every
// `probeIntervalMs` (idle first, then during the burst) to see the service's event-loop delay from
// outside. Loopback only; every request has a timeout (`timeoutMs`, 30 s); the process exits after
// `lifetimeMs` (90 s) whatever happens, or when its stdin closes.
//   BENCH_BURST='{"url":..., "key":..., "imageUrl":..., "count":40, "prefix":"q1", "warm":2, "probe":true}' bun burst.ts
// Prints one line `BENCH_RESULT {json}`.
import { boundLifetime } from './lib/child'
import { loopback } from './lib/common'

type Group = { label: string; imageUrl: string; count: number }
type Options = {
  url: string
  key: string
  /** One image `count` times, or `groups`. */
  imageUrl?: string
  count?: number
  groups?: Group[]
  prefix: string
  timeoutMs?: number
  lifetimeMs?: number
  /** Requests run one after another before the burst (e.g. to give the queue its time estimate). */
  warm?: number
  probe?: boolean
  probeIntervalMs?: number
  idleProbeMs?: number
}

export type BurstAnswer = {
  status: number
  startMs: number
  ms: number
  retryAfter: string | null
  cached: boolean | null
  /** The error code of a JSON error body (`{"error":{"code":...}}`), or the client-side error. */
  code?: string
  error?: string
  /** The group's label, with `groups`. */
  group?: string
}
export type BurstResult = { answers: BurstAnswer[]; burstMs: number; idleProbeMs: number[]; loadProbeMs: number[]; warmStatuses: number[] }

const options = JSON.parse(process.env.BENCH_BURST ?? '{}') as Options
boundLifetime('burst.ts', options.lifetimeMs ?? 90_000)
loopback(options.url)
const groups: Group[] = options.groups ?? [{ label: '', imageUrl: options.imageUrl ?? '', count: options.count ?? 0 }]

async function altText(imageUrl: string, context: string, t0: number): Promise<BurstAnswer> {
  const startMs = performance.now() - t0
  try {
    const response = await fetch(`${options.url}/api/alt-text`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': options.key },
      body: JSON.stringify({ image_url: loopback(imageUrl), context }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    })
    const text = await response.text()
    const ms = performance.now() - t0 - startMs
    let cached: boolean | null = null
    let code: string | undefined
    try {
      const body = JSON.parse(text) as { cached?: boolean; error?: { code?: string } | string }
      cached = body.cached ?? null
      if (typeof body.error === 'object') code = body.error?.code
    } catch {
      // not JSON
    }
    return { status: response.status, startMs, ms, retryAfter: response.headers.get('retry-after'), cached, ...(code ? { code } : {}) }
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
  const warm = await Promise.all(Array.from({ length: options.warm }, (_, i) => altText(groups[0]!.imageUrl, `${options.prefix}-warm-${i}`, t0)))
  warmStatuses.push(...warm.map((a) => a.status))
}
let idleProbeMs: number[] = []
if (options.probe) {
  const idleUntil = performance.now() + (options.idleProbeMs ?? 1000)
  idleProbeMs = await probe(interval, () => performance.now() > idleUntil)
}

let finished = false
const t0 = performance.now()
const requests = groups.flatMap((group, g) =>
  Array.from({ length: group.count }, (_, i) =>
    altText(group.imageUrl, groups.length > 1 ? `${options.prefix}-${g}-${i}` : `${options.prefix}-${i}`, t0).then((answer) =>
      group.label ? { ...answer, group: group.label } : answer,
    ),
  ),
)
const burst = Promise.all(requests).then((answers) => {
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
