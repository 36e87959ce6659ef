// Signed webhooks: the account's signing secret (made and shown once, rotatable), the delivery log, the
// check of a batch's webhook_url, the organisation webhook (suggestion.decided events, queued by the
// store with each decision), and the dispatcher that sends (dispatcher.ts), which this service owns.
import type { AddressPolicy } from '../../intake'
import { randomToken } from '../../shared/crypto'
import { ApiError } from '../../shared/errors'
import {
  WEBHOOK_DELIVERIES_DEFAULT_PAGE,
  WEBHOOK_MAX_IN_FLIGHT,
  WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT,
  WEBHOOK_RETRY_DELAYS_SECONDS,
  WEBHOOK_TIMEOUT_MS,
} from '../../shared/limits'
import type { Logger } from '../../shared/logger'
import { iso } from '../../shared/time'
import type { Scheduler } from '../../shared/scheduler'
import type { AccountRecord, Actor, DeliveryRecord, OrgRecord, WebhookStore } from '../../store/contract'
import { type BatchViewer, createWebhookDispatcher, type DispatcherOptions } from './dispatcher'
import type { CreatedSecret, Deliveries, DeliveryView, OrgWebhookCreated, OrgWebhookView, SecretStatus } from './model'
import { checkWebhookUrl } from './url'

export type WebhookServiceOptions = {
  store: WebhookStore
  logger: Logger
  clock: () => number
  /** The dispatcher's timers: its poll, retries, lease renewals. */
  scheduler: Scheduler
  /** BatchesService.view: the body of GET /api/batches/{id}, sent as the event's `data`. */
  view: BatchViewer
  /** The image fetcher's address policy: ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS and the resolver. */
  policy: AddressPolicy
  /** The `ca` list for TLS (trustedCaList of NODE_EXTRA_CA_CERTS). */
  ca: string[] | undefined
  /** How long an attempt's claim lasts unless renewed: ALTTEXT_BATCH_LEASE_SECONDS, in ms. */
  leaseMs: number
  /** Tests shorten these; the service uses WEBHOOK_TIMEOUT_MS, WEBHOOK_RETRY_DELAYS_SECONDS and a 1 s poll. */
  timeoutMs?: number
  retryDelaysMs?: readonly number[]
  pollMs?: number
  /** Told how each delivery attempt ended (metrics). */
  onAttempt?: DispatcherOptions['onAttempt']
}

export type WebhookService = {
  /** Makes the account's secret, replacing any earlier one; the only time it is shown. */
  createSecret(account: AccountRecord): Promise<CreatedSecret>
  secretStatus(account: AccountRecord): Promise<SecretStatus>
  deliveries(account: AccountRecord, limit?: number, cursor?: number): Promise<Deliveries>
  /** Schedules one more attempt of a delivery now (also a delivered one: it is sent again). 404 not_found for an unknown or foreign id. */
  retry(account: AccountRecord, id: string): Promise<DeliveryView>
  /**
   * For batch creation: the webhook_url as it will be called, or 400 invalid_request naming the rule
   * (https, length, a blocked IP literal) or saying the account needs a secret first.
   */
  acceptUrl(accountId: number, raw: string): Promise<string>
  /**
   * Sets the organisation's webhook URL (checked as a batch's webhook_url is) with a new signing secret,
   * shown only now; the secret replaces the account's, which also signs its batch deliveries.
   */
  setOrgWebhook(org: OrgRecord, raw: string, actor: Actor): Promise<OrgWebhookCreated>
  /** 404 not_found when the organisation has none. */
  orgWebhook(org: OrgRecord): Promise<OrgWebhookView>
  /** 404 not_found when the organisation has none. Deliveries already queued are still attempted. */
  deleteOrgWebhook(org: OrgRecord, actor: Actor): Promise<{ deleted: true }>
  /** A batch ended (BatchesService's onFinished), a suggestion was decided: look for deliveries now rather than at the next poll. */
  wake(): void
  close(): Promise<void>
}

