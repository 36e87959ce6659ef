// Prometheus metrics of this process, with prom-client: one registry, owned by the app and closed with it.
// Events are counted where they pass a seam that already exists (a served request, a generation's stage
// timings, a cache lookup, a committed credit, a refused queue slot, a recorded batch item, a webhook
// attempt); states (queue depth, model hosts, open batch items, accounts, memory, event-loop delay) are
// read when scraped. Who may scrape is decided here too: the bearer token of ALTTEXT_METRICS_TOKEN (kept
// only as a hash), or, with none set, a loopback client.
import { timingSafeEqual } from 'node:crypto'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client'
import type { CreditLedger } from '../../credits/service'
import { blockedAddressKind } from '../../intake/address'
import { sha256Hex } from '../../shared/crypto'
import { ApiError } from '../../shared/errors'
import type { AltTextCacheStore } from '../../store/contract'
import type { GenerationQueue } from '../alt-text/queue'
import { LANGUAGE_RETRY_OUTCOMES, type LanguageRetryOutcome } from '../alt-text/language'
import type { AltTextService, Stage, StageTimings } from '../alt-text/service'
import type { AttemptOutcome } from '../webhooks/dispatcher'
import { FALLBACK_KINDS, type FallbackKind } from '../../redis/connection'
import { type GenerationKind, METHOD_LABELS, type MetricsSources, UNMATCHED_ROUTE } from './model'

/** A served request as metrics see it: `route` is the matched template (`/api/batches/:id`), undefined for a 404. */
export type ServedRequest = { method: string; route: string | undefined; status: number; durationMs: number }

export type MetricsService = {
  /** Throws 401 invalid_metrics_token or 403 metrics_loopback_only unless this client may scrape. */
  authorize(authorization: string | null, clientAddress: string): void
  /** The exposition, and its Content-Type. */
  render(): Promise<string>
  readonly contentType: string
  /** The request context's hook: one served request. */
  served(request: ServedRequest): void
  /** The alt-text service, its stage timings observed (single calls and batch items). */
  observeAltText(service: AltTextService): AltTextService
  /** The cache store, its lookups counted as hits and misses. */
  observeCache(cache: AltTextCacheStore): AltTextCacheStore
  /** The credit ledger, each committed charge counted. */
  observeCredits(ledger: CreditLedger): CreditLedger
  /** The generation queue, its refusals (503 overloaded) counted. */
  observeQueue(queue: GenerationQueue): GenerationQueue
  batchItemRecorded(state: 'done' | 'failed'): void
  webhookAttempt(outcome: AttemptOutcome): void
  /** One rate-limit or slow-down check decided by this replica alone because Redis did not answer. */
  rateLimitFallback(kind: FallbackKind): void
  /** One answer not in the language asked for: translated on a second ask, or still not in it. */
  languageRetry(outcome: LanguageRetryOutcome): void
  /** Stops the event-loop monitor and empties the registry. */
  close(): void
}

// Few buckets on purpose: a scrape's cost grows with its samples (buckets × routes or stages).
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15]
// Batch items may wait minutes for a model slot; a single call at most its 15-second deadline.
const STAGE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 60, 300]
/** The stages worth a histogram: getting the image (a download, or an upload received and checked), preparing it, waiting for a slot, the model. */
const OBSERVED_STAGES = new Set<Stage>(['receive', 'inspect', 'fetch', 'prepare', 'queue', 'model'])
/** How often the event-loop monitor samples (ms): finer costs more wake-ups. */
const EVENT_LOOP_RESOLUTION_MS = 20
/** The event-loop delay quantiles exposed (1 is the largest delay). */
const EVENT_LOOP_QUANTILES = [0.5, 0.99, 1]

/** What a summary exposes when scraped: its quantiles, and the sum and count of every observation so far. */
type SummaryReading = { quantiles: [quantile: number, value: number][]; sum: number; count: number }

/**
 * A summary whose values are read, not observed one by one: the event-loop monitor keeps its own
 * histogram. Exposed as a real summary (quantile series, `_sum`, `_count`), which Prometheus's linter
 * requires of any metric with a `quantile` label.
 */
