// HTTP routes of batches. Every route takes a key or a session (a session's create and cancel pass the
// origin check like every state-changing route); creation counts as one request of the standard bucket.
import { Elysia } from 'elysia'
import { readJsonObject, tooLarge } from '../../http/body'
import type { JsonShapeLimits } from '../../http/json-shape'
import { type Body, jsonSchema, routeDetail } from '../../http/openapi-doc'
import { ApiError } from '../../shared/errors'
import {
  BATCH_BODY_MEMORY_FACTOR,
  BATCH_LIST_DEFAULT,
  BATCH_LIST_MAX,
  MAX_BATCH_BODY_BYTES,
  MAX_BATCH_BODY_MB,
  MAX_BATCH_ITEMS,
  MAX_BATCH_JSON_VALUES,
  MAX_IMAGE_MB,
  MAX_JSON_BODY_BYTES,
  MAX_JSON_DEPTH,
  MAX_PENDING_BATCH_IMAGE_BYTES,
  MAX_PENDING_BATCH_IMAGE_BYTES_PER_ACCOUNT,
  UPLOAD_RECEIVE_SECONDS,
} from '../../shared/limits'
import { EXAMPLE_ALT_TEXT_RESULT } from '../alt-text/model'
import type { AltTextService } from '../alt-text/service'
import type { authPlugin } from '../auth'
import {
  BatchCreateBody,
  BatchCreatedResponse,
  BatchIdParams,
  BatchListQuery,
  BatchListResponse,
  BatchViewResponse,
  IDEMPOTENCY_HEADER_DESCRIPTION,
} from './model'
import type { BatchesService } from './service'

/** Routes that read their own body (see http/body.ts): a batch may carry images in base64, read after authentication. */
export const BATCH_BODY_ROUTES = ['POST /api/batches']

const exampleBatch = {
  id: 'bat_3f9c0a61d2b84e7f5a1c9d20',
  status: 'running' as const,
  total: 2,
  succeeded: 1,
  failed: 0,
  created_at: '2026-11-20T10:00:00.000Z',
  completed_at: null,
  webhook_url: null,
  review: false,
}

const BATCH_SHAPE: JsonShapeLimits = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_BATCH_JSON_VALUES }

export type BatchBodyOptions = {
  /** Takes bytes of the process's memory budget for a large body, or throws 503 overloaded (ImageIntake.reserveBody). */
  reserve: (bytes: number) => () => void
  /** How long a body may take to arrive, the wait for an upload place included (ms). */
  receiveMs: number
}

const timedOut = () => new ApiError('invalid_request', `the request body did not arrive within ${UPLOAD_RECEIVE_SECONDS} seconds`)

