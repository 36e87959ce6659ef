// The batch runner: the one owner of batch work in this process. It claims items in the store and runs each
// through the alt-text pipeline as background work (AltTextService.generateItem), keeping a few more
// items under way than the model has slots, so images are fetched and prepared while the model is busy.
// Open batches share the runner round-robin (the batch with the fewest items under way goes next).
// A claim has a token and a lease, which the runner renews (a third of the lease apart) while the item
// runs; an item whose lease ended (its process died or stalled) is taken over by the next claim of any
// process. An item's answer, its `done` and its credit are one transaction fenced by the token: a runner
// whose claim was taken over stops the item and records nothing, so every item is charged at most once.
// A kill -9 at any moment leaves its items claimed until their lease ends (SQLite's one process ends
// them at its next start); a cached answer makes the redo free. It also deletes ended batches after the
// retention time, on a timer of its own.
import { DEFAULT_MAX_PIXELS, UploadBuffer } from '../../intake'
import { CreditsHeldError } from '../../credits/service'
import { sha256Hex } from '../../shared/crypto'
import { ApiError, ClientClosedError } from '../../shared/errors'
import type { Logger } from '../../shared/logger'
import { pause, type Scheduler } from '../../shared/scheduler'
import { BATCH_ITEM_ATTEMPTS, MAX_IMAGE_BYTES } from '../../shared/limits'
import type { BatchStore, ClaimedItem, ItemOutcome } from '../../store/contract'
import { StoreBusyError } from '../../store/contract'
import type { OrgStore, SuggestionStore, SuggestionTarget } from '../../store/contract'
import type { AltTextRequest, AltTextResult } from '../alt-text/model'
import type { AltTextInput, AltTextService, ItemRecorder } from '../alt-text/service'
import { accountDisabled } from '../auth/service'

export type BatchRunner = {
  /** Looks for work now (a batch was created). */
  wake(): void
  /** Stops claiming, aborts what runs (their items are put back to pending) and stops the timers. */
  close(): Promise<void>
}

export type BatchRunnerDeps = {
  store: BatchStore
  orgs: Pick<OrgStore, 'byId'>
  /** Where the answers of a review batch become pending suggestions of its organisation. */
  suggestions: Pick<SuggestionStore, 'create' | 'get'>
  altText: AltTextService
  logger: Logger
  clock: () => number
  /** The timers: the poll, the purge, lease renewals, waits before retries. */
  scheduler: Scheduler
  /** Items under way at once. */
  inFlight: number
  /** How long a claim lasts unless renewed (ALTTEXT_BATCH_LEASE_SECONDS), in ms. */
  leaseMs: number
  retentionDays: number
  /** Told when an item ended its batch (a wake-up for the webhook dispatcher). */
  onFinished?: (batchId: string) => void
  /** Told each item this runner recorded as done or failed (metrics). */
  onItemRecorded?: (state: ItemOutcome['kind']) => void
  /** Waits before retrying an item after a transient failure, by attempt (ms). */
  retryDelaysMs?: number[]
  /** At most this long between tries of an item whose credit is held by generations under way (ms). */
  heldWaitMs?: number
  /** How often to look for work without a wake-up, and to purge ended batches (ms). */
  pollMs?: number
  purgeEveryMs?: number
}

/** Failures worth another try: the model server or the machine was busy, not the item wrong. */
const TRANSIENT = new Set(['upstream_error', 'upstream_timeout', 'overloaded', 'database_busy'])

/** Stops an item whose claim was taken over: like a client that left, it is not a failure of the item. */
const claimLost = () => new ClientClosedError('claim')

/** An item under way: its claim, what stops its run when the claim is lost, and whether that (or a wait for held credits) was logged. */
type Running = { item: ClaimedItem; stop: AbortController; recording: boolean; lostLogged: boolean; heldLogged: boolean }