class ReadSummary extends Summary {
  constructor(
    private readonly metricName: string,
    help: string,
    registers: Registry[],
    private readonly read: () => SummaryReading,
  ) {
    super({ name: metricName, help, percentiles: EVENT_LOOP_QUANTILES, registers })
  }

  override async get() {
    const metric = await super.get()
    const { quantiles, sum, count } = this.read()
    return {
      ...metric,
      values: [
        ...quantiles.map(([quantile, value]) => ({ labels: { quantile }, value })),
        { metricName: `${this.metricName}_sum`, labels: {}, value: sum },
        { metricName: `${this.metricName}_count`, labels: {}, value: count },
      ],
    }
  }
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i

export function createMetricsService(deps: { token: string | undefined; sources: MetricsSources }): MetricsService {
  const { sources } = deps
  const tokenHash = deps.token === undefined ? null : Buffer.from(sha256Hex(deps.token), 'hex')
  const registry = new Registry()
  const registers = [registry]

  const requests = new Counter({
    name: 'alttext_http_requests_total',
    help: 'HTTP requests answered, by method, route template (unmatched for a 404) and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  })
  const latency = new Histogram({
    name: 'alttext_http_request_duration_seconds',
    help: 'Time from a request arriving to its response being sent, by method and route template.',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  })
  // Every response is counted: its series are looked up once, not hashed from a label object each time.
  // Methods and routes are closed sets (unknown ones are OTHER and unmatched), so these stay small.
  const requestSeries = seriesBy((method, route, status) => requests.labels({ method, route, status }))
  const latencySeries = seriesBy((method, route) => latency.labels({ method, route }))
  const stages = new Histogram({
    name: 'alttext_generation_stage_seconds',
    help: 'Time spent in the stages of an alt-text generation (receive and inspect for an upload, fetch for a URL, prepare, queue, model), by kind (interactive or batch); a failed stage is timed too.',
    labelNames: ['stage', 'kind'] as const,
    buckets: STAGE_BUCKETS,
    registers,
  })
  const cacheLookups = new Counter({
    name: 'alttext_cache_lookups_total',
    help: 'Alt-text cache lookups, by result (hit or miss).',
    labelNames: ['result'] as const,
    registers,
  })
  const creditsCharged = new Counter({
    name: 'alttext_credits_charged_total',
    help: 'Credits charged for fresh generations (single calls and batch items).',
    registers,
  })
  const queueRefusals = new Counter({
    name: 'alttext_queue_refusals_total',
    help: 'Single calls the generation queue refused with 503 overloaded: queue full, or no time left before the deadline.',
    registers,
  })
  const queueWaiting = new Gauge({
    name: 'alttext_queue_waiting',
    help: 'Generations waiting for a model slot, by kind.',
    labelNames: ['kind'] as const,
    registers,
  })
  const queueRunning = new Gauge({
    name: 'alttext_queue_running',
    help: 'Generations holding a model slot, by kind.',
    labelNames: ['kind'] as const,
    registers,
  })
  const queueCapacity = new Gauge({ name: 'alttext_queue_capacity', help: 'Model slots: healthy model hosts × ALTTEXT_MODEL_CONCURRENCY.', registers })
  const hostUp = new Gauge({
    name: 'alttext_model_host_up',
    help: 'Whether a model host takes calls (1) or is taken out and probed (0), by host (its configured origin).',
    labelNames: ['host'] as const,
    registers,
  })
  const hostInFlight = new Gauge({
    name: 'alttext_model_host_in_flight',
    help: 'Model calls in flight on a host, by host (its configured origin).',
    labelNames: ['host'] as const,
    registers,
  })
  const batchItems = new Gauge({
    name: 'alttext_batch_items',
    help: 'Batch items not yet ended, by state (pending or running).',
    labelNames: ['state'] as const,
    registers,
  })
  const batchItemsRecorded = new Counter({
    name: 'alttext_batch_items_recorded_total',
    help: 'Batch items this process ran to an end, by state (done or failed); cancelled items are not run.',
    labelNames: ['state'] as const,
    registers,
  })
  const webhookAttempts = new Counter({
    name: 'alttext_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome: delivered, retrying (failed, another attempt is scheduled) or failed (no attempt is left).',
    labelNames: ['outcome'] as const,
    registers,
  })
  const rateLimitFallbacks = new Counter({
    name: 'alttext_rate_limit_fallback_total',
    help: 'Checks decided by this replica alone because Redis (ALTTEXT_REDIS_URL) did not answer in time, by kind: rate_limit or slow_down (sign-in).',
    labelNames: ['kind'] as const,
    registers,
  })
  const languageRetries = new Counter({
    name: 'alttext_language_retries_total',
    help: 'Answers not in the language asked for, sent back once for a text-only translation, by outcome: translated or still_wrong (returned with wcag_compliant false).',
    labelNames: ['outcome'] as const,
    registers,
  })
  const accounts = new Gauge({ name: 'alttext_accounts', help: 'Accounts in the database.', registers })
  const rss = new Gauge({ name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', registers })
  const cpu = new Counter({ name: 'process_cpu_seconds_total', help: 'User and system CPU time spent, in seconds.', registers })
  const startTime = new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, in seconds.', registers })
  // The quantiles are those of the delays since the previous scrape; the sum and count, of every delay sampled.
  let loopDelay: SummaryReading = { quantiles: EVENT_LOOP_QUANTILES.map((q) => [q, 0]), sum: 0, count: 0 }
  new ReadSummary(
    'alttext_event_loop_delay_seconds',
    `Event-loop delay (sampled every ${EVENT_LOOP_RESOLUTION_MS} ms): quantiles since the previous scrape (0.5, 0.99, 1 = the largest), sum and count since the start.`,
    registers,
    () => loopDelay,
  )

  // Series of a closed set start at 0, so a rate() sees the first event and a dashboard shows "none yet".
  for (const result of ['hit', 'miss']) cacheLookups.inc({ result }, 0)
  for (const state of ['done', 'failed']) batchItemsRecorded.inc({ state }, 0)
  for (const outcome of ['delivered', 'retrying', 'failed']) webhookAttempts.inc({ outcome }, 0)
  for (const kind of FALLBACK_KINDS) rateLimitFallbacks.inc({ kind }, 0)
  for (const outcome of LANGUAGE_RETRY_OUTCOMES) languageRetries.inc({ outcome }, 0)
  startTime.set(Math.round(performance.timeOrigin / 1000))
  const loop = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS })
  loop.enable()
  let cpuSeconds = 0

  /** The states, read once per scrape. */
  const refresh = async () => {
    const queue = sources.queue()
    queueWaiting.set({ kind: 'interactive' }, queue.waiting)
    queueWaiting.set({ kind: 'batch' }, queue.backgroundWaiting)
    queueRunning.set({ kind: 'interactive' }, queue.running - queue.background)
    queueRunning.set({ kind: 'batch' }, queue.background)
    queueCapacity.set(sources.queueCapacity())
    for (const host of sources.modelHosts?.() ?? []) {
      hostUp.set({ host: host.url }, host.healthy ? 1 : 0)
      hostInFlight.set({ host: host.url }, host.inFlight)
    }
    const counts = await sources.counts()
    accounts.set(counts.accounts)
    batchItems.set({ state: 'pending' }, counts.batchItems.pending)
    batchItems.set({ state: 'running' }, counts.batchItems.running)

    rss.set(process.memoryUsage.rss())
    const usage = process.cpuUsage()
    const seconds = (usage.user + usage.system) / 1e6
    cpu.inc(Math.max(0, seconds - cpuSeconds))
    cpuSeconds = seconds
    // The monitor's histogram is in nanoseconds, its percentiles rounded up to a bucket's bound (so kept
    // within the largest value); with no sample since the last reset it reads 0.
    const delay = (ns: number) => (Number.isFinite(ns) ? Math.min(ns, loop.max) / 1e9 : 0)
    const samples = loop.count
    loopDelay = {
      quantiles: EVENT_LOOP_QUANTILES.map((q) => [q, delay(q === 1 ? loop.max : loop.percentile(q * 100))]),
      sum: loopDelay.sum + (samples > 0 ? (loop.mean * samples) / 1e9 : 0),
      count: loopDelay.count + samples,
    }
    loop.reset()
  }

  /** Records the stages `timings` went through once the work ended, however it ended. */
  const timed = async <T>(kind: GenerationKind, timings: StageTimings, work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } finally {
      for (const [stage, ms] of Object.entries(timings) as [Stage, number][]) if (OBSERVED_STAGES.has(stage)) stages.observe({ stage, kind }, ms / 1000)
    }
  }

  return {
    authorize(authorization, clientAddress) {
      if (tokenHash === null) {
        if (blockedAddressKind(clientAddress) === 'loopback') return
        throw new ApiError(
          'metrics_loopback_only',
          'ALTTEXT_METRICS_TOKEN is not set, so /metrics answers only clients on this machine; set it and send it as a bearer token',
        )
      }
      const presented = authorization === null ? null : BEARER.exec(authorization)?.[1]
      // Hashes compared in constant time: their length is fixed, whatever was sent.
      if (presented && timingSafeEqual(Buffer.from(sha256Hex(presented), 'hex'), tokenHash)) return
      throw new ApiError(
        'invalid_metrics_token',
        presented ? 'the bearer token is not the one of ALTTEXT_METRICS_TOKEN' : 'send the header Authorization: Bearer <ALTTEXT_METRICS_TOKEN>',
      )
    },

    async render() {
      await refresh()
      return registry.metrics()
    },
    contentType: registry.contentType,

    served({ method, route, status, durationMs }) {
      const label = METHOD_LABELS.has(method) ? method : 'OTHER'
      const template = route || UNMATCHED_ROUTE
      requestSeries(label, template, String(status)).inc()
      latencySeries(label, template).observe(durationMs / 1000)
    },

    observeAltText: (service) => ({
      ...service,
      generate: (caller, input, signal, timings = {}) => timed('interactive', timings, () => service.generate(caller, input, signal, timings)),
      generateItem: (caller, input, signal, record, timings = {}) =>
        timed('batch', timings, () => service.generateItem(caller, input, signal, record, timings)),
    }),

    observeCache: (cache) => ({
      ...cache,
      async get(key, now) {
        const entry = await cache.get(key, now)
        cacheLookups.inc({ result: entry ? 'hit' : 'miss' })
        return entry
      },
    }),

    observeCredits: (ledger) => ({
      ...ledger,
      async reserve(account, now, batchItemId) {
        const hold = await ledger.reserve(account, now, batchItemId)
        return {
          ...hold,
          async commit(chargeWith, alongside = []) {
            const remaining = await hold.commit(chargeWith, alongside)
            creditsCharged.inc(1 + alongside.length)
            return remaining
          },
        }
      },
    }),

    observeQueue: (queue) => ({
      ...queue,
      async acquire(deadline, signal) {
        try {
          return await queue.acquire(deadline, signal)
        } catch (error) {
          if (error instanceof ApiError && error.code === 'overloaded') queueRefusals.inc()
          throw error
        }
      },
    }),

    batchItemRecorded: (state) => batchItemsRecorded.inc({ state }),
    webhookAttempt: (outcome) => webhookAttempts.inc({ outcome }),
    rateLimitFallback: (kind) => rateLimitFallbacks.inc({ kind }),
    languageRetry: (outcome) => languageRetries.inc({ outcome }),

    close() {
      loop.disable()
      registry.clear()
    },
  }
}

/** A metric's child for each combination of label values, made once and then found by them. */
function seriesBy<Labels extends string[], Child>(make: (...labels: Labels) => Child): (...labels: Labels) => Child {
  const children = new Map<string, Child>()
  return (...labels) => {
    const key = labels.join('\u0000')
    let child = children.get(key)
    if (child === undefined) {
      child = make(...labels)
      children.set(key, child)
    }
    return child
  }
}
