// The HTTP client of the client commands: POST /api/alt-text with a local file (multipart upload) or an
// image URL (image_url), waiting out 429 rate_limited and 503 answers as their Retry-After says, and
// retrying network errors a few times. A 4xx other than 429 rate_limited is never retried, nor is 429
// quota_exceeded (its Retry-After counts down to the end of the month). A retry after a lost answer is
// safe: the service caches each result, so asking again for an image it answered costs no credit.
//
// One client is shared by a run's workers: when one of them is told to wait, or the rate-limit headers
// say the window is used up, every worker waits before its next request instead of each running into
// its own 429.
import { basename } from 'node:path'
import type { AltTextResult, Style } from '../../modules/alt-text/model'
import type { ReviewResult } from '../../modules/review/model'

/** The options of POST /api/alt-text; unset ones take the service's defaults. */
export type AltTextOptions = {
  language?: string
  /** Instead of language: the first described, the others translated (see POST /api/alt-text). */
  languages?: string[]
  style?: Style
  max_length?: number
  context?: string
  keywords?: string[]
  detect_decorative?: boolean
  long_description?: boolean
}

/** One image: a local file (uploaded as multipart/form-data) or an https URL (sent as image_url). */
export type ImageInput = { file: string; url?: undefined } | { url: string; file?: undefined }

export type DescribeOutcome = Outcome<AltTextResult>

/** The answer of POST /api/alt-text/review, or why none came (as DescribeOutcome). */
export type ReviewOutcome = Outcome<ReviewResult>

type Outcome<T> =
  | { ok: true; body: T; attempts: number }
  | {
      ok: false
      /** The HTTP status; 0 when no answer came (network error, timeout, aborted). */
      status: number
      /** The error body's code, or `network_error`, `timeout`, `aborted`, `bad_response`. */
      code: string
      message: string
      attempts: number
      /** The service's X-Request-Id of the last answer, to quote in a report. */
      requestId?: string
    }

/** Told before each wait, so a progress display can say why nothing moves. */
export type WaitNotice = { seconds: number; status: number; code: string; attempt: number }

export type ClientOptions = {
  /** Base URL of the service, without a trailing slash. */
  url: string
  key: string
  userAgent: string
  /** Attempts per image for 429 rate_limited and 5xx answers (default 8). */
  maxAttempts?: number
  /** Attempts per image after network errors (default 4). */
  maxNetworkAttempts?: number
  /** A Retry-After longer than this (seconds) is not waited for: the image fails (default 300). */
  maxWaitSeconds?: number
  /** Time limit of one attempt in ms, from sending to the whole answer (default 180 000). */
  attemptTimeoutMs?: number
  onWait?: (notice: WaitNotice) => void
}

/** Credits left (GET /api/usage), or why the service would not say: checks the URL and key before a run. */
export type UsageOutcome = { ok: true; remaining: number } | { ok: false; status: number; code: string; message: string }

export type AltTextClient = {
  describeImage(input: ImageInput, options: AltTextOptions, signal?: AbortSignal): Promise<DescribeOutcome>
  /** POST /api/alt-text/review: a verdict on `altText`, retried and waited out as describeImage is. */
  review(input: ImageInput, altText: string, options: AltTextOptions, signal?: AbortSignal): Promise<ReviewOutcome>
  /** GET /api/usage once, not retried. */
  usage(signal?: AbortSignal): Promise<UsageOutcome>
}

/** Answers worth asking again after a wait: the service said "later" or a proxy/model hiccup. */
const RETRY_STATUSES = new Set([429, 502, 503, 504])
/** Without Retry-After: 1 s, 2 s, 4 s ... up to this. */
const MAX_BACKOFF_MS = 30_000

type Answer = { status: number; code: string; message: string; retryAfter: number | null; requestId?: string; body?: unknown }

