// Child process for the one-connection latency figures of scenarios 2, 3 and 6: a paired client.
// Each iteration measures the floor (in this process) and then sends the same request to each service,
// one after the other, so every service sample has a floor sample taken within a second of it. This
// 2-core VM's speed drifts by ±30 % over tens of seconds; a ratio of two measurements taken seconds
// apart would carry that drift, a ratio of paired samples does not.
//   mode "miss": floor (fetch + decode/resize/encode), then POST /api/alt-text with context <prefix>-<n>,
//                n = 1, 2, ... (the numbering of wrk/alt-text.lua, so wrk can replay them)
//   mode "hit":  fetch only, then the same requests again (n = 1..count, over and over)
// Runs until `seconds` have passed (at least `min`, at most `max` iterations). Loopback only; each
// request has a 30 s timeout; exits after 120 s whatever happens, or when its stdin closes.
//   BENCH_PAIRED='{"mode":"miss","services":[url,...],"key":...,"imageUrl":...,"caPath":...,"format":"jpeg","width":3000,"height":2000,"prefix":"r0-jpeg","seconds":6,"min":8,"max":60}'
// Prints one line `BENCH_RESULT {json}`.
import { readFileSync } from 'node:fs'
import { fetchSamples, floorSample, type FloorSample } from './lib/floor'
import type { BenchFormat } from './lib/images'
import { boundLifetime } from './lib/child'

type Options = {
  mode: 'miss' | 'hit'
  services: string[]
  key: string
  imageUrl: string
  caPath: string
  format: BenchFormat
  width: number
  height: number
  prefix: string
  seconds: number
  min: number
  max: number
  /** hit mode: how many contexts the miss run made (1..count). */
  count?: number
}

/** `stages`: the service's Server-Timing (ms per stage), when it sent one. */
export type PairedAnswer = { ms: number; status: number; cached: boolean | null; stages?: Record<string, number> }
export type PairedResult = {
  iterations: number
  floor: FloorSample[]
  fetchMs: number[]
  /** Per service, in the order given. */
  answers: PairedAnswer[][]
}

boundLifetime('paired.ts', 120_000)

const options = JSON.parse(process.env.BENCH_PAIRED ?? '{}') as Options
const caPem = readFileSync(options.caPath, 'utf8')

async function altText(service: string, context: string): Promise<PairedAnswer> {
  const started = performance.now()
  try {
    const response = await fetch(`${service}/api/alt-text`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': options.key },
      body: JSON.stringify({ image_url: options.imageUrl, context }),
      signal: AbortSignal.timeout(30_000),
    })
    const text = await response.text()
    const ms = performance.now() - started
    const stages: Record<string, number> = {}
    for (const entry of (response.headers.get('server-timing') ?? '').split(',')) {
      const [name, dur] = entry.trim().split(';dur=')
      if (name && dur !== undefined && Number.isFinite(Number(dur))) stages[name] = Number(dur)
    }
    let cached: boolean | null = null
    try {
      cached = (JSON.parse(text) as { cached?: boolean }).cached ?? null
    } catch {
      // not JSON
    }
    return { ms, status: response.status, cached, stages }
  } catch {
    return { ms: performance.now() - started, status: 0, cached: null }
  }
}

const result: PairedResult = { iterations: 0, floor: [], fetchMs: [], answers: options.services.map(() => []) }
const until = performance.now() + options.seconds * 1000
for (let i = 0; i < options.max && (i < options.min || performance.now() < until); i++) {
  if (options.mode === 'miss') {
    result.floor.push(await floorSample(options.imageUrl, caPem, options.format))
  } else {
    result.fetchMs.push(...(await fetchSamples(options.imageUrl, caPem, 1)))
  }
  const context = `${options.prefix}-${options.mode === 'miss' ? i + 1 : (i % Math.max(1, options.count ?? 1)) + 1}`
  // Alternate which service goes first.
  const order = options.services.map((_, index) => index)
  if (i % 2 === 1) order.reverse()
  for (const index of order) result.answers[index]!.push(await altText(options.services[index]!, context))
  result.iterations = i + 1
}
console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
process.exit(0)