export function batchesRoutes(batches: BatchesService, altText: AltTextService, authentication: ReturnType<typeof authPlugin>, bodies: BatchBodyOptions) {
  return new Elysia({ prefix: '/api' })
    .use(authentication)
    .post(
      '/batches',
      async ({ caller, request, set }) => {
        // No credit, no body read (as for a single call).
        await altText.requireCredit(caller)
        const header = request.headers.get('content-length')
        const length = header === null ? null : Number(header)
        if (length !== null && length > MAX_BATCH_BODY_BYTES) throw tooLarge(MAX_BATCH_BODY_BYTES)
        const signal = AbortSignal.any([request.signal, AbortSignal.timeout(bodies.receiveMs)])
        const held: (() => void)[] = []
        try {
          // A body that may carry images waits for one of the account's upload places, then takes what
          // reading, parsing and storing it may hold from the process's memory budget, or is refused
          // unread: concurrent large bodies of all accounts together stay within that budget.
          if (length === null || !(length <= MAX_JSON_BODY_BYTES)) {
            held.push(await altText.uploadPlace(caller, signal))
            held.push(bodies.reserve(BATCH_BODY_MEMORY_FACTOR * (length !== null && length >= 0 ? length : MAX_BATCH_BODY_BYTES)))
          }
          const body = await readJsonObject(request, { limit: MAX_BATCH_BODY_BYTES, shape: BATCH_SHAPE, signal, timedOut })
          const created = await batches.create(caller.org.account, body, request.headers.get('idempotency-key'))
          set.status = 202
          if (created.replayed) set.headers['idempotent-replayed'] = 'true'
          return created.body satisfies Body<typeof BatchCreatedResponse>
        } finally {
          for (const release of held) release()
        }
      },
      {
        auth: true,
        detail: {
          ...routeDetail({
            summary: 'Create a batch',
            operationId: 'createBatch',
            jsonBody: true,
            description: `Queues 1 to ${MAX_BATCH_ITEMS} alt-text requests and answers at once with the batch id; poll GET /api/batches/{id}, or give \`webhook_url\` to be told when it ends. Each item takes the fields of POST /api/alt-text's JSON body (\`image_url\` or \`image_base64\`, language, context, max_length, style, keywords, detect_decorative) and an optional \`metadata\` object that is returned with its result. Items run through the same pipeline as single calls (cache, credits, the model queue), in the background: single calls go first, so a batch takes the model's spare capacity. Each item is charged like a single call (cached and failed items are free); when the credits run out, the remaining items fail with \`quota_exceeded\`. The batch survives restarts and crashes: no item is lost and none is charged twice. The body may be ${MAX_BATCH_BODY_MB} MB, each image at most ${MAX_IMAGE_MB} MB once decoded; arrays and objects may nest ${MAX_JSON_DEPTH} levels and hold ${MAX_BATCH_JSON_VALUES} elements and members in all (400 beyond, checked as the body arrives). A body over ${MAX_JSON_BODY_BYTES / 1024} KiB must arrive within ${UPLOAD_RECEIVE_SECONDS} seconds and takes ${BATCH_BODY_MEMORY_FACTOR} times its length from the service's memory budget for images (ALTTEXT_DECODE_BUDGET_MB) while it is read and stored; when that memory is in use it is refused unread with 503 \`overloaded\`. Uploaded images wait in the database until their item has run: at most ${MAX_PENDING_BATCH_IMAGE_BYTES_PER_ACCOUNT / (1024 * 1024)} MB per account (429 \`pending_images_limit\` beyond) and ${MAX_PENDING_BATCH_IMAGE_BYTES / (1024 * 1024)} MB for the service (503 \`overloaded\`). Header \`Idempotency-Key\`: ${IDEMPOTENCY_HEADER_DESCRIPTION} Creation counts as one request for the rate limit. An account with no credit left gets 429 \`quota_exceeded\` before the body is read.`,
            tags: ['Batches'],
            success: [
              {
                status: 202,
                description: 'Queued (or, with an Idempotency-Key seen before, the first batch made with it).',
                schema: BatchCreatedResponse,
                headers: {
                  'Idempotent-Replayed': {
                    description: 'true when the answer is the batch first made with this Idempotency-Key (no new batch was created).',
                    schema: { type: 'string', enum: ['true'] },
                  },
                },
                example: { id: exampleBatch.id, status: 'queued', total: 2, created_at: exampleBatch.created_at },
              },
            ],
            errors: ['invalid_request', 'invalid_image', 'quota_exceeded', 'pending_images_limit', 'idempotency_conflict', 'overloaded', 'database_busy'],
            exampleMessages: {
              invalid_request: `items: must have at most ${MAX_BATCH_ITEMS} items; send more in several batches`,
              invalid_image:
                'items[3].image_base64 is not valid base64; send standard base64 (A-Z, a-z, 0-9, + and /, padded with =) or a data:image/<type>;base64, URL',
              idempotency_conflict:
                'this Idempotency-Key was used within the last 24 hours for another request (batch bat_3f9c0a61d2b84e7f5a1c9d20); use a new key for a new request',
            },
          }),
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: IDEMPOTENCY_HEADER_DESCRIPTION,
              schema: { type: 'string', minLength: 1, maxLength: 255 },
            },
          ],
          // The route reads its own body (see BATCH_BODY_ROUTES), so the document says what it takes.
          requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(BatchCreateBody, 'input') } } },
        },
      },
    )
    .get(
      '/batches',
      ({ caller, query }): Promise<Body<typeof BatchListResponse>> => batches.list(caller.org.account, query.limit ?? BATCH_LIST_DEFAULT, query.cursor),
      {
        auth: true,
        query: BatchListQuery,
        detail: routeDetail({
          summary: 'List batches',
          operationId: 'listBatches',
          description: `The account's batches, newest first, ${BATCH_LIST_DEFAULT} per page by default (at most ${BATCH_LIST_MAX}), without their items. Pass \`next_cursor\` as \`cursor\` for the next page. Ended batches are deleted after the retention time (ALTTEXT_BATCH_RETENTION_DAYS, 30 days by default).`,
          tags: ['Batches'],
          success: [{ status: 200, description: 'One page.', schema: BatchListResponse, example: { items: [exampleBatch], next_cursor: null } }],
          errors: ['invalid_request'],
          exampleMessages: { invalid_request: `limit: must be a whole number from 1 to ${BATCH_LIST_MAX}` },
        }),
      },
    )
    .get('/batches/:id', ({ caller, params }): Promise<Body<typeof BatchViewResponse>> => batches.get(caller.org.account, params.id), {
      auth: true,
      params: BatchIdParams,
      detail: routeDetail({
        summary: 'Show a batch',
        operationId: 'getBatch',
        description:
          "The batch's status and counts, and every item in request order: pending, done with its `result` (the answer POST /api/alt-text gives), or failed with its `error` (`code`, `message`), each with its metadata. An unknown id, or another account's, is 404 `not_found`.",
        tags: ['Batches'],
        success: [
          {
            status: 200,
            description: 'The batch.',
            schema: BatchViewResponse,
            example: {
              ...exampleBatch,
              items: [
                { index: 0, status: 'done', result: EXAMPLE_ALT_TEXT_RESULT, metadata: { media_id: 4711 } },
                { index: 1, status: 'pending', metadata: { media_id: 4712 } },
              ],
            },
          },
        ],
        errors: ['not_found'],
        exampleMessages: { not_found: 'no batch with that id in this account' },
      }),
    })
    .post('/batches/:id/cancel', ({ caller, params }): Promise<Body<typeof BatchViewResponse>> => batches.cancel(caller.org.account, params.id), {
      auth: true,
      params: BatchIdParams,
      detail: routeDetail({
        summary: 'Cancel a batch',
        operationId: 'cancelBatch',
        description:
          'Stops the items not yet started: they fail with `batch_cancelled` and cost nothing. Items already running finish (and are charged as usual); the batch ends (`completed_at`, and its webhook) when they have. Cancelling a cancelled batch answers it again; a completed one is 409 `batch_finished`.',
        tags: ['Batches'],
        success: [
          {
            status: 200,
            description: 'The batch after the cancel.',
            schema: BatchViewResponse,
            example: {
              ...exampleBatch,
              status: 'cancelled',
              failed: 1,
              completed_at: '2026-11-20T10:00:03.000Z',
              items: [
                { index: 0, status: 'done', result: EXAMPLE_ALT_TEXT_RESULT, metadata: { media_id: 4711 } },
                {
                  index: 1,
                  status: 'failed',
                  error: { code: 'batch_cancelled', message: 'the batch was cancelled before this item started; it was not run and cost nothing' },
                  metadata: { media_id: 4712 },
                },
              ],
            },
          },
        ],
        errors: ['not_found', 'batch_finished', 'database_busy'],
        exampleMessages: { not_found: 'no batch with that id in this account' },
      }),
    })
}