/** What a 200 of each route must carry to count as its answer. */
const ROUTES = {
  describe: { path: '/api/alt-text', field: 'alt_text' },
  review: { path: '/api/alt-text/review', field: 'verdict' },
} as const
type Route = (typeof ROUTES)[keyof typeof ROUTES]

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/** Retry-After as whole seconds (RFC 9110: delay-seconds or an HTTP date); null when absent or unreadable. */
function retryAfterSeconds(header: string | null): number | null {
  if (header === null) return null
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000))
}

/** Up to a quarter of the wait (at most 1 s) added at random, so workers told the same time spread out. */
const jitter = (ms: number) => Math.random() * Math.min(1000, ms / 4 + 100)

function requestBody(input: ImageInput, options: AltTextOptions & { alt_text?: string }): { body: string | FormData; headers: Record<string, string> } {
  if (input.url !== undefined) {
    return { body: JSON.stringify({ image_url: input.url, ...options }), headers: { 'content-type': 'application/json' } }
  }
  // Multipart: fields as the form takes them (keywords repeated, booleans as "true"/"false"), the file last.
  const form = new FormData()
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const entry of value) form.append(name, entry)
    else form.append(name, String(value))
  }
  form.append('image', Bun.file(input.file), basename(input.file))
  return { body: form, headers: {} }
}

async function readAnswer(response: Response, route: Route): Promise<Answer> {
  const requestId = response.headers.get('x-request-id') ?? undefined
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'))
  const text = await response.text()
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (response.status === 200) {
    if (parsed && typeof parsed[route.field] === 'string') return { status: 200, code: 'ok', message: '', retryAfter, requestId, body: parsed }
    return { status: 200, code: 'bad_response', message: `the service answered 200 without ${route.field}`, retryAfter, requestId }
  }
  const error = parsed?.error
  if (error && typeof error === 'object' && typeof error.code === 'string') {
    return { status: response.status, code: error.code, message: String(error.message ?? ''), retryAfter, requestId }
  }
  const message = typeof error === 'string' ? error : `HTTP ${response.status}: ${text.slice(0, 200).replace(/\s+/g, ' ')}`
  return { status: response.status, code: `http_${response.status}`, message, retryAfter, requestId }
}

