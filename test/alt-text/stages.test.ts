// The service's failures name the stage they happened in: a hang-up is a ClientClosedError for its
// stage, a deadline passing before the model was asked is never "the model did not answer", and an
// ApiError from the intake stands. The service runs here with fakes around it, so each stage can be
// held until the request's signal ends it.
import { describe, expect, test } from 'bun:test'
import { createCreditLedger } from '../../src/credits/service'
import type { FetchedImage, ImageIntake, PreparedImage } from '../../src/intake'
import type { DescribeAnswer, DescribeRequest, ModelProvider } from '../../src/model-provider/provider'
import type { Caller } from '../../src/modules/auth/service'
import type { AltTextRequest } from '../../src/modules/alt-text/model'
import { createGenerationQueue } from '../../src/modules/alt-text/queue'
import { createAltTextService } from '../../src/modules/alt-text/service'
import { ApiError, ClientClosedError } from '../../src/shared/errors'
import { createLogger } from '../../src/shared/logger'
import type { CachedAltText } from '../../src/store/contract'

const image: FetchedImage = { bytes: new Uint8Array(8), contentHash: 'hash', format: 'png', width: 10, height: 10, finalUrl: 'https://example.com/a.png' }
const prepared: PreparedImage = { data: new Uint8Array(8), mime: 'image/png', width: 10, height: 10 }
const account = { id: 1, email: 'a@example.com', passwordHash: '', plan: 'free', monthlyCredits: null, disabledAt: null, createdAt: 0, emailVerifiedAt: 0 }
const caller: Caller = {
  account,
  key: { id: 1, accountId: 1, orgId: 1, prefix: 'alt_0000', label: null, createdAt: 0, expiresAt: null, revokedAt: null, lastUsedAt: null },
  session: null,
  org: { id: 1, publicId: `org_${'0'.repeat(24)}`, name: 'Personal', personal: true, account, createdAt: 0 },
  role: 'owner',
}
const request: AltTextRequest = { image_url: image.finalUrl, language: 'en', style: 'descriptive', max_length: 125, detect_decorative: false }

/** Settles only when `signal` aborts (or at once if it has), rejecting with `error()` (default: the signal's reason). */
const heldUntilAbort = (signal: AbortSignal | undefined, error = (): unknown => signal?.reason) =>
  new Promise<never>((_, reject) => {
    if (signal?.aborted) reject(error())
    signal?.addEventListener('abort', () => reject(error()), { once: true })
  })

function serviceWith(parts: { prepare?: ImageIntake['prepare']; describe?: (request: DescribeRequest) => Promise<DescribeAnswer>; deadlineMs?: number }) {
  const lines: string[] = []
  let charged = 0
  const cached = new Map<string, CachedAltText>()
  const intake: ImageIntake = {
    fetch: async () => image,
    accept: async () => image,
    uploadPlace: async () => () => {},
    reserveBody: () => () => {},
    prepare: parts.prepare ?? (async () => prepared),
    close: async () => {},
  }
  const model: ModelProvider = {
    name: 'fake',
    model: 'fake',
    health: async () => ({ ok: true, detail: 'fake', publicDetail: 'fake' }),
    describe: parts.describe ?? (async () => ({ content: 'A dog on a beach.', structured: false })),
  }
  const service = createAltTextService({
    intake,
    model,
    credits: createCreditLedger(
      {
        keepCounts: true,
        counts: async () => ({ used: charged, granted: 0 }),
        hold: async () => 1,
        held: async () => 0,
        commitHold: async () => ++charged,
        releaseHold: async () => {},
        renewHolds: async () => {},
        purgeExpiredHolds: async () => 0,
        endOrphanedHolds: async () => 0,
      },
      10,
    ),
    cache: { get: async (key) => cached.get(key) ?? null, put: async (key, entry) => void cached.set(key, entry), purgeExpired: async () => 0 },
    queue: createGenerationQueue({ concurrency: 1 }),
    history: { record: () => {} },
    logger: createLogger((line) => lines.push(line)),
    clock: Date.now,
    cacheTtlMs: 60_000,
    cacheScope: 'account',
    deadlineMs: parts.deadlineMs ?? 100,
  })
  return { service, charged: () => charged, logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) }
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('it should have failed'),
    (error: unknown) => error,
  )

describe('the deadline', () => {
  test('passing while the image is prepared: 503 overloaded naming the stage, not a model timeout', async () => {
    const { service, charged, logs } = serviceWith({ prepare: (_image, signal) => heldUntilAbort(signal) })
    const error = await failureOf(service.generate(caller, request, new AbortController().signal))
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).code).toBe('overloaded')
    expect((error as ApiError).message).toContain('prepare')
    expect(logs().filter((line) => /model call/.test(String(line.msg)))).toEqual([])
    expect(charged()).toBe(0)
  })

  test('passing while the intake waits for capacity: its own ApiError stands', async () => {
    const busy = new ApiError('overloaded', 'the image could not be prepared before the deadline of this request', { retryAfterSeconds: 5 })
    const { service } = serviceWith({ prepare: (_image, signal) => heldUntilAbort(signal, () => busy) })
    expect(await failureOf(service.generate(caller, request, new AbortController().signal))).toBe(busy)
  })

  test('passing in the model call: 504 upstream_timeout', async () => {
    const { service, charged } = serviceWith({ describe: (call) => heldUntilAbort(call.signal) })
    const error = await failureOf(service.generate(caller, request, new AbortController().signal))
    expect((error as ApiError).code).toBe('upstream_timeout')
    expect(charged()).toBe(0)
  })
})

describe('the client hangs up', () => {
  test.each(['prepare', 'model'] as const)('during %s: ClientClosedError for that stage, nothing charged, nothing logged as a failure', async (stage) => {
    const client = new AbortController()
    const { service, charged, logs } = serviceWith({
      deadlineMs: 15_000,
      prepare: async (_image, signal) => {
        if (stage !== 'prepare') return prepared
        client.abort()
        return heldUntilAbort(signal)
      },
      describe: (call) => {
        client.abort()
        return heldUntilAbort(call.signal)
      },
    })
    const error = await failureOf(service.generate(caller, request, client.signal))
    expect(error).toBeInstanceOf(ClientClosedError)
    expect((error as ClientClosedError).stage).toBe(stage)
    expect(charged()).toBe(0)
    expect(logs().filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([])
  })
})
