// The batch runner: the one owner of batch work in this process. It claims items in SQLite and runs each
// through the alt-text pipeline as background work (AltTextService.generateItem), keeping a few more
// items under way than the model has slots, so images are fetched and prepared while the model is busy.
// Open batches share the runner round-robin (the batch with the fewest items under way goes next).
// An item's answer, its `done` and its credit are one transaction; a kill -9 at any moment leaves its
// item claimed, and claimed items are pending again at the next start (a cached answer makes the redo
// free). It also deletes ended batches after the retention time, on a timer of its own.
import { UploadBuffer } from '../../intake'
import { ApiError, ClientClosedError } from '../../shared/errors'
import type { Logger } from '../../shared/logger'
import { BATCH_ITEM_ATTEMPTS, MAX_IMAGE_BYTES } from '../../shared/limits'
import type { BatchStore, ClaimedItem, ItemOutcome } from '../../store/batches'
import { StoreBusyError } from '../../store/errors'
import type { AccountStore } from '../../store/types'
import type { AltTextRequest } from '../alt-text/model'
import type { AltTextInput, AltTextService, ItemRecorder } from '../alt-text/service'
import { accountDisabled } from '../auth/service'

export type BatchRunner = {
  /** Looks for work now (a batch was created). */
  wake(): void
  /** Stops claiming, aborts what runs (their items are pending again at the next start) and stops the timers. */
  close(): Promise<void>
}

export type BatchRunnerDeps = {
  store: BatchStore
  accounts: AccountStore
  altText: AltTextService
  logger: Logger
  clock: () => number
  /** Items under way at once. */
  inFlight: number
  retentionDays: number
  /** Told when an item ended its batch (a wake-up for the webhook dispatcher). */
  onFinished?: (batchId: string) => void
  /** Told each item this runner recorded as done or failed (metrics). */
  onItemRecorded?: (state: ItemOutcome['kind']) => void
  /** Waits before retrying an item after a transient failure, by attempt (ms). */
  retryDelaysMs?: number[]
  /** How often to look for work without a wake-up, and to purge ended batches (ms). */
  pollMs?: number
  purgeEveryMs?: number
}

/** Failures worth another try: the model server or the machine was busy, not the item wrong. */
const TRANSIENT = new Set(['upstream_error', 'upstream_timeout', 'overloaded', 'database_busy'])

