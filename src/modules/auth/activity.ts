// Counts authenticated calls per account and day, and each key's last use, in memory; writes them in
// one transaction per second (and at shutdown) so a busy key costs no write per request. A stored count
// once read is kept current by this process's own writes and read again after STORED_MAX_AGE_MS: other
// replicas add to it too, and nothing tells this one.
import { createCalendar } from '../../shared/time'
import type { MaybePromise } from '../../shared/maybe-promise'
import type { ActivityBatch, ActivityStore } from '../../store/types'
import type { Logger } from '../../shared/logger'

export type ActivityRecorder = {
  record(accountId: number, keyId: number, now: number): void
  /** At once when the day's stored count is in memory (see shared/maybe-promise.ts). */
  callsToday(accountId: number, now: number): MaybePromise<number>
  lastUsed(keyId: number): number | undefined
  /** Drops the counts of a deleted account, stored or not. */
  forget(accountId: number): void
  flush(): Promise<void>
  stop(): Promise<void>
}

const emptyBatch = (): ActivityBatch => ({ calls: new Map(), lastUsed: new Map() })

const callsIn = (batch: ActivityBatch | null, accountId: number, day: string) => batch?.calls.get(accountId)?.get(day) ?? 0

/** Other replicas' calls show in this one's count within this. */
export const STORED_MAX_AGE_MS = 60_000

/** While writes keep failing (a locked database), one warning a minute is enough. */
const WARN_EVERY_MS = 60_000

export function createActivityRecorder(store: ActivityStore, logger: Logger, flushEveryMs = 1000): ActivityRecorder {
  const { dayOf } = createCalendar()
  let pending = emptyBatch()
  // The batch being written: counted from here until it is stored or put back into `pending`, so a read
  // need not wait for a write that may be retrying against a locked database.
  let writing: ActivityBatch | null = null
  let flushing: Promise<void> | null = null
  // Stored counts of (account, day) once read, with when, kept current by each flush: reads cost no query.
  const stored = new Map<string, { count: number; readAt: number }>()
  let failedFlushes = 0
  let warnedAt = Number.NEGATIVE_INFINITY

  const failed = (error: unknown) => {
    failedFlushes++
    const now = performance.now()
    if (failedFlushes > 1 && now - warnedAt < WARN_EVERY_MS) return
    warnedAt = now
    const fields = error instanceof Error ? { error: error.message, detail: (error as { detail?: string }).detail } : { error: String(error) }
    logger.warn('activity flush failed; the counts stay in memory and are retried', { ...fields, failed_flushes: failedFlushes })
  }

  const flush = async () => {
    while (flushing) await flushing
    if (pending.calls.size === 0 && pending.lastUsed.size === 0) return
    const batch = pending
    pending = emptyBatch()
    writing = batch
    flushing = store
      .apply(batch)
      .then(
        () => {
          for (const [account, days] of batch.calls) {
            for (const [day, n] of days) {
              const key = `${account}:${day}`
              const known = stored.get(key)
              if (known !== undefined) known.count += n
            }
          }
          if (failedFlushes > 0) logger.info('activity flush succeeded again', { failed_flushes: failedFlushes })
          failedFlushes = 0
        },
        (error: unknown) => {
          // Put the batch back so counts are not lost to a transient failure (e.g. a busy database).
          for (const [account, days] of batch.calls) for (const [day, n] of days) add(account, day, n)
          for (const [key, at] of batch.lastUsed) pending.lastUsed.set(key, Math.max(at, pending.lastUsed.get(key) ?? 0))
          failed(error)
        },
      )
      .finally(() => {
        writing = null
        flushing = null
      })
    await flushing
  }

  const add = (accountId: number, day: string, n: number) => {
    let days = pending.calls.get(accountId)
    if (!days) {
      days = new Map()
      pending.calls.set(accountId, days)
    }
    days.set(day, (days.get(day) ?? 0) + n)
  }

  /** Calls in memory, not yet stored: being written plus pending. */
  const unstored = (accountId: number, day: string) => callsIn(writing, accountId, day) + callsIn(pending, accountId, day)

  const callsToday = (accountId: number, now: number): MaybePromise<number> => {
    const day = dayOf(now)
    const key = `${accountId}:${day}`
    const known = stored.get(key)
    if (known !== undefined && now - known.readAt < STORED_MAX_AGE_MS) return known.count + unstored(accountId, day)
    // Read again as for the first time: a flush meanwhile must not add to a count about to be replaced.
    stored.delete(key)
    // A read now may or may not see a batch of this day that is being written: wait for that batch.
    if (flushing && callsIn(writing, accountId, day) > 0) return flushing.then(() => callsToday(accountId, now))
    return store.callsOn(accountId, day).then((read) => {
      // Remembered in the same turn as the read: no flush can complete in between and be missed.
      if (stored.size >= 10_000) stored.clear()
      stored.set(key, { count: read, readAt: now })
      return read + unstored(accountId, day)
    })
  }

  const timer = setInterval(() => void flush(), flushEveryMs)
  timer.unref()

  return {
    record(accountId, keyId, now) {
      add(accountId, dayOf(now), 1)
      pending.lastUsed.set(keyId, now)
    },
    callsToday,
    lastUsed: (keyId) => pending.lastUsed.get(keyId) ?? writing?.lastUsed.get(keyId),
    forget(accountId) {
      pending.calls.delete(accountId)
      const prefix = `${accountId}:`
      for (const key of stored.keys()) if (key.startsWith(prefix)) stored.delete(key)
    },
    flush,
    async stop() {
      clearInterval(timer)
      await flush()
      // The last chance to write them: say so loudly rather than lose them quietly.
      if (pending.calls.size > 0 || pending.lastUsed.size > 0) {
        let calls = 0
        for (const days of pending.calls.values()) for (const n of days.values()) calls += n
        logger.error('activity not saved at shutdown: the database refused the last write', { calls, keys: pending.lastUsed.size })
      }
    },
  }
}
