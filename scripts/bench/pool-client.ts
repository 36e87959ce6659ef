// Child process for scenario 16 (a pool of model hosts), one of three modes:
//   direct    the baseline: /api/chat straight to the fake hosts, `perHost` calls in flight at each, until
//             `total` have answered;
//   service   POST /api/alt-text to the service, `inFlight` requests in flight (closed loop: each answer
//             sends the next), until `total` have answered or `durationMs` has passed; with `kill`, sends
//             SIGKILL to that fake host's process (one the bench started) `atMs` after the start;
//   overhead  `pairs` times, one after another: one POST /api/alt-text to each of `services` (their
//             Server-Timing `model` stage, the service's own time around the model call) and the same kind of
//             /api/chat sent straight to an instant host of `hosts`, timed here; the order turns each time.
// Every request goes to loopback and has a timeout; the process exits after `lifetimeMs` whatever happens,
// or when its stdin closes. Prints one line `BENCH_RESULT {json}`.
//   BENCH_POOL='{"mode":"service","url":...,"key":...,"imageUrl":...,"inFlight":12,"total":120,"prefix":"r0"}' bun pool-client.ts
import { readFileSync } from 'node:fs'
import { boundLifetime } from './lib/child'
import { loopback } from './lib/common'

type Options = {
  mode: 'direct' | 'service' | 'overhead'
  /** The service (service mode). */
  url?: string
  key?: string
  /** The services compared (overhead mode). */
  services?: { url: string; key: string }[]
  imageUrl?: string
  /** The fake hosts (direct, overhead) and the image they are sent (a file of the bench's image folder). */
  hosts?: string[]
  imageFile?: string
  perHost?: number
  inFlight?: number
  total?: number
  durationMs?: number
  kill?: { pid: number; atMs: number }
  pairs?: number
  prefix: string
  lifetimeMs?: number
}

export type PoolAnswer = {
  startMs: number
  endMs: number
  status: number
  code?: string
  error?: string
  /** Server-Timing stages of an alt-text answer, ms. */
  modelMs?: number
  queueMs?: number
}
export type PoolResult = {
  answers: PoolAnswer[]
  /** When the kill was sent, ms after the start (service mode with `kill`). */
  killedAtMs?: number
  /** Overhead mode: each service's `model` stage, and the direct calls, ms; entry i of each from round i. */
  modelStageMs?: number[][]
  directMs?: number[]
}

const options = JSON.parse(process.env.BENCH_POOL ?? '{}') as Options
boundLifetime('pool-client.ts', options.lifetimeMs ?? 120_000)
if (options.url) loopback(options.url)
for (const service of options.services ?? []) loopback(service.url)
for (const host of options.hosts ?? []) loopback(host)

const t0 = performance.now()
const now = () => performance.now() - t0

/** A chat request shaped like the service's own (system, prompt, one image, no streaming, no thinking). */
const chatBody = (image: string, n: number) =>
  JSON.stringify({
    model: 'llava',
    stream: false,
    think: false,
    messages: [
      { role: 'system', content: 'You write alt text for images on web pages, following WCAG 2.1 success criterion 1.1.1.' },
      { role: 'user', content: `Describe this image in one sentence of at most 125 characters. (call ${n})`, images: [image] },
    ],
    options: { temperature: 0.2, num_predict: 100 },
  })

