// The webhook dispatcher: the one owner of delivery work. It queues the deliveries of ended batches
// (webhook_state 'pending' → 'queued', in the store's transaction) and sends the due ones, those of
// decided suggestions too (queued by the decision's transaction, their body fixed then): resolved once,
// checked by the image fetcher's address policy, pinned to the checked address, https only, no redirect
// followed, a short timeout. An attempt claims its delivery (a token and a lease, renewed while it runs)
// and is counted, its retry scheduled, in the store before it is sent, so no other process attempts
// it meanwhile, and a restart or another process, even after kill -9, picks up where it was once the lease
// ends: deliveries are at least once, with one Alttext-Delivery id (a receiver dedupes by it). The
// attempt's outcome is recorded under its claim only. The slots are shared fairly: each account has at most
// maxInFlightPerAccount attempts under way (counting every process's), and due deliveries are taken one
// account at a time, so receivers that hang delay only their own account. It wakes when a batch ends, when
// a retry is due, when an attempt ends, and every second; it holds one timer and the attempts under way,
// and close() ends both.
import { type AddressPolicy, type ConnectLimits, DestinationRefused, type HopWords, resolveDestination, sendOnce } from '../../intake'
import type { Logger } from '../../shared/logger'
import type { Scheduler, TimerHandle } from '../../shared/scheduler'
import type { AttemptEnd, DeliveryClaim, DeliveryRecord, WebhookStore } from '../../store/contract'
import { newDeliveryId } from '../../store/shared/ids'
import { VERSION } from '../../version'
import { SIGNATURE_HEADER, signatureHeader } from './signature'

/** The body of GET /api/batches/{id} for the batch's account; null when the batch no longer exists. */
export type BatchViewer = (accountId: number, batchId: string) => Promise<object | null>

export type DispatcherOptions = {
  store: WebhookStore
  logger: Logger
  clock: () => number
  /** The timers: the next pass, lease renewals. */
  scheduler: Scheduler
  view: BatchViewer
  /** The image fetcher's address policy (allow-list, resolver). */
  policy: AddressPolicy
  /** The `ca` list for TLS (trustedCaList), or undefined for the runtime's trust store. */
  ca: string[] | undefined
  /** The whole attempt's limit: connecting, TLS and the response headers. */
  timeoutMs: number
  /** How long an attempt's claim lasts unless renewed (ALTTEXT_BATCH_LEASE_SECONDS), in ms. */
  leaseMs: number
  /** Waits before the retries, in ms: attempt n (from 1) that fails is retried after retryDelaysMs[n - 1]; after the last, the delivery fails. */
  retryDelaysMs: readonly number[]
  maxInFlight: number
  /** Attempts of one account under way at once: its share, so its slow receivers delay only itself. */
  maxInFlightPerAccount: number
  /** How often ended batches and due deliveries are looked for when nothing wakes the dispatcher. */
  pollMs: number
  /** Told how each attempt ended (metrics). */
  onAttempt?: (outcome: AttemptOutcome) => void
}

/** An attempt's end: the delivery succeeded, will be tried again, or failed for good. */
export type AttemptOutcome = 'delivered' | 'retrying' | 'failed'

export type WebhookDispatcher = {
  /** Looks for ended batches and due deliveries now (a batch ended; a retry was asked for). */
  wake(): void
  /** Stops the timer, ends the attempts under way (each is recorded) and waits for them. */
  close(): Promise<void>
}

/** Why an attempt failed, in words the account's delivery log may show. */
class AttemptFailure extends Error {
  constructor(
    message: string,
    /** For the operator log only: what the name resolved to, why a connection failed. */
    readonly detail?: string,
    /** No retry can help (the address is blocked, the batch is gone). */
    readonly final = false,
  ) {
    super(message)
  }
}

/** Ended batches queued per transaction. */
const QUEUE_PER_PASS = 100