function toView(d: DeliveryRecord): DeliveryView {
  return {
    id: d.id,
    batch_id: d.batchId,
    suggestion_id: d.suggestionId,
    event: d.event,
    url: d.url,
    status: d.status,
    attempts: d.attempts,
    last_status: d.lastStatus,
    last_error: d.lastError,
    next_attempt_at: iso(d.nextAttemptAt),
    delivered_at: iso(d.deliveredAt),
    created_at: iso(d.createdAt),
  }
}

export function createWebhookService(options: WebhookServiceOptions): WebhookService {
  const { store, logger, clock, policy } = options
  const dispatcher = createWebhookDispatcher({
    store,
    logger,
    clock,
    scheduler: options.scheduler,
    view: options.view,
    policy,
    ca: options.ca,
    timeoutMs: options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
    leaseMs: options.leaseMs,
    retryDelaysMs: options.retryDelaysMs ?? WEBHOOK_RETRY_DELAYS_SECONDS.map((seconds) => seconds * 1000),
    maxInFlight: WEBHOOK_MAX_IN_FLIGHT,
    maxInFlightPerAccount: WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT,
    pollMs: options.pollMs ?? 1000,
    onAttempt: options.onAttempt,
  })
  const gone = () => new ApiError('not_found', 'no webhook delivery with that id in this account')
  const noOrgWebhook = () => new ApiError('not_found', 'this organisation has no webhook; set one with PUT /api/orgs/{id}/webhook')

  return {
    async createSecret(account) {
      const secret = `whsec_${randomToken(32)}`
      const now = clock()
      const saved = await store.putSecret(account.id, secret, now)
      if (saved === null) throw new ApiError('invalid_api_key', 'the account no longer exists')
      logger.info(saved.replaced ? 'webhook secret rotated' : 'webhook secret created', { account: account.id })
      return { secret, created_at: iso(now), replaced: saved.replaced }
    },
    async secretStatus(account) {
      const current = await store.secret(account.id)
      return { exists: current !== null, created_at: iso(current?.createdAt ?? null) }
    },
    async deliveries(account, limit = WEBHOOK_DELIVERIES_DEFAULT_PAGE, cursor) {
      // One more than asked tells whether a next page exists.
      const rows = await store.list(account.id, limit + 1, cursor ?? null)
      const page = rows.slice(0, limit)
      return { items: page.map(toView), next_cursor: rows.length > limit ? String(page.at(-1)!.seq) : null }
    },
    async retry(account, id) {
      const delivery = await store.retry(account.id, id, clock())
      if (delivery === null) throw gone()
      dispatcher.wake()
      return toView(delivery)
    },
    async acceptUrl(accountId, raw) {
      const url = checkWebhookUrl(raw, policy.allowPrivateHosts)
      if ((await store.secret(accountId)) === null)
        throw new ApiError(
          'invalid_request',
          'webhook_url: this account has no webhook secret to sign deliveries with; create one with POST /api/webhook-secret first',
        )
      return url
    },
    async setOrgWebhook(org, raw, actor) {
      const url = checkWebhookUrl(raw, policy.allowPrivateHosts, 'url')
      const secret = `whsec_${randomToken(32)}`
      const saved = await store.putOrgWebhook(org.id, url, secret, actor)
      if (saved === null) throw new ApiError('org_not_found', 'the organisation no longer exists')
      logger.info('organisation webhook set', { org_id: org.publicId, account_id: actor.accountId, host: new URL(url).host })
      return { url: saved.url, secret, created_at: iso(saved.createdAt) }
    },
    async orgWebhook(org) {
      const found = await store.orgWebhook(org.id)
      if (found === null) throw noOrgWebhook()
      return { url: found.url, created_at: iso(found.createdAt) }
    },
    async deleteOrgWebhook(org, actor) {
      if (!(await store.deleteOrgWebhook(org.id, actor))) throw noOrgWebhook()
      logger.info('organisation webhook removed', { org_id: org.publicId, account_id: actor.accountId })
      return { deleted: true as const }
    },
    wake: dispatcher.wake,
    close: dispatcher.close,
  }
}
