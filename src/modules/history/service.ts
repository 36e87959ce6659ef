// What an account did with the alt-text endpoint: daily counts of its outcomes (generated, cached,
// failed) and its latest generations. The alt-text service records each outcome once; the recorder
// keeps them in memory and writes them in one transaction a second (and at shutdown: shared/write-behind.ts),
// so a request costs no write of its own. Reads and deletions of an account write its pending outcomes first, so
// they see everything recorded before them.
import { randomToken } from '../../shared/crypto'
import { ApiError } from '../../shared/errors'
import { HISTORY_MAX_ITEMS, USAGE_HISTORY_DEFAULT_DAYS, USAGE_HISTORY_MAX_DAYS } from '../../shared/limits'
import type { Logger } from '../../shared/logger'
import type { Scheduler } from '../../shared/scheduler'
import { createCalendar, iso } from '../../shared/time'
import { createWriteBehind } from '../../shared/write-behind'
import type { AccountBatch, AccountRecord, HistoryBatch, HistoryRecord, HistoryStore } from '../../store/contract'
import type { HistoryList, UsageHistory } from './model'

/** How one alt-text request ended: a fresh generation (charged), a cache hit (free), or a failure after validation. */
export type Outcome = 'generated' | 'cached' | 'failed'

/** What the history keeps of an answered request (never the image). `cached` follows from the outcome. */
export type HistoryEntry = Omit<HistoryRecord, 'id' | 'accountId' | 'createdAt' | 'cached'>

export type OutcomeEvent = {
  accountId: number
  /** Unix ms: when the answer was given (or the failure happened). */
  at: number
  outcome: Outcome
  /** For 'generated' and 'cached': the history entry. Ignored for 'failed'. */
  entry?: HistoryEntry
}

/** The one call the alt-text service makes, once per outcome. Synchronous and cheap: nothing is written here. */
export type HistoryRecorder = { record(event: OutcomeEvent): void }

export type HistoryService = HistoryRecorder & {
  /** Daily counts of the last `days` UTC days through today, oldest first, zeros included. */
  usageHistory(account: AccountRecord, days?: number): Promise<UsageHistory>
  list(account: AccountRecord): Promise<HistoryList>
  /** Deletes one entry of the account; 404 not_found when it has none with that id. */
  remove(account: AccountRecord, id: string): Promise<void>
  /** Deletes every entry of the account; the daily counts stay. */
  clear(account: AccountRecord): Promise<{ deleted: number }>
  /** Drops what a deleted account has pending (its id may be given to the next new account). */
  forget(accountId: number): void
  /** Writes what is pending now. */
  flush(): Promise<void>
  /** Stops the timer and writes what is left (the app's close). */
  stop(): Promise<void>
}

export type HistoryDeps = {
  store: HistoryStore
  logger: Logger
  clock: () => number
  scheduler: Scheduler
  flushEveryMs?: number
}

const DAY_MS = 86_400_000
/** Accounts with pending outcomes that flush at once, before the next tick: memory stays bounded under a flood. */
const FLUSH_AT_ACCOUNTS = 1000

const toItem = (r: HistoryRecord): HistoryList['items'][number] => ({
  id: r.id,
  created_at: iso(r.createdAt),
  source: r.source,
  image: { format: r.format, bytes: r.bytes, width: r.width, height: r.height },
  alt_text: r.altText,
  decorative: r.decorative,
  language: r.language,
  style: r.style,
  max_length: r.maxLength,
  cached: r.cached,
  character_count: r.characterCount,
})

const notFound = () => new ApiError('not_found', 'no history entry with that id in this account')

