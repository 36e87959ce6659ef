// Child process of scenario 15: a Prometheus-like scraper on one keep-alive connection. Each iteration
// sends GET /health and then GET /metrics (with the bearer token), one after the other, so the baseline
// and the scrape see the same moment of this drifting 2-core VM. Latency is from sending to the whole
// body read, as an outside client sees it. Loopback only; each request has a 15 s timeout; exits after
// 120 s whatever happens, or when its stdin closes.
//   BENCH_SCRAPE='{"url":...,"token":...,"iterations":1000,"warmup":50}' bun scrape.ts
// Prints one line `BENCH_RESULT {json}`.
import { boundLifetime } from './lib/child'
import { loopback } from './lib/common'

type Options = { url: string; token: string; iterations: number; warmup: number }
export type ScrapeResult = { health: number[]; metrics: number[]; statuses: Record<string, number>; bytes: number; exposition: string }

boundLifetime('scrape.ts', 120_000)
const options = JSON.parse(process.env.BENCH_SCRAPE ?? '{}') as Options
loopback(options.url)

const statuses: Record<string, number> = {}
async function timed(path: string, headers: Record<string, string> = {}): Promise<{ ms: number; text: string }> {
  const started = performance.now()
  const response = await fetch(`${options.url}${path}`, { headers, signal: AbortSignal.timeout(15_000) })
  const text = await response.text()
  const ms = performance.now() - started
  const key = `${path} ${response.status}`
  statuses[key] = (statuses[key] ?? 0) + 1
  return { ms, text }
}

const auth = { authorization: `Bearer ${options.token}` }
const health: number[] = []
const metrics: number[] = []
let exposition = ''
for (let i = 0; i < options.warmup + options.iterations; i++) {
  const h = await timed('/health')
  const m = await timed('/metrics', auth)
  exposition = m.text
  if (i < options.warmup) continue
  health.push(h.ms)
  metrics.push(m.ms)
}
const result: ScrapeResult = { health, metrics, statuses, bytes: new TextEncoder().encode(exposition).byteLength, exposition }
console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
process.exit(0)
