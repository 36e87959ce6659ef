// Account changes of every replica (and of alttext admin), from PostgreSQL's NOTIFY: the triggers of the
// schema notify in the transaction that makes the change, so a change is heard once it is committed, and
// never when it is rolled back. This replica numbers what it hears in the order it hears it; there is no
// table to read, so a sequence number that a later commit could undercut (the trap of a shared counter)
// never arises.
//
// A notification sent while the listening connection was down is lost. Bun reconnects it and calls
// `onlisten` again; the feed then skips a number and adds a marker (account 0, which no account has), so
// the consumer sees a gap and forgets every account it keeps in memory: what it reads next is re-read
// from the database. The feed keeps the last 1000 changes: a consumer further behind sees a gap too.
import type { SQL } from 'bun'
import type { AccountChange, AccountChangeFeed, AccountChangeKind } from '../types'
import { ACCOUNT_CHANGES_CHANNEL } from './migrations'

const KEPT = 1000
const KINDS: ReadonlySet<string> = new Set<AccountChangeKind>(['account', 'deleted', 'keys', 'credits', 'charged'])

export type ListeningFeed = { feed: AccountChangeFeed; close(): Promise<void> }

export async function listenForAccountChanges(sql: SQL): Promise<ListeningFeed> {
  const kept: AccountChange[] = []
  let seq = 0
  let heard = false
  let listens = 0
  let onHeard: (() => void) | null = null

  const add = (accountId: number, change: AccountChangeKind) => {
    seq++
    kept.push({ seq, accountId, change })
    if (kept.length > KEPT) kept.splice(0, kept.length - KEPT)
    heard = true
    onHeard?.()
  }

  const subscription = await sql.listen(
    ACCOUNT_CHANGES_CHANNEL,
    (payload) => {
      const match = /^(\d+):(\w+)$/.exec(payload)
      if (match && KINDS.has(match[2]!)) add(Number(match[1]), match[2] as AccountChangeKind)
    },
    () => {
      // The first call is the subscription itself; every later one follows a reconnect.
      if (++listens === 1) return
      seq++
      add(0, 'account')
    },
  )

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
    },
    close: () => subscription.unlisten(),
  }
}
