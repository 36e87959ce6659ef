// Batches as the API sees them: checks a create request (items, images in base64, metadata, webhook_url,
// Idempotency-Key), stores the batch with its items in one transaction and wakes the runner; shows a
// batch, lists them, cancels one. Running the items is the runner's work (runner.ts).
import { randomHex, sha256Hex } from '../../shared/crypto'
import { ApiError, validationMessage } from '../../shared/errors'
import { IDEMPOTENCY_WINDOW_HOURS, MAX_IDEMPOTENCY_KEY_CHARS, MAX_IMAGE_BYTES, MAX_IMAGE_MB, PENDING_IMAGES_RETRY_SECONDS } from '../../shared/limits'
import type { BatchRecord, BatchStore, CreateOutcome, Cursor, NewBatch, PendingImageLimits } from '../../store/contract'
import type { AccountRecord } from '../../store/contract'
import type { AltTextResult } from '../alt-text/model'
import { type BatchCreated, BatchCreateBody, type BatchList, type BatchSummaryView, type BatchView } from './model'

export type { BatchView } from './model'
export type { PendingImageLimits } from '../../store/contract'

/** Why a pending item was not run when its batch was cancelled (its `error`). */
export const CANCELLED_MESSAGE = 'the batch was cancelled before this item started; it was not run and cost nothing'

export interface BatchesService {
  /** 202's body; `replayed` when an Idempotency-Key named an earlier batch with the same body. */
  create(account: AccountRecord, body: Record<string, unknown>, idempotencyKey: string | null): Promise<{ body: BatchCreated; replayed: boolean }>
  /** Exactly the body of GET /api/batches/{id}; null for an unknown id or another account's batch. */
  view(accountId: number, batchId: string): Promise<BatchView | null>
  /** view(), or 404 not_found. */
  get(account: AccountRecord, batchId: string): Promise<BatchView>
  list(account: AccountRecord, limit: number, cursor: string | undefined): Promise<BatchList>
  /** Cancels the items not yet started; 404 not_found, 409 batch_finished for a completed batch. */
  cancel(account: AccountRecord, batchId: string): Promise<BatchView>
}

export type BatchesDeps = {
  store: BatchStore
  clock: () => number
  /** What uploaded images may wait in the database for their items. */
  pendingImages: PendingImageLimits
  /** Wakes the runner: a batch was created. */
  wake: () => void
  /** Told when a batch ended (the webhook dispatcher's wake-up; it also polls). */
  onFinished?: (batchId: string) => void
  /** Checks a webhook_url and returns it normalised; throws ApiError('invalid_request', …) when it will not do. */
  checkWebhookUrl: (accountId: number, raw: string) => Promise<string> | string
}

const notFound = () => new ApiError('not_found', 'no batch with that id in this account')

const iso = (ms: number) => new Date(ms).toISOString()

const IDEMPOTENCY_KEY = /^[\x21-\x7e]+$/

function checkIdempotencyKey(raw: string | null): string | null {
  if (raw === null) return null
  const key = raw.trim()
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_CHARS || !IDEMPOTENCY_KEY.test(key)) {
    throw new ApiError(
      'invalid_request',
      `Idempotency-Key: must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without spaces (a UUID will do)`,
    )
  }
  return key
}