/** The review page's thumbnails, as POST /api/suggestions makes them. */
const THUMBNAIL_SIDE = 192
/** The intake's default bound: an image it took has no more pixels, unless the operator raised it. */
const MAX_THUMBNAIL_INPUT_PIXELS = DEFAULT_MAX_PIXELS

export function createBatchRunner(deps: BatchRunnerDeps): BatchRunner {
  const { store, orgs, altText, logger, clock, scheduler } = deps
  const retryDelays = deps.retryDelaysMs ?? [2_000, 10_000]
  const heldWaitMs = deps.heldWaitMs ?? 2_000
  const shutdown = new AbortController()
  /** Items under way, per batch. */
  const running = new Map<string, number>()
  /** Items under way, with their claims (renewed on a timer). */
  const live = new Set<Running>()
  let underWay = 0
  let filling: Promise<void> | null = null
  let again = false

  /** Resolved when nothing is under way any more (close waits for the items it aborted). */
  const drainWaiters: (() => void)[] = []
  /** The claims of a dead last process are ended first: until then nothing is claimed. */
  let ready = false

  /** Waits `ms`, or less when the runner closes. */
  const wait = (ms: number) => pause(scheduler, ms, shutdown.signal)

  const lost = (work: Running) => {
    if (work.lostLogged) return
    work.lostLogged = true
    logger.warn('batch item taken over by another claim after its lease ended; this run stops and records nothing', {
      batch_id: work.item.batchId,
      index: work.item.index,
    })
  }

  /** Records the item's end under its claim; throws claimLost when the claim was taken over. */
  const record = async (work: Running, outcome: ItemOutcome) => {
    const { item } = work
    // From here the claim's fate is this write's: a renewal that finds it gone says nothing new.
    work.recording = true
    const finished = await store.finish(item.id, item.token, outcome, clock()).finally(() => {
      work.recording = false
    })
    if (finished.status === 'lost') {
      lost(work)
      throw claimLost()
    }
    if (finished.status === 'written') deps.onItemRecorded?.(outcome.kind)
    if (finished.ended) {
      logger.info('batch ended', { batch_id: finished.ended })
      deps.onFinished?.(finished.ended)
    }
    return finished
  }

  /**
   * A review batch: the answer becomes a pending suggestion of the batch's organisation (no second
   * generation, no second charge), made just before the item's end is recorded with its id, so a batch
   * that ended has every suggestion. Its id follows from the item's place, so an item run again (its
   * claim taken over, its record refused) finds the one made before instead of making a second. A
   * failure here is logged and the item recorded without one, never failed or charged again.
   */
  const suggest = async (work: Running, result: AltTextResult): Promise<string | null> => {
    const { item } = work
    if (!item.review) return null
    const publicId = `sug_${sha256Hex(`${item.batchId}#${item.index}`).slice(0, 24)}`
    try {
      if (await deps.suggestions.get(item.accountId, publicId)) return publicId
      const request = JSON.parse(item.request) as { image_url?: string | null; target?: SuggestionTarget | null }
      const own = request.target
      const target: SuggestionTarget = own
        ? { kind: own.kind, ref: own.ref, site: own.site ?? null, fingerprint: own.fingerprint ?? null }
        : { kind: 'batch', ref: `${item.batchId}#${item.index}`, site: null, fingerprint: null }
      await deps.suggestions.create(
        item.accountId,
        {
          publicId,
          target,
          currentAlt: null,
          proposedAlt: result.alt_text,
          language: result.language,
          image: {
            url: request.image_url ?? null,
            format: result.image?.format ?? null,
            width: result.image?.width ?? null,
            height: result.image?.height ?? null,
            thumbnail: item.image ? await thumbnailOf(item.image) : null,
          },
          checks: { wcagCompliant: result.wcag_compliant, wcagIssues: result.wcag_issues, verdict: null, decorative: result.decorative },
          batchId: item.batchId,
        },
        // No person made it: the log names no author.
        { accountId: null, email: null, now: clock() },
      )
      return publicId
    } catch (error) {
      // Another claimant of the item made it at the same moment (the id is taken): that one is the item's.
      if (await deps.suggestions.get(item.accountId, publicId).catch(() => null)) return publicId
      logger.warn('batch item answered but its suggestion was not made', { batch_id: item.batchId, index: item.index, error: String(error) })
      return null
    }
  }

  /** A small WebP for the review page; the image passed the intake's checks when it was answered. */
  const thumbnailOf = async (bytes: Uint8Array): Promise<Uint8Array | null> => {
    try {
      const { default: sharp } = await import('sharp')
      const webp = await sharp(bytes, { limitInputPixels: MAX_THUMBNAIL_INPUT_PIXELS, animated: false })
        .resize(THUMBNAIL_SIDE, THUMBNAIL_SIDE, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 70 })
        .toBuffer()
      return new Uint8Array(webp)
    } catch (error) {
      logger.warn('batch suggestion thumbnail not made', { error: String(error) })
      return null
    }
  }

  const recorder = (work: Running): ItemRecorder => ({
    itemId: work.item.id,
    async free(result) {
      const suggestionId = await suggest(work, result)
      await record(work, { kind: 'done', result: () => JSON.stringify(result), charge: null, suggestionId })
    },
    async charged(period, build, holdIds) {
      // Only credits_remaining depends on the charge: the suggestion's fields are known before it.
      const suggestionId = await suggest(work, build(0))
      const finished = await record(work, { kind: 'done', result: (used) => JSON.stringify(build(used ?? 0)), charge: { period, holdIds }, suggestionId })
      return finished.status === 'written' ? finished.used : null
    },
  })

  /** Puts the item back under its claim (nothing happens when the claim is gone). */
  const unclaim = (item: ClaimedItem) => store.unclaim(item.id, item.token).catch(() => {})

  const inputOf = (item: ClaimedItem): AltTextInput => {
    // The target is the suggestion's (a review batch), not the generation's.
    const { target: _target, ...request } = JSON.parse(item.request) as AltTextRequest & { target?: unknown }
    if (!item.image) return request
    const buffer = new UploadBuffer(item.image.byteLength, MAX_IMAGE_BYTES)
    buffer.write(item.image)
    return { ...request, upload: buffer.finish() }
  }

  const fail = async (work: Running, code: string, message: string) => {
    const { item } = work
    try {
      await record(work, { kind: 'failed', code, message })
    } catch (error) {
      if (error instanceof ClientClosedError) return // The claim was taken over: its new claimant records the item.
      logger.warn('batch item failure not recorded; it runs again later', { batch_id: item.batchId, index: item.index, error: String(error) })
      await unclaim(item)
    }
  }

  const run = async (work: Running): Promise<void> => {
    const { item } = work
    // A batch belongs to the organisation that pays for it (a person's own account for a personal one).
    const org = await orgs.byId(item.accountId)
    if (!org) return // Deleted with its batches meanwhile.
    const { account } = org
    if (account.disabledAt !== null) {
      const refusal = accountDisabled()
      return fail(work, refusal.code, refusal.message)
    }
    const caller = { account, key: null, session: null, org, role: 'owner' as const }
    const signal = AbortSignal.any([shutdown.signal, work.stop.signal])
    for (let attempt = 1; ; attempt++) {
      try {
        await altText.generateItem(caller, inputOf(item), signal, recorder(work))
        return
      } catch (error) {
        if (error instanceof ClientClosedError || signal.aborted) {
          // Shutting down (the item is pending again for any process), or the claim was lost (nothing to put back).
          await unclaim(item)
          return
        }
        if (error instanceof CreditsHeldError) {
          // Held credits are not spent: the item waits (not an attempt) until a hold ends or lapses, then
          // tries again; it fails with quota_exceeded only once charged credits use the period up.
          attempt--
          if (!work.heldLogged) {
            work.heldLogged = true
            logger.info('batch item waits: the last credits are held by generations under way', { batch_id: item.batchId, index: item.index })
          }
          await wait(Math.min(error.retryInMs, heldWaitMs))
          if (signal.aborted) {
            await unclaim(item)
            return
          }
          continue
        }
        if (error instanceof ApiError || error instanceof StoreBusyError) {
          if (TRANSIENT.has(error.code) && attempt < BATCH_ITEM_ATTEMPTS) {
            await wait(retryDelays[attempt - 1] ?? retryDelays.at(-1) ?? 0)
            if (signal.aborted) {
              await unclaim(item)
              return
            }
            continue
          }
          await fail(work, error.code, error.message)
          return
        }
        logger.error('batch item failed', { batch_id: item.batchId, index: item.index, error: error instanceof Error ? error.message : String(error) })
        await fail(work, 'internal_error', 'something failed inside the service; nothing was charged (the operator log has details)')
        return
      }
    }
  }

  /** Renews the lease of every item under way; one whose claim was taken over is stopped. */
  let renewing: Promise<void> | null = null
  const renew = () => {
    if (renewing || live.size === 0) return
    renewing = renewAll().finally(() => {
      renewing = null
    })
  }
  const renewAll = async () => {
    for (const work of [...live]) {
      if (!live.has(work) || work.stop.signal.aborted) continue
      const outcome = await store.renew(work.item.id, work.item.token, clock(), deps.leaseMs).catch((error: unknown) => {
        // Tried again at the next renewal; the lease has two more before it ends.
        logger.warn('batch item lease not renewed; trying again shortly', { batch_id: work.item.batchId, index: work.item.index, error: String(error) })
        return 'written' as const
      })
      if (outcome === 'written' || work.recording || !live.has(work)) continue
      if (outcome === 'lost') lost(work)
      work.stop.abort(claimLost())
    }
  }

  const start = (item: ClaimedItem) => {
    underWay++
    running.set(item.batchId, (running.get(item.batchId) ?? 0) + 1)
    const work: Running = { item, stop: new AbortController(), recording: false, lostLogged: false, heldLogged: false }
    live.add(work)
    void run(work)
      .catch((error: unknown) => logger.error('batch item run failed', { batch_id: item.batchId, error: String(error) }))
      .finally(() => {
        live.delete(work)
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
      const open = await store.openBatches(clock())
      // Round-robin: the batch with the fewest items under way first, the oldest among equals.
      const candidates = open.map((id, order) => ({ id, order }))
      while (underWay < deps.inFlight && candidates.length > 0 && !shutdown.signal.aborted) {
        candidates.sort((a, b) => (running.get(a.id) ?? 0) - (running.get(b.id) ?? 0) || a.order - b.order)
        const next = candidates[0]!
        const item = await store.claim(next.id, clock(), deps.leaseMs)
        if (item?.takenOver)
          logger.info('batch item taken over: the lease of its last claim ended (its process stopped or stalled)', {
            batch_id: item.batchId,
            index: item.index,
          })
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

  const timers = [
    scheduler.setInterval(wake, deps.pollMs ?? 5_000),
    scheduler.setInterval(() => void purge(), deps.purgeEveryMs ?? 3_600_000),
    scheduler.setInterval(renew, deps.leaseMs / 3),
  ]

  const started = store
    .endOrphanedClaims()
    .then((ended) => {
      if (ended > 0) logger.info('batch items claimed by a process that stopped are pending again', { items: ended })
    })
    .catch((error: unknown) => logger.error('batch item claims of the last process could not be ended at start', { error: String(error) }))
    .then(() => {
      ready = true
      wake()
      return purge()
    })

  return {
    wake,
    async close() {
      for (const timer of timers) scheduler.clear(timer)
      shutdown.abort(new ClientClosedError('shutdown'))
      await started
      if (filling) await filling
      if (renewing) await renewing
      // Items under way see the abort and put themselves back; wait for them while the store is still open.
      if (underWay > 0) await new Promise<void>((resolve) => drainWaiters.push(resolve))
    },
  }
}
