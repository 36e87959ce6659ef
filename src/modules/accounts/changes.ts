// Changes another process made to accounts (alttext admin: a plan, a grant, a disabled or deleted account,
// a revoked key) reach the serving process within a poll: each poll asks SQLite whether any other
// connection committed (a counter, no table read), and only then reads the account change log that
// migration 11's triggers write, handing each changed account to `changed`. Requests pay nothing. Where the
// feed pushes (PostgreSQL's notifications), a change is read as soon as it is heard, not at the next poll:
// another replica's charge then shows in this one's counts at once.
//
// Where the feed can tell that it stopped hearing (PostgreSQL: a listening connection that died silently),
// each poll looks, and on each change of that state logs once; while it is not heard, `trusted()` is false
// and the caches of this process read from the database instead of memory, and on both transitions every
// account kept in memory is forgotten.
import type { Logger } from '../../shared/logger'
import type { AccountChangeFeed, AccountChangeKind } from '../../store/contract'

/** Well within the second an operator's change may take to be seen. */
const CHANGE_POLL_MS = 250

export type AccountChangeWatcher = {
  /** Whether what memory keeps of accounts may be used: false while the feed is not heard. */
  trusted(): boolean
  /** For /ready: absent where the feed cannot tell (SQLite). `ok` false: not heard, serving from the database. */
  check(): { ok: boolean; detail: string } | undefined
  close(): void
}

export function watchAccountChanges(deps: {
  feed: AccountChangeFeed
  logger: Logger
  /** Drop what memory keeps of this account. */
  changed(accountId: number, change: AccountChangeKind): void
  /** Changes were dropped from the log before this process read them: drop what memory keeps of every account. */
  lost(): void
}): AccountChangeWatcher {
  const { feed, logger } = deps
  // Changes before the start are already in what this process reads from the database. (SQLite answers
  // before the first request can be handled.)
  let seen = 0
  const started = feed.latest().then((latest) => {
    seen = latest
  })
  let polling: Promise<void> | null = null
  /** Another process committed, and its changes are not read yet (a failed read is tried again). */
  let unread = false

  const read = async () => {
    await started
    if (!unread && !(await feed.changedElsewhere())) return
    unread = true
    const changes = await feed.since(seen)
    unread = false
    if (changes.length === 0) return
    if (changes[0]!.seq !== seen + 1) {
      logger.warn('account changes were dropped before this process read them; forgetting every account kept in memory', { after: seen })
      deps.lost()
    }
    for (const { accountId, change } of changes) deps.changed(accountId, change)
    seen = changes.at(-1)!.seq
    // Charges come with every generation of every replica: too many to log, and nothing an operator did.
    const operated = changes.filter((c) => c.change !== 'charged').length
    if (operated > 0) logger.info('account changes from another process applied', { changes: operated })
  }

  /** A change was heard while a read ran, perhaps after it looked: read again when it ends. */
  let again = false
  const poll = (): Promise<void> => {
    if (polling) {
      again = true
      return polling
    }
    polling = read()
      .catch((error: unknown) => logger.warn('reading account changes failed; retried at the next poll', { error: String(error) }))
      .finally(() => {
        polling = null
        if (again) {
          again = false
          void poll()
        }
      })
    return polling
  }

  /** Whether the feed was heard at the last look; only a poll, after it has read the changes, sets it. */
  let hearing = true
  const look = () => {
    const state = feed.hearing?.()
    if (state === undefined || state.heard === hearing) return
    hearing = state.heard
    deps.lost()
    if (!hearing)
      logger.warn(
        'not hearing account changes from PostgreSQL (the listening connection is silent); reading every account from the database until they are heard again',
        {
          heard_up_to_ago_ms: state.heardUpToAgoMs,
          stale_ms: state.staleMs,
        },
      )
    else logger.info('account changes from PostgreSQL are heard again; caching accounts in memory again', {})
  }

  const timer = setInterval(() => void poll().then(look), CHANGE_POLL_MS)
  timer.unref()
  feed.onChange?.(() => void poll())
  return {
    trusted: () => hearing && (feed.hearing?.().heard ?? true),
    check() {
      const state = feed.hearing?.()
      if (state === undefined) return undefined
      if (hearing && state.heard) return { ok: true, detail: 'hearing account changes' }
      return {
        ok: false,
        detail: `not hearing account changes for over ${state.staleMs} ms: reconnecting; serving without cached keys and credits (correct, one more database read per request)`,
      }
    },
    close: () => clearInterval(timer),
  }
}
