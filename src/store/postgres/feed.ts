// Account changes of every replica (and of alttext admin), from PostgreSQL's NOTIFY: the triggers of the
// schema notify in the transaction that makes the change, so a change is heard once it is committed, and
// never when it is rolled back. This replica numbers what it hears in the order it hears it; there is no
// table to read, so a sequence number that a later commit could undercut (the trap of a shared counter)
// never arises.
//
// A notification sent while the listening connection was down is lost. Bun reconnects a connection that
// closes and calls `onlisten` again; the feed then skips a number and adds a marker (account 0, which no
// account has), so the consumer sees a gap and forgets every account it keeps in memory: what it reads next
// is re-read from the database. The feed keeps the last 1000 changes: a consumer further behind sees a gap too.
//
// A connection that dies silently (a network that drops packets, no reset) never closes, so nothing of the
// above happens. Hence the heartbeat: every `heartbeatMs` this replica notifies its own token on the same
// channel through the pool, and hears it back on the listening connection. PostgreSQL delivers the
// notifications of different transactions in commit order, so a heartbeat sent at t and heard means every
// change committed before t has been heard. While none sent within `staleMs` has come back, `hearing()`
// says so (the consumer stops trusting its memory), and the listening connection is replaced by a new one.
import { SQL } from 'bun'
import type { AccountChange, AccountChangeFeed, AccountChangeKind, FeedHearing } from '../contract'
import { ACCOUNT_CHANGES_CHANNEL } from './migrations'

const KEPT = 1000
const KINDS: ReadonlySet<string> = new Set<AccountChangeKind>(['account', 'deleted', 'keys', 'credits', 'charged'])
/** Heartbeats sent and not heard yet, at most: older ones are forgotten (they can only make the feed look staler). */
const BEATS_KEPT = 64

export type FeedTiming = {
  /** How often this replica sends itself a heartbeat. */
  heartbeatMs: number
  /** The feed is heard while a heartbeat sent at most this long ago has come back. */
  staleMs: number
  /** How long a new listening connection may take to subscribe before it is given up and tried again. */
  subscribeTimeoutMs: number
}

/** Heard within 1 s, as the contract asks of every change on every replica, with three heartbeats to spare. */
export const FEED_TIMING: FeedTiming = { heartbeatMs: 250, staleMs: 1000, subscribeTimeoutMs: 5000 }

export type ListeningFeed = { feed: AccountChangeFeed; close(): Promise<void> }

export type FeedOptions = {
  timing?: Partial<FeedTiming>
  /** Monotonic milliseconds (tests may move them). */
  now?: () => number
}

/**
 * Listens on a connection of its own, made by `openListener` (a one-connection SQL: it can be closed and
 * replaced without touching the pool), and sends the heartbeats through `pool`.
 */