export function createHistoryService(deps: HistoryDeps): HistoryService {
  const { store, logger, clock } = deps
  const { dayOf } = createCalendar()

  const gathered = (accountId: number, at: number): AccountBatch => {
    const { pending } = buffer
    let batch = pending.get(accountId)
    if (!batch) {
      batch = { since: at, days: new Map(), records: [] }
      pending.set(accountId, batch)
    } else if (at < batch.since) batch.since = at
    return batch
  }

  /** Keeps the newest HISTORY_MAX_ITEMS records: more would be pruned on write anyway. */
  const cap = (records: HistoryRecord[]) => {
    if (records.length > HISTORY_MAX_ITEMS) records.splice(0, records.length - HISTORY_MAX_ITEMS)
  }

  const record = ({ accountId, at, outcome, entry }: OutcomeEvent) => {
    const batch = gathered(accountId, at)
    const day = dayOf(at)
    let counts = batch.days.get(day)
    if (!counts) {
      counts = { generations: 0, cached: 0, failed: 0 }
      batch.days.set(day, counts)
    }
    if (outcome === 'generated') counts.generations++
    else if (outcome === 'cached') counts.cached++
    else counts.failed++
    if (outcome !== 'failed' && entry) {
      batch.records.push({ ...entry, id: randomToken(9), accountId, createdAt: at, cached: outcome === 'cached' })
      cap(batch.records)
    }
    buffer.added()
  }

  /** A batch that could not be written goes back in front of what was gathered since. */
  const putBack = (batch: HistoryBatch, pending: HistoryBatch) => {
    for (const [accountId, old] of batch) {
      const now = pending.get(accountId)
      if (!now) {
        pending.set(accountId, old)
        continue
      }
      now.since = Math.min(now.since, old.since)
      for (const [day, c] of old.days) {
        const n = now.days.get(day)
        if (n) {
          n.generations += c.generations
          n.cached += c.cached
          n.failed += c.failed
        } else now.days.set(day, c)
      }
      now.records = [...old.records, ...now.records]
      cap(now.records)
    }
    return pending
  }

  // Accounts in the batch being written (buffer.writing): their reads wait for it.
  const buffer = createWriteBehind<HistoryBatch>({
    name: 'history',
    contents: 'the outcomes',
    logger,
    scheduler: deps.scheduler,
    flushEveryMs: deps.flushEveryMs ?? 1000,
    empty: () => new Map(),
    isEmpty: (batch) => batch.size === 0,
    write: (batch) => store.apply(batch, HISTORY_MAX_ITEMS, dayOf(clock() - (USAGE_HISTORY_MAX_DAYS - 1) * DAY_MS)),
    putBack,
    size: (batch) => batch.size,
    flushAtSize: FLUSH_AT_ACCOUNTS,
    unsaved: (batch) => ({ accounts: batch.size }),
  })
  const { flush } = buffer

  /** Writes the account's pending outcomes (with everyone else's) before it is read or changed. */
  const settle = async (accountId: number) => {
    if (buffer.pending.has(accountId) || buffer.writing?.has(accountId)) await flush()
  }

  return {
    record,
    async usageHistory(account, days = USAGE_HISTORY_DEFAULT_DAYS) {
      await settle(account.id)
      const today = dayOf(clock())
      const todayStart = Date.parse(`${today}T00:00:00Z`)
      const dates = Array.from({ length: days }, (_, i) => new Date(todayStart - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10))
      const stored = new Map((await store.days(account.id, dates[0]!, today)).map((d) => [d.day, d]))
      return {
        days: dates.map((date) => {
          const d = stored.get(date)
          return { date, generations: d?.generations ?? 0, cached: d?.cached ?? 0, failed: d?.failed ?? 0 }
        }),
      }
    },
    async list(account) {
      await settle(account.id)
      return { items: (await store.list(account.id, HISTORY_MAX_ITEMS)).map(toItem) }
    },
    async remove(account, id) {
      await settle(account.id)
      // Still in memory when the write failed: it must not come back with the next one.
      const batch = buffer.pending.get(account.id)
      const index = batch?.records.findIndex((r) => r.id === id) ?? -1
      if (batch && index >= 0) {
        batch.records.splice(index, 1)
        return
      }
      if (!(await store.remove(account.id, id))) throw notFound()
    },
    async clear(account) {
      await settle(account.id)
      const batch = buffer.pending.get(account.id)
      const unwritten = batch?.records.length ?? 0
      if (batch) batch.records = []
      return { deleted: unwritten + (await store.clear(account.id)) }
    },
    forget: (accountId) => void buffer.pending.delete(accountId),
    flush,
    stop: buffer.stop,
  }
}