const DATA_URL = /^data:image\/[A-Za-z0-9.+-]+(?:;[^;,]*)*;base64,/i
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** An item's image_base64 (standard base64 or a data:image/…;base64, URL) decoded, with the contract's refusals. */
function decodeImage(raw: string, field: string): Uint8Array {
  const text = raw.replace(DATA_URL, '').replace(/[\s]+/g, '')
  if (!BASE64.test(text) || text.length % 4 === 1) {
    throw new ApiError(
      'invalid_image',
      `${field} is not valid base64; send standard base64 (A-Z, a-z, 0-9, + and /, padded with =) or a data:image/<type>;base64, URL`,
    )
  }
  if (text.length === 0) throw new ApiError('invalid_image', `${field} is empty`)
  // An upper bound first: no buffer is made for an image that cannot fit.
  if (Math.floor((text.length * 3) / 4) - 2 > MAX_IMAGE_BYTES) {
    throw new ApiError('payload_too_large', `${field}: the image is over the limit of ${MAX_IMAGE_MB} MB (counted after decoding)`)
  }
  const bytes = Buffer.from(text, 'base64')
  if (bytes.byteLength > MAX_IMAGE_BYTES) {
    throw new ApiError('payload_too_large', `${field}: the image is over the limit of ${MAX_IMAGE_MB} MB (counted after decoding)`)
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`

/** The refusal of a batch whose uploaded images would pass a bound of what may wait in the database. */
function imagesFull(outcome: Extract<CreateOutcome, { kind: 'images_full' }>, limits: PendingImageLimits): ApiError {
  const retry = { retryAfterSeconds: PENDING_IMAGES_RETRY_SECONDS }
  if (outcome.scope === 'account') {
    return new ApiError(
      'pending_images_limit',
      `this account's batches hold ${megabytes(outcome.pending)} of uploaded images not yet run, and this batch's ${megabytes(outcome.adding)} would pass the limit of ${megabytes(limits.perAccountBytes)}; send it again once earlier items have run, or send image_url instead`,
      retry,
    )
  }
  return new ApiError(
    'overloaded',
    `the service holds as many uploaded batch images not yet run as it may (${megabytes(limits.totalBytes)}); retry later, or send image_url instead`,
    retry,
  )
}

const encodeCursor = (batch: BatchRecord) => Buffer.from(JSON.stringify([batch.createdAt, batch.id])).toString('base64url')

function decodeCursor(raw: string): Cursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[]
    if (Number.isSafeInteger(createdAt) && typeof id === 'string' && id.length <= 64) return { createdAt: createdAt as number, id }
  } catch {
    // Falls through to the refusal.
  }
  throw new ApiError('invalid_request', 'cursor: is not a cursor of this API (pass next_cursor of the previous page)')
}

const summary = (batch: BatchRecord): BatchSummaryView => ({
  id: batch.id,
  status: batch.status,
  total: batch.total,
  succeeded: batch.succeeded,
  failed: batch.failed,
  created_at: iso(batch.createdAt),
  completed_at: batch.completedAt === null ? null : iso(batch.completedAt),
  webhook_url: batch.webhookUrl,
  review: batch.review,
})

export function createBatchesService(deps: BatchesDeps): BatchesService {
  const { store, clock } = deps

  const view = async (accountId: number, batchId: string): Promise<BatchView | null> => {
    const batch = await store.get(accountId, batchId)
    if (!batch) return null
    const items = await store.items(batch.id)
    return {
      ...summary(batch),
      items: items.map((item) => ({
        index: item.index,
        status: item.status === 'running' ? 'pending' : item.status,
        // Results stored before text_in_image existed lack it: null, as for any plain-text answer.
        ...(item.status === 'done' &&
          item.result !== null && {
            result: { text_in_image: null, animated: false, ...(JSON.parse(item.result) as Partial<AltTextResult>) } as AltTextResult,
          }),
        ...(item.status === 'failed' && { error: { code: item.errorCode ?? 'internal_error', message: item.errorMessage ?? '' } }),
        metadata: item.metadata === null ? null : (JSON.parse(item.metadata) as Record<string, unknown>),
        ...(batch.review && { suggestion_id: item.suggestionId }),
      })),
    }
  }

  return {
    async create(account, body, idempotencyKey) {
      const key = checkIdempotencyKey(idempotencyKey)
      const parsed = BatchCreateBody.safeParse(body)
      if (!parsed.success) throw new ApiError('invalid_request', validationMessage(parsed.error.issues))
      const input = parsed.data
      const items: NewBatch['items'] = input.items.map((item, index) => {
        const hasUrl = item.image_url != null
        const hasBase64 = item.image_base64 != null
        if (hasUrl === hasBase64) {
          throw new ApiError(
            'invalid_request',
            hasUrl
              ? `items[${index}]: send exactly one image source, not image_url and image_base64`
              : `items[${index}]: send exactly one image source: image_url or image_base64`,
          )
        }
        if (item.target != null && !input.review)
          throw new ApiError('invalid_request', `items[${index}].target: only a review batch (review: true) takes a target`)
        const { image_base64: base64, metadata, ...options } = item
        return {
          request: JSON.stringify(options),
          image: base64 != null ? decodeImage(base64, `items[${index}].image_base64`) : null,
          metadata: metadata == null ? null : JSON.stringify(metadata),
        }
      })
      const webhookUrl = input.webhook_url == null ? null : await deps.checkWebhookUrl(account.id, input.webhook_url)
      const now = clock()
      const outcome = await store.create(
        {
          id: `bat_${randomHex(12)}`,
          accountId: account.id,
          createdAt: now,
          webhookUrl,
          review: input.review,
          idempotency: key === null ? null : { key, requestHash: sha256Hex(JSON.stringify(body)), since: now - IDEMPOTENCY_WINDOW_HOURS * 3_600_000 },
          items,
        },
        deps.pendingImages,
      )
      if (outcome.kind === 'images_full') throw imagesFull(outcome, deps.pendingImages)
      if (outcome.kind === 'conflict') {
        throw new ApiError(
          'idempotency_conflict',
          `this Idempotency-Key was used within the last ${IDEMPOTENCY_WINDOW_HOURS} hours for another request (batch ${outcome.batch.id}); use a new key for a new request`,
        )
      }
      if (outcome.kind === 'created') deps.wake()
      const { batch } = outcome
      return { body: { id: batch.id, status: batch.status, total: batch.total, created_at: iso(batch.createdAt) }, replayed: outcome.kind === 'replay' }
    },

    view,

    async get(account, batchId) {
      const found = await view(account.id, batchId)
      if (!found) throw notFound()
      return found
    },

    async list(account, limit, cursor) {
      const batches = await store.list(account.id, limit + 1, cursor === undefined ? null : decodeCursor(cursor))
      const page = batches.slice(0, limit)
      return { items: page.map(summary), next_cursor: batches.length > limit ? encodeCursor(page[page.length - 1]!) : null }
    },

    async cancel(account, batchId) {
      const outcome = await store.cancel(account.id, batchId, clock(), 'batch_cancelled', CANCELLED_MESSAGE)
      if (outcome === null) throw notFound()
      if (outcome === 'finished') throw new ApiError('batch_finished', 'the batch has already completed; there is nothing left to cancel')
      if (outcome.completedAt !== null) deps.onFinished?.(outcome.id)
      const found = await view(account.id, batchId)
      if (!found) throw notFound()
      return found
    },
  }
}