export function createBatchRunner(deps: BatchRunnerDeps): BatchRunner {
  const { store, accounts, altText, logger, clock } = deps
  const retryDelays = deps.retryDelaysMs ?? [2_000, 10_000]
  const shutdown = new AbortController()
  /** Items under way, per batch. */
  const running = new Map<string, number>()
  let underWay = 0
  let filling: Promise<void> | null = null
  let again = false

  /** Resolved when nothing is under way any more (close waits for the items it aborted). */
  const drainWaiters: (() => void)[] = []
  /** Claimed items of the last process are reset first: until then nothing is claimed. */
  let ready = false

  /** Waits `ms`, or less when the runner closes. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        shutdown.signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      shutdown.signal.addEventListener('abort', done, { once: true })
    })

  const record = (item: ClaimedItem, outcome: ItemOutcome) =>
    store.finish(item.id, outcome, clock()).then((finished) => {
      if (finished.written) deps.onItemRecorded?.(outcome.kind)
      if (finished.ended) {
        logger.info('batch ended', { batch_id: finished.ended })
        deps.onFinished?.(finished.ended)
      }
      return finished
    })

  const recorder = (item: ClaimedItem): ItemRecorder => ({
    async free(result) {
      await record(item, { kind: 'done', result: () => JSON.stringify(result), charge: null })
    },
    async charged(period, build, holdId) {
      const finished = await record(item, { kind: 'done', result: (used) => JSON.stringify(build(used ?? 0)), charge: { period, holdId } })
      return finished.written ? finished.used : null
    },
  })

  const inputOf = (item: ClaimedItem): AltTextInput => {
    const request = JSON.parse(item.request) as AltTextRequest
    if (!item.image) return request
    const buffer = new UploadBuffer(item.image.byteLength, MAX_IMAGE_BYTES)
    buffer.write(item.image)
    return { ...request, upload: buffer.finish() }
  }

  const fail = async (item: ClaimedItem, code: string, message: string) => {
    try {
      await record(item, { kind: 'failed', code, message })
    } catch (error) {
      logger.warn('batch item failure not recorded; it runs again later', { batch_id: item.batchId, index: item.index, error: String(error) })
      await store.unclaim(item.id).catch(() => {})
    }
  }

  const run = async (item: ClaimedItem): Promise<void> => {
    const account = await accounts.findById(item.accountId)
    if (!account) return // Deleted with its batches meanwhile.
    if (account.disabledAt !== null) {
      const refusal = accountDisabled()
      return fail(item, refusal.code, refusal.message)
    }
    const caller = { account, key: null, session: null }
    for (let attempt = 1; ; attempt++) {
      try {
        await altText.generateItem(caller, inputOf(item), shutdown.signal, recorder(item))
        return
      } catch (error) {
        if (error instanceof ClientClosedError || shutdown.signal.aborted) {
          // Shutting down: the item is pending again at the next start.
          await store.unclaim(item.id).catch(() => {})
          return
        }
        if (error instanceof ApiError || error instanceof StoreBusyError) {
          if (TRANSIENT.has(error.code) && attempt < BATCH_ITEM_ATTEMPTS) {
            await pause(retryDelays[attempt - 1] ?? retryDelays.at(-1) ?? 0)
            if (shutdown.signal.aborted) {
              await store.unclaim(item.id).catch(() => {})
              return
            }
            continue
          }
          await fail(item, error.code, error.message)
          return
        }
        logger.error('batch item failed', { batch_id: item.batchId, index: item.index, error: error instanceof Error ? error.message : String(error) })
        await fail(item, 'internal_error', 'something failed inside the service; nothing was charged (the operator log has details)')
        return
      }
    }
  }

  const start = (item: ClaimedItem) => {
    underWay++
    running.set(item.batchId, (running.get(item.batchId) ?? 0) + 1)
    void run(item)
      .catch((error: unknown) => logger.error('batch item run failed', { batch_id: item.batchId, error: String(error) }))
      .finally(() => {
        underWay--
        if (underWay === 0) for (const resolve of drainWaiters.splice(0)) resolve()
        const left = (running.get(item.batchId) ?? 1) - 1
        if (left > 0) running.set(item.batchId, left)
        else running.delete(item.batchId)
        wake()
      })
  }

  /** Claims items until the runner is full or no batch has a pending item. */
  const fill = async () => {
    do {
      again = false
      if (shutdown.signal.aborted) return
      if (underWay >= deps.inFlight) continue
      const open = await store.openBatches()
      // Round-robin: the batch with the fewest items under way first, the oldest among equals.
      const candidates = open.map((id, order) => ({ id, order }))
      while (underWay < deps.inFlight && candidates.length > 0 && !shutdown.signal.aborted) {
        candidates.sort((a, b) => (running.get(a.id) ?? 0) - (running.get(b.id) ?? 0) || a.order - b.order)
        const next = candidates[0]!
        const item = await store.claim(next.id)
        if (item) start(item)
        else candidates.shift()
      }
    } while (again)
  }

  const wake = () => {
    if (shutdown.signal.aborted || !ready) return
    if (filling) {
      again = true
      return
    }
    filling = fill()
      .catch((error: unknown) => logger.warn('batch runner could not claim items; trying again shortly', { error: String(error) }))
      .finally(() => {
        filling = null
      })
  }

  const purge = () =>
    store
      .purgeEnded(clock() - deps.retentionDays * 86_400_000)
      .then((deleted) => {
        if (deleted > 0) logger.info('ended batches deleted after their retention time', { deleted, retention_days: deps.retentionDays })
      })
      .catch((error: unknown) => logger.warn('batch purge failed', { error: String(error) }))

  const timers = [setInterval(wake, deps.pollMs ?? 5_000), setInterval(() => void purge(), deps.purgeEveryMs ?? 3_600_000)]
  for (const timer of timers) timer.unref()

  const started = store
    .resetClaimed()
    .then((reset) => {
      if (reset > 0) logger.info('batch items claimed by the last process are pending again', { items: reset })
    })
    .catch((error: unknown) => logger.error('batch items could not be reset at start', { error: String(error) }))
    .then(() => {
      ready = true
      wake()
      return purge()
    })

  return {
    wake,
    async close() {
      for (const timer of timers) clearInterval(timer)
      shutdown.abort(new ClientClosedError('shutdown'))
      await started
      if (filling) await filling
      // Items under way see the abort and put themselves back; wait for them while the store is still open.
      if (underWay > 0) await new Promise<void>((resolve) => drainWaiters.push(resolve))
    },
  }
}
