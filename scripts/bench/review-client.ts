// Child process of scenario 20: one keep-alive connection, as an integration polling its review queue.
// Each iteration sends, one after the other: GET /api/usage with a personal key (the baseline) and the
// same with an organisation key of an author (the role check), in turns first, the pending queue (50), the pending queue of
// one target kind (50), and one decision (POST /api/suggestions/:id/accept on a pending suggestion).
// Latency is from sending to the whole body read. Loopback only; each request has a 15 s timeout; exits
// after 120 s whatever happens, or when its stdin closes.
//   BENCH_REVIEW='{"url":...,"personalKey":...,"authorKey":...,"reviewerKey":...,"kind":"file","ids":[...],"iterations":500,"warmup":50}'
// Prints one line `BENCH_RESULT {json}`.
import { boundLifetime } from './lib/child'
import { loopback } from './lib/common'

type Options = {
  url: string
  personalKey: string
  authorKey: string
  reviewerKey: string
  kind: string
  ids: string[]
  iterations: number
  warmup: number
}
export type ReviewResult = {
  usagePersonal: number[]
  usageOrg: number[]
  list: number[]
  listKind: number[]
  accept: number[]
  statuses: Record<string, number>
  /** Lists that did not hold 50 pending suggestions (of the kind asked for): the figure would be of a short page. */
  shortPages: number
  total: number
}

boundLifetime('review-client.ts', 120_000)
const options = JSON.parse(process.env.BENCH_REVIEW ?? '{}') as Options
loopback(options.url)

const statuses: Record<string, number> = {}
async function timed(label: string, path: string, key: string, method = 'GET'): Promise<{ ms: number; body: string }> {
  const started = performance.now()
  const init: RequestInit = { method, headers: { 'x-api-key': key }, signal: AbortSignal.timeout(15_000) }
  if (method === 'POST') init.headers = { 'x-api-key': key, 'content-type': 'application/json' }
  if (method === 'POST') init.body = '{}'
  const response = await fetch(`${options.url}${path}`, init)
  const body = await response.text()
  const ms = performance.now() - started
  const key2 = `${label} ${response.status}`
  statuses[key2] = (statuses[key2] ?? 0) + 1
  return { ms, body }
}

const result: ReviewResult = { usagePersonal: [], usageOrg: [], list: [], listKind: [], accept: [], statuses, shortPages: 0, total: 0 }
const check = (body: string, kind: string | null) => {
  const page = JSON.parse(body) as { suggestions?: { status: string; target: { kind: string } }[]; total?: number }
  const rows = page.suggestions ?? []
  if (rows.length !== 50 || rows.some((s) => s.status !== 'pending' || (kind !== null && s.target.kind !== kind))) result.shortPages++
  result.total = page.total ?? Number.NaN
}
for (let i = 0; i < options.warmup + options.iterations; i++) {
  const id = options.ids[i]
  if (id === undefined) throw new Error(`only ${options.ids.length} pending ids for ${options.warmup + options.iterations} iterations`)
  // The two keys take turns going first, so neither always follows the decision's write.
  const first = i % 2 === 0 ? options.personalKey : options.authorKey
  const a = await timed(i % 2 === 0 ? 'usage personal' : 'usage org', '/api/usage', first)
  const b = await timed(i % 2 === 0 ? 'usage org' : 'usage personal', '/api/usage', i % 2 === 0 ? options.authorKey : options.personalKey)
  const [personal, org] = i % 2 === 0 ? [a, b] : [b, a]
  const list = await timed('list', '/api/suggestions?status=pending&limit=50', options.reviewerKey)
  const listKind = await timed('list kind', `/api/suggestions?status=pending&target_kind=${encodeURIComponent(options.kind)}&limit=50`, options.reviewerKey)
  const accept = await timed('accept', `/api/suggestions/${id}/accept`, options.reviewerKey, 'POST')
  if (i < options.warmup) continue
  check(list.body, null)
  check(listKind.body, options.kind)
  result.usagePersonal.push(personal.ms)
  result.usageOrg.push(org.ms)
  result.list.push(list.ms)
  result.listKind.push(listKind.ms)
  result.accept.push(accept.ms)
}
console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
process.exit(0)
