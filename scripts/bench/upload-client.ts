// Child process for scenario 10 (uploads). Two modes:
//   "paired": each iteration sends the image's raw bytes to the floor (upload-floor.ts), then the same
//             image to the service as multipart/form-data and as base64 JSON (alternating which goes
//             first), each with its own cache key (context <prefix>-<n>); records each one's server-side
//             time to the model hand-off (the floor: read + prepare; the service: its Server-Timing stages
//             receive + inspect + cache + prepare + queue) and the client's wall time.
//   "burst":  `count` uploads at once (multipart or base64), each its own cache key; records statuses.
// Runs until `seconds` have passed (at least `min`, at most `max` iterations). Loopback only; every request
// has a 60 s timeout; exits after 180 s whatever happens, or when its stdin closes.
//   BENCH_UPLOAD='{"mode":"paired","service":...,"floor":...,"key":...,"imagePath":...,"format":"jpeg","width":4000,"height":3000,"prefix":"r0","seconds":6,"min":4,"max":40}'
// Prints one line `BENCH_RESULT {json}`.
import { readFileSync } from 'node:fs'
import { boundLifetime } from './lib/child'
import { loopback } from './lib/common'

type Options = {
  mode: 'paired' | 'burst'
  service: string
  floor?: string
  key: string
  imagePath: string
  format: string
  width: number
  height: number
  prefix: string
  seconds?: number
  min?: number
  max?: number
  /** burst */
  count?: number
  kind?: 'multipart' | 'base64'
}

/** Server-side ms to the model hand-off, the stages it is made of, and the client's wall time. */
export type UploadSample = { status: number; handoffMs: number; wallMs: number; stages: Record<string, number>; code?: string }
export type UploadPairedResult = { iterations: number; floor: UploadSample[]; multipart: UploadSample[]; base64: UploadSample[] }
export type UploadBurstResult = { statuses: Record<string, number>; burstMs: number }

boundLifetime('upload-client.ts', 180_000)
const options = JSON.parse(process.env.BENCH_UPLOAD ?? '{}') as Options
loopback(options.service)
if (options.floor) loopback(options.floor)
const image = new Uint8Array(readFileSync(options.imagePath))
const encoded = Buffer.from(image).toString('base64')
const BOUNDARY = '----alttext-bench-upload'
/** The multipart body around the image: everything but the context field is the same each time. */
const multipartTail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`)
const HANDOFF_STAGES = ['receive', 'inspect', 'cache', 'prepare', 'queue']

function multipartBody(context: string): Uint8Array {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="context"\r\n\r\n${context}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="large.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
  )
  return Buffer.concat([head, image, multipartTail])
}

const base64Body = (context: string) => `{"context":${JSON.stringify(context)},"image_base64":"${encoded}"}`

function stagesOf(header: string | null): Record<string, number> {
  const stages: Record<string, number> = {}
  for (const entry of (header ?? '').split(',')) {
    const [name, dur] = entry.trim().split(';dur=')
    if (name && dur !== undefined && Number.isFinite(Number(dur))) stages[name] = Number(dur)
  }
  return stages
}

async function send(url: string, body: string | Uint8Array, headers: Record<string, string>, stageNames: string[]): Promise<UploadSample> {
  const started = performance.now()
  try {
    const response = await fetch(url, { method: 'POST', headers, body: body as string | Uint8Array<ArrayBuffer>, signal: AbortSignal.timeout(60_000) })
    const text = await response.text()
    const wallMs = performance.now() - started
    const stages = stagesOf(response.headers.get('server-timing'))
    const handoffMs = stageNames.reduce((sum, name) => sum + (stages[name] ?? 0), 0)
    let code: string | undefined
    if (response.status >= 400) {
      try {
        code = (JSON.parse(text) as { error?: { code?: string } }).error?.code
      } catch {
        code = text.slice(0, 80)
      }
    }
    return { status: response.status, handoffMs, wallMs, stages, ...(code ? { code } : {}) }
  } catch (error) {
    return { status: 0, handoffMs: Number.NaN, wallMs: performance.now() - started, stages: {}, code: String(error).slice(0, 120) }
  }
}

const toService = (kind: 'multipart' | 'base64', context: string) =>
  kind === 'multipart'
    ? send(
        `${options.service}/api/alt-text`,
        multipartBody(context),
        { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'x-api-key': options.key },
        HANDOFF_STAGES,
      )
    : send(`${options.service}/api/alt-text`, base64Body(context), { 'content-type': 'application/json', 'x-api-key': options.key }, HANDOFF_STAGES)

const toFloor = () =>
  send(`${options.floor}/?format=${options.format}&width=${options.width}&height=${options.height}`, image, { 'content-type': 'application/octet-stream' }, [
    'receive',
    'prepare',
  ])

if (options.mode === 'paired') {
  const result: UploadPairedResult = { iterations: 0, floor: [], multipart: [], base64: [] }
  const until = performance.now() + (options.seconds ?? 5) * 1000
  for (let i = 0; i < (options.max ?? 40) && (i < (options.min ?? 3) || performance.now() < until); i++) {
    result.floor.push(await toFloor())
    const order: Array<'multipart' | 'base64'> = i % 2 === 0 ? ['multipart', 'base64'] : ['base64', 'multipart']
    for (const kind of order) result[kind].push(await toService(kind, `${options.prefix}-${kind}-${i + 1}`))
    result.iterations = i + 1
  }
  console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
} else {
  const kind = options.kind ?? 'multipart'
  const started = performance.now()
  const answers = await Promise.all(Array.from({ length: options.count ?? 20 }, (_, i) => toService(kind, `${options.prefix}-${kind}-burst-${i}`)))
  const statuses: Record<string, number> = {}
  for (const answer of answers) {
    const key = answer.code ? `${answer.status} ${answer.code}` : String(answer.status)
    statuses[key] = (statuses[key] ?? 0) + 1
  }
  const result: UploadBurstResult = { statuses, burstMs: performance.now() - started }
  console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
}
process.exit(0)