export function createClient(options: ClientOptions): AltTextClient {
  const maxAttempts = options.maxAttempts ?? 8
  const maxNetworkAttempts = options.maxNetworkAttempts ?? 4
  const maxWaitMs = (options.maxWaitSeconds ?? 300) * 1000
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 180_000
  // Shared by every request of this client: no request is sent before this time (ms since epoch).
  let pausedUntil = 0

  const pauseFor = (ms: number) => {
    pausedUntil = Math.max(pausedUntil, Date.now() + ms)
  }

  async function attempt(route: Route, input: ImageInput, altOptions: AltTextOptions & { alt_text?: string }, signal?: AbortSignal): Promise<Answer> {
    const { body, headers } = requestBody(input, altOptions)
    const timeout = AbortSignal.timeout(attemptTimeoutMs)
    const response = await fetch(`${options.url}${route.path}`, {
      method: 'POST',
      headers: { ...headers, 'x-api-key': options.key, 'user-agent': options.userAgent, accept: 'application/json' },
      body,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    })
    // The window is used up: everyone waits for it to reset rather than collecting 429s.
    if (response.headers.get('ratelimit-remaining') === '0') {
      const reset = Number(response.headers.get('ratelimit-reset'))
      if (Number.isFinite(reset) && reset > 0) pauseFor(Math.min(reset * 1000, maxWaitMs))
    }
    return readAnswer(response, route)
  }

  /** One request to `route`, asked again while the service says "later" and the network fails (see the top of this file). */
  async function send<T>(route: Route, input: ImageInput, altOptions: AltTextOptions & { alt_text?: string }, signal?: AbortSignal): Promise<Outcome<T>> {
    let attempts = 0
    let networkFailures = 0
    let answerFailures = 0
    for (;;) {
      await sleep(pausedUntil - Date.now(), signal)
      if (signal?.aborted) return { ok: false, status: 0, code: 'aborted', message: 'stopped before an answer came', attempts }
      attempts++
      let answer: Answer
      try {
        answer = await attempt(route, input, altOptions, signal)
      } catch (error) {
        if (signal?.aborted) return { ok: false, status: 0, code: 'aborted', message: 'stopped before an answer came', attempts }
        const name = error instanceof Error ? error.name : ''
        const code = name === 'TimeoutError' ? 'timeout' : 'network_error'
        const message =
          code === 'timeout'
            ? `no answer within ${attemptTimeoutMs / 1000} s`
            : `cannot reach ${options.url}: ${error instanceof Error ? error.message : String(error)}`
        // A local file that cannot be read is no network trouble: say so at once.
        if (input.file !== undefined && (error as NodeJS.ErrnoException)?.code === 'ENOENT') {
          return { ok: false, status: 0, code: 'file_unreadable', message: `cannot read ${input.file}`, attempts }
        }
        networkFailures++
        if (networkFailures >= maxNetworkAttempts) return { ok: false, status: 0, code, message, attempts }
        const wait = Math.min(MAX_BACKOFF_MS, 500 * 2 ** (networkFailures - 1))
        options.onWait?.({ seconds: Math.ceil(wait / 1000), status: 0, code, attempt: attempts })
        await sleep(wait + jitter(wait), signal)
        continue
      }
      if (answer.body) return { ok: true, body: answer.body as T, attempts }
      const retryable = RETRY_STATUSES.has(answer.status) && answer.code !== 'quota_exceeded'
      answerFailures++
      const failure = { ok: false as const, status: answer.status, code: answer.code, message: answer.message, attempts, requestId: answer.requestId }
      if (!retryable || answerFailures >= maxAttempts) return failure
      const wait = answer.retryAfter !== null ? answer.retryAfter * 1000 : Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (answerFailures - 1))
      if (wait > maxWaitMs) return { ...failure, message: `${failure.message} (Retry-After ${Math.ceil(wait / 1000)} s is longer than this run waits)` }
      // A "later" for one request is a "later" for all of them (rate limit, full queue).
      if (answer.status === 429 || answer.status === 503) pauseFor(wait)
      options.onWait?.({ seconds: Math.ceil(wait / 1000), status: answer.status, code: answer.code, attempt: attempts })
      await sleep(wait + jitter(wait), signal)
    }
  }

  return {
    async usage(signal) {
      const timeout = AbortSignal.timeout(30_000)
      let response: Response
      try {
        response = await fetch(`${options.url}/api/usage`, {
          headers: { 'x-api-key': options.key, 'user-agent': options.userAgent, accept: 'application/json' },
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        })
      } catch (error) {
        return {
          ok: false,
          status: 0,
          code: 'network_error',
          message: `cannot reach ${options.url}: ${error instanceof Error ? error.message : String(error)}`,
        }
      }
      const text = await response.text()
      let parsed: any
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = undefined
      }
      if (response.status === 200 && typeof parsed?.credits?.remaining === 'number') return { ok: true, remaining: parsed.credits.remaining }
      const error = parsed?.error
      if (error && typeof error.code === 'string') return { ok: false, status: response.status, code: error.code, message: String(error.message ?? '') }
      return {
        ok: false,
        status: response.status,
        code: `http_${response.status}`,
        message: `${options.url} does not answer like an alttext service (HTTP ${response.status})`,
      }
    },
    describeImage: (input, altOptions, signal) => send<AltTextResult>(ROUTES.describe, input, altOptions, signal),
    // detect_decorative is the alt-text route's own: "decorative" is always one of the verdicts.
    review: (input, altText, { detect_decorative: _always, ...altOptions }, signal) =>
      send<ReviewResult>(ROUTES.review, input, { ...altOptions, alt_text: altText }, signal),
  }
}

/**
 * Why no other image of a run can succeed either after this failure (the run stops starting new ones),
 * or undefined: no credit left, or a key the service no longer accepts.
 */
export function stopReason(status: number, code: string): string | undefined {
  if (code === 'quota_exceeded') return 'no credit left this period'
  if (status === 401) return `the service no longer accepts the API key (${code})`
  return undefined
}
