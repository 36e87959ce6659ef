// Durable batches: a batch and its items, claimed by runners under a lease and a claim token.

export type BatchStatus = 'queued' | 'running' | 'completed' | 'cancelled'
/** `running` is internal (claimed by a runner); clients see it as pending. */
export type ItemStatus = 'pending' | 'running' | 'done' | 'failed'

export type BatchRecord = {
  id: string
  accountId: number
  status: BatchStatus
  total: number
  succeeded: number
  failed: number
  createdAt: number
  /** When the last item ended (completed, or cancelled and the items that were running finished); null before. */
  completedAt: number | null
  webhookUrl: string | null
  /** null, or 'pending' once the batch ended with a webhook_url; the webhook dispatcher moves it on. */
  webhookState: string | null
  /** Each item that succeeds becomes a pending suggestion of the batch's organisation (POST /api/batches review: true). */
  review: boolean
}

export type ItemRecord = {
  index: number
  status: ItemStatus
  /** The answer's JSON (AltTextResult), when done. */
  result: string | null
  errorCode: string | null
  errorMessage: string | null
  /** JSON of the caller's metadata object, or null. */
  metadata: string | null
  /** Whether a credit was charged for this item's answer. */
  charged: boolean
  /** The suggestion its answer became (a review batch), or null. */
  suggestionId: string | null
}

/** A claimed item: what the runner needs to run it. */
export type ClaimedItem = {
  /** Row id: with `token`, the handle of renew/finish/unclaim. */
  id: number
  /** The claim's random token: the claimant's writes are made only while the item still has it. */
  token: string
  /** When the claim lapses unless renewed. */
  leaseUntil: number
  /** Whether the item was taken over from a claim whose lease had ended (rather than pending). */
  takenOver: boolean
  batchId: string
  accountId: number
  index: number
  /** JSON of the item's options (image_url, language, …; never the image bytes). */
  request: string
  /** Uploaded image bytes, or null for an image_url. */
  image: Uint8Array | null
  /** The batch's `review`: the answer becomes a suggestion. */
  review: boolean
}

export type NewBatch = {
  id: string
  accountId: number
  createdAt: number
  webhookUrl: string | null
  idempotency: { key: string; requestHash: string; since: number } | null
  /** Absent: false. */
  review?: boolean
  items: { request: string; image: Uint8Array | null; metadata: string | null }[]
}

/** Bytes of uploaded images that may wait in unfinished items: one account's, and all accounts' together. */
export type PendingImageLimits = { perAccountBytes: number; totalBytes: number }

export type CreateOutcome =
  | { kind: 'created'; batch: BatchRecord }
  | { kind: 'replay'; batch: BatchRecord }
  | { kind: 'conflict'; batch: BatchRecord }
  /** The batch's images would pass a PendingImageLimits bound: `pending` bytes wait already, `adding` more came. */
  | { kind: 'images_full'; scope: 'account' | 'service'; pending: number; adding: number }

/**
 * The end of an item: its answer (and, when fresh, its credits: one of `period` per credit hold of
 * `holdIds`, one per language generated), or its failure.
 */
export type ItemOutcome =
  | {
      kind: 'done'
      result: (used: number | null) => string
      charge: { period: string; holdIds: number[] } | null
      /** A review batch's: the suggestion the answer became, recorded with it. */
      suggestionId?: string | null
    }
  | { kind: 'failed'; code: string; message: string }

/**
 * What became of a claimant's write: `written`; `lost`: the item is not claimed with this token any more
 * (its lease ended and another claim took it over, or it was recorded or put back already), nothing was
 * written or charged; `gone`: the item or its account was deleted meanwhile, nothing was written or charged.
 */
export type ClaimWrite = 'written' | 'lost' | 'gone'

export type FinishResult = {
  status: ClaimWrite
  /** The period's charged count after the charge (null when nothing was charged). */
  used: number | null
  /** The batch's id when this item ended it. */
  ended: string | null
}

export type Cursor = { createdAt: number; id: string }

export interface BatchStore {
  /**
   * Inserts the batch and its items in one transaction. With an idempotency key: a batch of this account
   * made with the same key since `since` is returned instead (`replay` when its request hash matches,
   * `conflict` otherwise); an older one gives up its key. A batch whose uploaded images would pass
   * `limits` is not inserted (`images_full`).
   */
  create(batch: NewBatch, limits: PendingImageLimits): Promise<CreateOutcome>
  get(accountId: number, id: string): Promise<BatchRecord | null>
  items(batchId: string): Promise<ItemRecord[]>
  /** Newest first, after `cursor` when given, at most `limit`. */
  list(accountId: number, limit: number, cursor: Cursor | null): Promise<BatchRecord[]>
  /**
   * Fails every pending item with `code`/`message` and marks the batch cancelled; ends it at once when no
   * item is running. 'finished' for a completed batch; the batch as it is for one already cancelled.
   */
  cancel(accountId: number, id: string, now: number, code: string, message: string): Promise<BatchRecord | 'finished' | null>
  /**
   * Batches not yet ended with an item to claim at `now`: a pending one, or a running one whose lease
   * ended (the batch may be cancelled: an item that had started before the cancel is still finished).
   * Oldest first.
   */
  openBatches(now: number): Promise<string[]>
  /**
   * Claims the batch's lowest item that is pending, or running with a lease that ended at `now` (taken
   * over from a claimant that stopped renewing it), in one transaction: status 'running', a new random
   * claim token, a lease until `now + leaseMs`; marks the batch running; ends the credit holds that the
   * item's earlier claims took (CreditStore.hold's `batchItemId`). Null when it has none. Exact
   * across processes: an item is held by one token at a time. PostgreSQL selects the item with
   * `FOR UPDATE SKIP LOCKED` and updates it in the same transaction, so concurrent claims take different
   * items and never one twice; there the lease is judged and drawn by the database's clock (`now` stands
   * for it, see PostgresStoreOptions.clock), as in renew and openBatches.
   */
  claim(batchId: string, now: number, leaseMs: number): Promise<ClaimedItem | null>
  /**
   * Moves the lease of an item still claimed with `token` to `now + leaseMs` (also when it had ended, as
   * long as no other claim took the item over). 'lost' when the item is not claimed with this token any
   * more: its claimant must stop working on it. 'gone' when the item was deleted.
   */
  renew(itemId: number, token: string, now: number, leaseMs: number): Promise<ClaimWrite>
  /** Puts an item claimed with `token` back to pending (shutdown, or a write that could not be made). */
  unclaim(itemId: number, token: string): Promise<ClaimWrite>
  /**
   * Called once at start, before this process claims anything: ends the leases of the claims no live
   * process can hold, so they are taken over at once; returns how many. SQLite, in the process that serves
   * the file (it holds the file's lock): every claim, as one found at start belongs to a process that
   * died; opened beside that process (alttext admin): none. An engine that several processes share ends
   * none (returns 0): claims lapse with their lease.
   */
  endOrphanedClaims(): Promise<number>
  /**
   * Records the end of an item claimed with `token`, in one transaction (see ItemOutcome, FinishResult):
   * its result or failure, the credit of a fresh answer and the end of its hold, the batch's counts, and
   * the end of the batch (with its webhook flag) when no item is left. The hold is deleted whatever the
   * outcome. Anything but `written` writes and charges nothing, so an item is charged at most once.
   */
  finish(itemId: number, token: string, outcome: ItemOutcome, now: number): Promise<FinishResult>
  /** Deletes batches that ended before `before`, with their items; returns how many. */
  purgeEnded(before: number): Promise<number>
}