export function createWebhookDispatcher(options: DispatcherOptions): WebhookDispatcher {
  const { store, logger, clock, scheduler } = options
  const timeoutSeconds = Math.round(options.timeoutMs / 100) / 10
  const words: HopWords = {
    refuse: (message, detail) => new AttemptFailure(message, detail),
    unreachable: 'the webhook host could not be reached',
    deadline: () => new AttemptFailure(`no answer within ${timeoutSeconds} s`),
  }
  const connect: ConnectLimits = { ca: options.ca, connectTimeoutMs: options.timeoutMs }
  const busy = new Map<string, Promise<void>>()
  /** The account of each attempt under way (delivery id → account id): each account's share is counted from it. */
  const busyAccounts = new Map<string, number>()
  const closing = new AbortController()
  let timer: TimerHandle | null = null
  let running: Promise<void> | null = null
  let again = false

  const retryAt = (now: number) => (attempts: number) => {
    const delay = options.retryDelaysMs[attempts - 1]
    return delay === undefined ? null : now + delay
  }

  /** The event as sent: its payload as queued, or the batch's body as it is now. */
  async function bodyOf(delivery: DeliveryRecord): Promise<string> {
    if (delivery.payload !== null) return delivery.payload
    const data = delivery.batchId === null ? null : await options.view(delivery.accountId, delivery.batchId)
    if (data === null) throw new AttemptFailure('the batch no longer exists', undefined, true)
    return JSON.stringify({ type: delivery.event, created: Math.floor(delivery.createdAt / 1000), data })
  }

  async function send(delivery: DeliveryRecord, now: number): Promise<number> {
    const secret = await store.secret(delivery.accountId)
    if (secret === null) throw new AttemptFailure('the account has no webhook secret; create one with POST /api/webhook-secret')
    const body = await bodyOf(delivery)
    const url = new URL(delivery.url)
    // The attempt's deadline runs on the scheduler, like the retries it leads to.
    const deadline = new AbortController()
    const timer = scheduler.setTimeout(() => deadline.abort(new DOMException('The operation timed out.', 'TimeoutError')), options.timeoutMs)
    const signal = AbortSignal.any([closing.signal, deadline.signal])
    try {
      let addresses: Awaited<ReturnType<typeof resolveDestination>>
      try {
        addresses = await resolveDestination(url, options.policy, signal, words.deadline)
      } catch (error) {
        if (!(error instanceof DestinationRefused)) throw error
        // An IP literal was checked when the batch was made; it can only be blocked, for good.
        if (error.literal) throw new AttemptFailure('the webhook host is a blocked address', error.detail, true)
        // A name that does not resolve and one that resolves to a blocked address read the same and are both
        // retried (DNS may change), so the delivery log cannot map internal names; the log has the detail.
        throw new AttemptFailure(`the webhook host ${url.hostname} cannot be resolved to an allowed address`, error.detail)
      }
      const headers = {
        'content-type': 'application/json',
        'user-agent': `alttext-webhooks/${VERSION}`,
        'alttext-delivery': delivery.id,
        [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(secret.secret, body, Math.floor(now / 1000)),
      }
      const { status } = await sendOnce(url, addresses, { method: 'POST', headers, body }, connect, signal, words)
      return status
    } finally {
      scheduler.clear(timer)
    }
  }

  async function attempt(due: DeliveryRecord): Promise<void> {
    const now = clock()
    const claim = await store.beginAttempt(due.id, now, options.leaseMs, retryAt(now))
    if (claim === null) return
    // The claim is renewed a third of its lease apart until the outcome is recorded, so the lease (the
    // operator's ALTTEXT_BATCH_LEASE_SECONDS) may be shorter than the attempt; a killed process's lapses.
    const renewal = scheduler.setInterval(() => {
      store.renewAttempt(claim.delivery.id, claim.token, clock(), options.leaseMs).catch((error: unknown) => {
        logger.warn('webhook attempt lease not renewed; trying again shortly', { delivery: claim.delivery.id, error: String(error) })
      })
    }, options.leaseMs / 3)
    try {
      await attemptClaimed(claim, now)
    } finally {
      scheduler.clear(renewal)
    }
  }

  async function attemptClaimed({ delivery, token }: DeliveryClaim, now: number): Promise<void> {
    const fields = {
      delivery: delivery.id,
      ...(delivery.batchId === null ? {} : { batch: delivery.batchId }),
      ...(delivery.suggestionId === null ? {} : { suggestion: delivery.suggestionId }),
      event: delivery.event,
      account: delivery.accountId,
      attempt: delivery.attempts,
      host: new URL(delivery.url).host,
    }
    const lost = () => logger.warn('webhook attempt outlived its claim, which another attempt took over; its outcome is not recorded', fields)
    let status: number | null = null
    let failure: AttemptFailure
    try {
      status = await send(delivery, now)
      if (status >= 200 && status <= 299) {
        if ((await store.delivered(delivery.id, token, status, clock())) === 'lost') return lost()
        options.onAttempt?.('delivered')
        logger.info('webhook delivered', { ...fields, status })
        return
      }
      failure = new AttemptFailure(
        status >= 300 && status <= 399 ? `the receiver answered ${status}; redirects are not followed` : `the receiver answered ${status}`,
      )
    } catch (error) {
      if (closing.signal.aborted) failure = new AttemptFailure('the service stopped during the attempt')
      else if (error instanceof AttemptFailure) failure = error
      else {
        logger.error('webhook attempt failed unexpectedly', { ...fields, error: String(error) })
        failure = new AttemptFailure('internal error while sending')
      }
    }
    // An attempt cut short by shutdown says nothing about the receiver: even a last one is made again.
    const end: AttemptEnd = failure.final ? 'final' : closing.signal.aborted ? 'interrupted' : 'retry'
    if ((await store.attemptFailed(delivery.id, token, status, failure.message, end, clock())) === 'lost') return lost()
    const final = failure.final || (delivery.nextAttemptAt === null && !closing.signal.aborted)
    options.onAttempt?.(final ? 'failed' : 'retrying')
    logger.warn(final ? 'webhook delivery failed' : 'webhook attempt failed', {
      ...fields,
      status,
      error: failure.message,
      ...(failure.detail === undefined ? {} : { detail: failure.detail }),
      ...(final ? {} : { retry_at: new Date(delivery.nextAttemptAt!).toISOString() }),
    })
  }

  async function pass(): Promise<void> {
    await store.queueEndedBatches(clock(), newDeliveryId, QUEUE_PER_PASS)
    const free = options.maxInFlight - busy.size
    if (free <= 0) return
    for (const delivery of await store.due(clock(), free, options.maxInFlightPerAccount, busyAccounts)) {
      const work = attempt(delivery)
        .catch((error: unknown) => logger.error('webhook attempt could not be recorded', { delivery: delivery.id, error: String(error) }))
        .finally(() => {
          busy.delete(delivery.id)
          busyAccounts.delete(delivery.id)
          wake()
        })
      busy.set(delivery.id, work)
      busyAccounts.set(delivery.id, delivery.accountId)
    }
  }

  /** The next pass: at the earliest due delivery, and at most pollMs from now. */
  async function schedule(): Promise<void> {
    if (closing.signal.aborted) return
    const next = await store.nextDueAt()
    const now = clock()
    // A delivery still due after a pass had no slot (all taken, or its account's share): it starts when an
    // attempt ends (which wakes the dispatcher), or at the poll.
    const wait = next === null || next <= now ? options.pollMs : Math.min(options.pollMs, next - now)
    scheduler.clear(timer)
    timer = scheduler.setTimeout(wake, wait)
  }

  async function run(): Promise<void> {
    do {
      again = false
      try {
        await pass()
      } catch (error) {
        logger.warn('webhook dispatch pass failed', { error: String(error) })
      }
    } while (again && !closing.signal.aborted)
    await schedule().catch((error: unknown) => logger.warn('webhook dispatch scheduling failed', { error: String(error) }))
  }

  function wake(): void {
    if (closing.signal.aborted) return
    if (running !== null) {
      again = true
      return
    }
    running = run().finally(() => {
      running = null
      if (again) wake()
    })
  }

  wake()

  return {
    wake,
    async close() {
      closing.abort()
      scheduler.clear(timer)
      await running
      await Promise.all(busy.values())
    },
  }
}
