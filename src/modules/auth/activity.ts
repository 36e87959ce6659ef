// Counts authenticated calls per account and day, and each key's last use, in memory; writes them in
// one transaction per second (and at shutdown: shared/write-behind.ts) so a busy key costs no write per
// request. A stored count once read is kept current by this process's own writes and read again after STORED_MAX_AGE_MS: other
// replicas add to it too, and nothing tells this one.
import { createCalendar } from '../../shared/time'
import type { MaybePromise } from '../../shared/maybe-promise'
import type { ActivityBatch, ActivityStore } from '../../store/contract'
import type { Logger } from '../../shared/logger'
import type { Scheduler } from '../../shared/scheduler'
import { createWriteBehind } from '../../shared/write-behind'

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

export type ActivityOptions = {
  scheduler: Scheduler
  flushEveryMs?: number
}

/** Pending accounts and keys that flush at once, before the next tick: memory stays bounded under a flood. */
const FLUSH_AT_ENTRIES = 10_000

export function createActivityRecorder(store: ActivityStore, logger: Logger, options: ActivityOptions): ActivityRecorder {
  const { dayOf } = createCalendar()
  // Stored counts of (account, day) once read, with when, kept current by each flush: reads cost no query.
  const stored = new Map<string, { count: number; readAt: number }>()

  // The batch being written (buffer.writing) is counted from its start until it is stored or put back into
  // the pending one, so a read need not wait for a write that may be retrying against a locked database.
  const buffer = createWriteBehind<ActivityBatch>({
    name: 'activity',
    contents: 'the counts',
    logger,
    scheduler: options.scheduler,
    flushEveryMs: options.flushEveryMs ?? 1000,
    empty: emptyBatch,
    isEmpty: (batch) => batch.calls.size === 0 && batch.lastUsed.size === 0,
    write: (batch) => store.apply(batch),
    written(batch) {
      for (const [account, days] of batch.calls) {
        for (const [day, n] of days) {
          const known = stored.get(`${account}:${day}`)
          if (known !== undefined) known.count += n
        }
      }
    },
    // Put back so counts are not lost to a transient failure (e.g. a busy database).
    putBack(failed, gathered) {
      for (const [account, days] of failed.calls) for (const [day, n] of days) add(gathered, account, day, n)
      for (const [key, at] of failed.lastUsed) gathered.lastUsed.set(key, Math.max(at, gathered.lastUsed.get(key) ?? 0))
      return gathered
    },
    size: (batch) => batch.calls.size + batch.lastUsed.size,
    flushAtSize: FLUSH_AT_ENTRIES,
    unsaved(batch) {
      let calls = 0
      for (const days of batch.calls.values()) for (const n of days.values()) calls += n
      return { calls, keys: batch.lastUsed.size }
    },
  })

  function add(batch: ActivityBatch, accountId: number, day: string, n: number) {
    let days = batch.calls.get(accountId)
    if (!days) {
      days = new Map()
      batch.calls.set(accountId, days)
    }
    days.set(day, (days.get(day) ?? 0) + n)
  }

  /** Calls in memory, not yet stored: being written plus pending. */
  const unstored = (accountId: number, day: string) => callsIn(buffer.writing, accountId, day) + callsIn(buffer.pending, accountId, day)

  const callsToday = (accountId: number, now: number): MaybePromise<number> => {
    const day = dayOf(now)
    const key = `${accountId}:${day}`
    const known = stored.get(key)
    if (known !== undefined && now - known.readAt < STORED_MAX_AGE_MS) return known.count + unstored(accountId, day)
    // Read again as for the first time: a flush meanwhile must not add to a count about to be replaced.
    stored.delete(key)
    // A read now may or may not see a batch of this day that is being written: wait for that batch.
    const flushing = buffer.flushing
    if (flushing && callsIn(buffer.writing, accountId, day) > 0) return flushing.then(() => callsToday(accountId, now))
    return store.callsOn(accountId, day).then((read) => {
      // Remembered in the same turn as the read: no flush can complete in between and be missed.
      if (stored.size >= 10_000) stored.clear()
      stored.set(key, { count: read, readAt: now })
      return read + unstored(accountId, day)
    })
  }

  return {
    record(accountId, keyId, now) {
      const { pending } = buffer
      add(pending, accountId, dayOf(now), 1)
      pending.lastUsed.set(keyId, now)
      buffer.added()
    },
    callsToday,
    lastUsed: (keyId) => buffer.pending.lastUsed.get(keyId) ?? buffer.writing?.lastUsed.get(keyId),
    forget(accountId) {
      buffer.pending.calls.delete(accountId)
      const prefix = `${accountId}:`
      for (const key of stored.keys()) if (key.startsWith(prefix)) stored.delete(key)
    },
    flush: buffer.flush,
    stop: buffer.stop,
  }
}
