// Counts authenticated calls per account and day, and each key's last use, in memory; writes them in
// one transaction per second (and at shutdown) so a busy key costs no write per request.
import { dayOf } from '../../shared/time'
import type { MaybePromise } from '../../shared/maybe-promise'
import type { ActivityBatch, ActivityStore } from '../../store/types'
import type { Logger } from '../../shared/logger'

export type ActivityRecorder = {
  record(accountId: number, keyId: number, now: number): void
  /** At once when the day's stored count is in memory and no flush is under way (see shared/maybe-promise.ts). */
  callsToday(accountId: number, now: number): MaybePromise<number>
  lastUsed(keyId: number): number | undefined
  flush(): Promise<void>
  stop(): Promise<void>
}

const emptyBatch = (): ActivityBatch => ({ calls: new Map(), lastUsed: new Map() })

export function createActivityRecorder(store: ActivityStore, logger: Logger, flushEveryMs = 1000): ActivityRecorder {
  let pending = emptyBatch()
  let flushing: Promise<void> | null = null
  // Stored counts of (account, day) once read, kept current by each flush: reads cost no query.
  const stored = new Map<string, number>()

  const flush = async () => {
    if (flushing) await flushing
    if (pending.calls.size === 0 && pending.lastUsed.size === 0) return
    const batch = pending
    pending = emptyBatch()
    flushing = store
      .apply(batch)
      .then(() => {
        for (const [account, days] of batch.calls) {
          for (const [day, n] of days) {
            const key = `${account}:${day}`
            const known = stored.get(key)
            if (known !== undefined) stored.set(key, known + n)
          }
        }
      })
      .catch((error) => {
        // Put the batch back so counts are not lost to a transient failure (e.g. a busy database).
        for (const [account, days] of batch.calls) for (const [day, n] of days) add(account, day, n)
        for (const [key, at] of batch.lastUsed) pending.lastUsed.set(key, Math.max(at, pending.lastUsed.get(key) ?? 0))
        logger.warn('activity flush failed; will retry', { error: String(error) })
      })
      .finally(() => {
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

  const pendingCalls = (accountId: number, day: string) => pending.calls.get(accountId)?.get(day) ?? 0

  /** Stored plus pending calls of the day; only while no flush is under way. */
  const storedPlusPending = (accountId: number, now: number): MaybePromise<number> => {
    const day = dayOf(now)
    const key = `${accountId}:${day}`
    const count = stored.get(key)
    if (count !== undefined) return count + pendingCalls(accountId, day)
    return store.callsOn(accountId, day).then((read) => {
      // Remembered in the same turn as the read: no flush can run in between and be missed.
      if (stored.size >= 10_000) stored.clear()
      stored.set(key, read)
      return read + pendingCalls(accountId, day)
    })
  }

  const timer = setInterval(() => void flush(), flushEveryMs)
  timer.unref()

  return {
    record(accountId, keyId, now) {
      add(accountId, dayOf(now), 1)
      pending.lastUsed.set(keyId, now)
    },
    callsToday(accountId, now) {
      // A batch being written is in neither place: wait for it, then read both.
      if (flushing) return flushing.then(() => storedPlusPending(accountId, now))
      return storedPlusPending(accountId, now)
    },
    lastUsed: (keyId) => pending.lastUsed.get(keyId),
    flush,
    async stop() {
      clearInterval(timer)
      await flush()
    },
  }
}