export async function listenForAccountChanges(pool: SQL, openListener: () => SQL, options: FeedOptions = {}): Promise<ListeningFeed> {
  const timing = { ...FEED_TIMING, ...options.timing }
  const now = options.now ?? (() => performance.now())
  const token = crypto.randomUUID().replaceAll('-', '')
  const kept: AccountChange[] = []
  let seq = 0
  let heard = false
  let onHeard: (() => void) | null = null
  let closed = false

  const add = (accountId: number, change: AccountChangeKind) => {
    seq++
    kept.push({ seq, accountId, change })
    if (kept.length > KEPT) kept.splice(0, kept.length - KEPT)
    heard = true
    onHeard?.()
  }
  /** The consumer forgets every account: what was sent while nobody listened is lost. */
  const gap = () => {
    seq++
    add(0, 'account')
  }

  /** Heartbeats sent and not heard yet: number → when it was sent. */
  const beats = new Map<number, number>()
  let beat = 0
  /** When the newest heartbeat heard back was sent (on the current listening connection). */
  let heardUpTo = Number.NEGATIVE_INFINITY
  let beatHeard: (() => void) | null = null

  const onNotify = (payload: string) => {
    const heartbeat = /^hb:(\w+):(\d+)$/.exec(payload)
    if (heartbeat) {
      // Other replicas' heartbeats pass through here too; they say nothing about this connection's past.
      if (heartbeat[1] !== token) return
      const n = Number(heartbeat[2])
      const sentAt = beats.get(n)
      for (const k of beats.keys()) if (k <= n) beats.delete(k)
      if (sentAt !== undefined && sentAt > heardUpTo) heardUpTo = sentAt
      beatHeard?.()
      return
    }
    const match = /^(\d+):(\w+)$/.exec(payload)
    if (match && KINDS.has(match[2]!)) add(Number(match[1]), match[2] as AccountChangeKind)
  }

  type Listener = { sql: SQL; subscribedAt: number }
  let listener: Listener | null = null
  let subscribing: Promise<void> | null = null
  let lastAttempt = Number.NEGATIVE_INFINITY
  let firstSubscription = true

  /** The connection of a subscription under way, closed at once by close(). */
  let attempt: SQL | null = null
  /** A new listening connection; its subscription replaces the current one, with a gap unless it is the first ever. */
  const subscribe = async (): Promise<void> => {
    lastAttempt = now()
    const sql = openListener()
    attempt = sql
    let listens = 0
    let timer: Timer | undefined
    try {
      await Promise.race([
        sql.listen(ACCOUNT_CHANGES_CHANNEL, onNotify, () => {
          // The first call is the subscription itself; every later one follows a reconnect by Bun.
          if (++listens === 1 && firstSubscription) return
          gap()
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`LISTEN was not acknowledged within ${timing.subscribeTimeoutMs} ms`)), timing.subscribeTimeoutMs)
        }),
      ])
    } catch (error) {
      await sql.close({ timeout: 0 }).catch(() => {})
      throw error
    } finally {
      clearTimeout(timer)
      attempt = null
    }
    if (closed) return void (await sql.close({ timeout: 0 }).catch(() => {}))
    firstSubscription = false
    // Heartbeats heard on the old connection vouch for nothing after it died, nor do those sent before this
    // subscription: a change committed before it may have been missed.
    heardUpTo = Number.NEGATIVE_INFINITY
    beats.clear()
    listener = { sql, subscribedAt: now() }
  }

  /** Drops the listening connection that went silent (closing its socket, whatever the network does) and makes a new one. */
  const replace = () => {
    if (subscribing || closed) return
    const old = listener
    listener = null
    subscribing = (async () => {
      await old?.sql.close({ timeout: 0 }).catch(() => {})
      await subscribe()
    })()
      .catch(() => {})
      .finally(() => {
        subscribing = null
      })
  }

  let sending = false
  const sendBeat = () => {
    // One at a time: a pool that does not answer gets no queue of heartbeats.
    if (sending) return
    sending = true
    const n = ++beat
    beats.set(n, now())
    if (beats.size > BEATS_KEPT) beats.delete(beats.keys().next().value!)
    void pool
      .unsafe('SELECT pg_notify($1, $2)', [ACCOUNT_CHANGES_CHANNEL, `hb:${token}:${n}`])
      .catch(() => {})
      .finally(() => {
        sending = false
      })
  }

  const hearing = (): FeedHearing => {
    const at = now()
    const ago = heardUpTo === Number.NEGATIVE_INFINITY ? null : at - heardUpTo
    return { heard: listener !== null && ago !== null && ago <= timing.staleMs, heardUpToAgoMs: ago === null ? null : Math.round(ago), staleMs: timing.staleMs }
  }

  const tick = () => {
    sendBeat()
    const at = now()
    // A connection gets `staleMs` to prove itself, and a failed attempt is not repeated sooner.
    const settled = listener === null ? at - lastAttempt > timing.staleMs : at - listener.subscribedAt > timing.staleMs
    if (!hearing().heard && settled) replace()
  }

  await subscribe()
  // The first heartbeat heard back before the store is handed out, so a replica starts out heard (bounded:
  // a feed that does not answer starts stale, and the ticks take it from there).
  await new Promise<void>((resolve) => {
    const give = setTimeout(resolve, timing.subscribeTimeoutMs)
    beatHeard = () => {
      clearTimeout(give)
      resolve()
    }
    sendBeat()
  })
  beatHeard = null
  const timer = setInterval(tick, timing.heartbeatMs)
  timer.unref()

  return {
    feed: {
      latest: async () => seq,
      changedElsewhere: async () => {
        const was = heard
        heard = false
        return was
      },
      since: async (after) => kept.filter((c) => c.seq > after),
      onChange: (heard) => {
        onHeard = heard
      },
      hearing,
    },
    close: async () => {
      closed = true
      clearInterval(timer)
      await attempt?.close({ timeout: 0 }).catch(() => {})
      await subscribing
      await listener?.sql.close({ timeout: 0 }).catch(() => {})
      listener = null
    },
  }
}

/** The listening connection's own pool of one: the pool's URL and session parameters. */
export const listenerPool = (url: string, connection: Record<string, string | number>) => () => new SQL(url, { max: 1, connectionTimeout: 10, connection })