async function chat(host: string, body: string): Promise<PoolAnswer> {
  const startMs = now()
  try {
    const response = await fetch(`${host}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(30_000),
    })
    await response.arrayBuffer()
    return { startMs, endMs: now(), status: response.status }
  } catch (error) {
    return { startMs, endMs: now(), status: 0, error: String(error) }
  }
}

async function altText(context: string, url = options.url, key = options.key): Promise<PoolAnswer> {
  const startMs = now()
  try {
    const response = await fetch(`${url}/api/alt-text`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key ?? '' },
      body: JSON.stringify({ image_url: loopback(options.imageUrl ?? ''), context }),
      signal: AbortSignal.timeout(30_000),
    })
    const text = await response.text()
    const endMs = now()
    let code: string | undefined
    try {
      const body = JSON.parse(text) as { error?: { code?: string } }
      code = body.error?.code
    } catch {
      // not JSON
    }
    const timing = response.headers.get('server-timing') ?? ''
    const stage = (name: string) => {
      const dur = new RegExp(`(?:^|,\\s*)${name};dur=([\\d.]+)`).exec(timing)?.[1]
      return dur === undefined ? undefined : Number(dur)
    }
    const [modelMs, queueMs] = [stage('model'), stage('queue')]
    return {
      startMs,
      endMs,
      status: response.status,
      ...(code && { code }),
      ...(modelMs !== undefined && { modelMs }),
      ...(queueMs !== undefined && { queueMs }),
    }
  } catch (error) {
    return { startMs, endMs: now(), status: 0, error: String(error) }
  }
}

/** Keeps `width` calls of `next(n)` in flight until `more()` is false; every answer starts the next call. */
async function closedLoop<T>(width: number, more: (started: number) => boolean, next: (n: number, lane: number) => Promise<T>): Promise<T[]> {
  const answers: T[] = []
  let started = 0
  const lane = async (index: number) => {
    while (more(started)) answers.push(await next(started++, index))
  }
  await Promise.all(Array.from({ length: width }, (_, index) => lane(index)))
  return answers
}

const image = options.imageFile ? readFileSync(options.imageFile).toString('base64') : ''
const result: PoolResult = { answers: [] }

if (options.mode === 'direct') {
  const hosts = options.hosts ?? []
  const perHost = options.perHost ?? 2
  const total = options.total ?? 0
  // Lane i always calls host i mod n: `perHost` calls in flight at each host, as the pool would keep them.
  result.answers = await closedLoop(
    hosts.length * perHost,
    (started) => started < total,
    (n, lane) => chat(hosts[lane % hosts.length]!, chatBody(image, n)),
  )
} else if (options.mode === 'service') {
  const total = options.total ?? Number.POSITIVE_INFINITY
  const until = options.durationMs ?? Number.POSITIVE_INFINITY
  const { kill } = options
  if (kill) {
    setTimeout(() => {
      result.killedAtMs = now()
      try {
        process.kill(kill.pid, 'SIGKILL')
      } catch (error) {
        console.error(`pool-client.ts: could not kill ${kill.pid}: ${String(error)}`)
      }
    }, kill.atMs)
  }
  result.answers = await closedLoop(
    options.inFlight ?? 1,
    (started) => started < total && now() < until,
    (n) => altText(`${options.prefix}-${n}`),
  )
} else {
  const hosts = options.hosts ?? []
  const services = options.services ?? []
  const modelStageMs: number[][] = services.map(() => [])
  const directMs: number[] = []
  for (let i = 0; i < (options.pairs ?? 0); i++) {
    // Every service and the direct call, in an order that turns each round, so none always goes first.
    const calls = [...services.map((_, s) => s), -1]
    const order = [...calls.slice(i % calls.length), ...calls.slice(0, i % calls.length)]
    const round: number[] = []
    for (const which of order) {
      if (which < 0) {
        const direct = await chat(hosts[i % hosts.length]!, chatBody(image, i))
        round[services.length] = direct.status === 200 ? direct.endMs - direct.startMs : Number.NaN
      } else {
        const answer = await altText(`${options.prefix}-${i}`, services[which]!.url, services[which]!.key)
        result.answers.push(answer)
        round[which] = answer.status === 200 && answer.modelMs !== undefined ? answer.modelMs : Number.NaN
      }
    }
    // A round counts only when every call in it answered.
    if (round.some((ms) => Number.isNaN(ms))) continue
    for (let s = 0; s < services.length; s++) modelStageMs[s]!.push(round[s]!)
    directMs.push(round[services.length]!)
  }
  result.modelStageMs = modelStageMs
  result.directMs = directMs
}

console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
process.exit(0)
