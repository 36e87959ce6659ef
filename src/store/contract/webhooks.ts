// Webhook secrets, organisation webhooks, and the deliveries of ended batches' and decided suggestions' events.
import type { Actor } from './orgs'

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'
export const WEBHOOK_EVENTS = ['batch.completed', 'batch.cancelled', 'suggestion.decided'] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

/** One delivery of one event: an ended batch's, or a decision's (SuggestionStore.decide, reopen). Times are Unix ms. */
export type DeliveryRecord = {
  /** Insertion order: the delivery log's cursor. */
  seq: number
  id: string
  accountId: number
  /** The ended batch whose body is sent (built at each attempt); null for an event with its own payload. */
  batchId: string | null
  /** The decided suggestion's public id (`suggestion.decided`), else null. */
  suggestionId: string | null
  /** The event's body as sent (JSON text), fixed when it was queued; null for a batch's, built at each attempt. */
  payload: string | null
  event: WebhookEvent
  url: string
  status: DeliveryStatus
  attempts: number
  /** The receiver's HTTP status at the last attempt; null when it did not answer (or none was made). */
  lastStatus: number | null
  lastError: string | null
  lastAttemptAt: number | null
  nextAttemptAt: number | null
  deliveredAt: number | null
  createdAt: number
}

export type WebhookSecretRecord = { secret: string; createdAt: number }

/** Where an organisation's `suggestion.decided` events go. */
export type OrgWebhookRecord = { url: string; createdAt: number }

/** An attempt under way: the delivery as it was claimed (attempts counted, next attempt scheduled) and the claim's token. */
export type DeliveryClaim = { delivery: DeliveryRecord; token: string }

/**
 * How an attempt that failed leaves its delivery: `retry`: pending until its next attempt, or failed when
 * it has none; `final`: failed, no attempt left; `interrupted` (cut short by shutdown, which says nothing
 * of the receiver): pending, due at once when it had no next attempt.
 */
export type AttemptEnd = 'retry' | 'final' | 'interrupted'

/** `written`, or `lost`: the delivery is not claimed with this token any more (nothing was written). */
export type AttemptWrite = 'written' | 'lost'

export interface WebhookStore {
  /** The account's signing secret, or null when it has none. */
  secret(accountId: number): Promise<WebhookSecretRecord | null>
  /** Creates or replaces the account's secret; null when the account no longer exists. */
  putSecret(accountId: number, secret: string, now: number): Promise<{ replaced: boolean } | null>
  /** The organisation's webhook, or null when it has none. */
  orgWebhook(orgId: number): Promise<OrgWebhookRecord | null>
  /**
   * In one transaction: sets the organisation's webhook URL, replaces its account's signing secret (the
   * one secret that signs all its deliveries, batch ones too) and appends `org.webhook_set`. Null when
   * the organisation no longer exists.
   */
  putOrgWebhook(orgId: number, url: string, secret: string, actor: Actor): Promise<OrgWebhookRecord | null>
  /**
   * Removes the organisation's webhook with its `org.webhook_set` entry (url null); false when it had none.
   * Deliveries queued before stay (each names its URL), as a batch's do.
   */
  deleteOrgWebhook(orgId: number, actor: Actor): Promise<boolean>
  /**
   * For each ended batch whose webhook_state is 'pending' (at most `limit`), in one transaction: marks
   * it 'queued' and inserts its delivery, due at `now`. Returns how many were queued.
   */
  queueEndedBatches(now: number, makeId: () => string, limit: number): Promise<number>
  /**
   * Up to `limit` pending deliveries that may start at `now`: due (not claimed and its next attempt's time
   * reached, or claimed under a lease that ended: its attempt died), none of `busy` (this process's
   * attempts, delivery id → account id), and no more of an account than brings it to `perAccount` under
   * way, counting `busy` and the unexpired claims of every process. Taken in turns: each account's
   * earliest, then each account's second, …, earliest first within a turn.
   */
  due(now: number, limit: number, perAccount: number, busy: ReadonlyMap<string, number>): Promise<DeliveryRecord[]>
  /** When the earliest pending delivery is due (or its claim's lease ends); null when none is pending. */
  nextDueAt(): Promise<number | null>
  /**
   * Claims a delivery due at `now` (see `due`) for one attempt, counted before it is made, in one
   * transaction: attempts + 1, the next attempt at `retryAt` (null: this is the last), a new random claim
   * token and a lease until `now + leaseMs`. Null when the delivery is not due (another process claimed
   * it, it was delivered). A delivery is attempted by one claim at a time; a claim whose lease ended is
   * taken over by the next beginAttempt, so a killed process's attempt is made again (at least once).
   */
  beginAttempt(id: string, now: number, leaseMs: number, retryAt: (attempts: number) => number | null): Promise<DeliveryClaim | null>
  /**
   * Moves the lease of an attempt still claimed with `token` to `now + leaseMs`: its process renews it
   * while the attempt runs, so the lease may be shorter than the attempt. Fenced by the claim's token.
   */
  renewAttempt(id: string, token: string, now: number, leaseMs: number): Promise<AttemptWrite>
  /** The receiver answered 2xx: delivered, the claim ends. Fenced by the claim's token. */
  delivered(id: string, token: string, status: number, now: number): Promise<AttemptWrite>
  /** The attempt failed (see AttemptEnd; `now` dates an interrupted one's next attempt); the claim ends. Fenced by the claim's token. */
  attemptFailed(id: string, token: string, status: number | null, error: string, end: AttemptEnd, now: number): Promise<AttemptWrite>
  /** The account's deliveries, newest first, after the cursor `beforeSeq` (null: from the newest). */
  list(accountId: number, limit: number, beforeSeq: number | null): Promise<DeliveryRecord[]>
  /**
   * Makes a delivery of the account pending and due now (one more attempt); null when it has none with that
   * id. An attempt under way keeps its claim: the next one starts when it ends.
   */
  retry(accountId: number, id: string, now: number): Promise<DeliveryRecord | null>
}
