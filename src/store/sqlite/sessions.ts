// Browser sessions and the account operations that end them (password change, account deletion), on
// bun:sqlite. Only the SHA-256 of a session's token is stored. Times are Unix ms.
import type { Database } from 'bun:sqlite'
import { ACCOUNT_JOIN_COLUMNS, type AccountJoinRow, joinedAccount } from './account-row'
import type { RemovedAccount, SessionRecord, SessionStore } from './types'

/** A write that waits (bounded) while another process holds the database lock; see sqlite.ts. */
type Write = <T>(attempt: () => T) => Promise<T>

type SessionRow = { id: number; account_id: number; created_at: number; last_seen_at: number; expires_at: number }
type SessionAccountRow = SessionRow & AccountJoinRow

const toSession = (r: SessionRow): SessionRecord => ({
  id: r.id,
  accountId: r.account_id,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
})

const SESSION_COLUMNS = 'id, account_id, created_at, last_seen_at, expires_at'

/** The per-account history table belongs to a later migration; until it exists there is nothing of it to count. */
const HISTORY_TABLE = 'generation_history'

export function createSessionStore(db: Database, write: Write): SessionStore {
  const q = {
    insert: db.query<SessionRow, [number, string, number, number, number]>(
      `INSERT INTO sessions (account_id, token_hash, created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING ${SESSION_COLUMNS}`,
    ),
    byHash: db.query<SessionAccountRow, [string]>(
      `SELECT s.id, s.account_id, s.created_at, s.last_seen_at, s.expires_at, ${ACCOUNT_JOIN_COLUMNS}
       FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ?`,
    ),
    touch: db.query<null, [number, number]>('UPDATE sessions SET last_seen_at = max(last_seen_at, ?) WHERE id = ?'),
    end: db.query<null, [string]>('DELETE FROM sessions WHERE token_hash = ?'),
    endAll: db.query<null, [number]>('DELETE FROM sessions WHERE account_id = ?'),
    endOthers: db.query<null, [number, number]>('DELETE FROM sessions WHERE account_id = ? AND id <> ?'),
    setPassword: db.query<null, [string, number]>('UPDATE accounts SET password_hash = ? WHERE id = ?'),
    invalidateTokens: db.query<null, [number, number]>('UPDATE reset_tokens SET used_at = ? WHERE account_id = ? AND used_at IS NULL'),
    countKeys: db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM api_keys WHERE account_id = ?'),
    countSessions: db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM sessions WHERE account_id = ?'),
    hasHistory: db.query<{ one: number }, [string]>("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?"),
    deleteAccount: db.query<null, [number]>('DELETE FROM accounts WHERE id = ?'),
    purge: db.query<null, [number, number]>('DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at <= ?'),
  }

  const changePassword = db.transaction((accountId: number, passwordHash: string, keepSessionId: number, now: number) => {
    q.setPassword.run(passwordHash, accountId)
    q.invalidateTokens.run(now, accountId)
    return q.endOthers.run(accountId, keepSessionId).changes
  })

  const deleteAccount = db.transaction((accountId: number): RemovedAccount | null => {
    const keys = q.countKeys.get(accountId)!.n
    const sessions = q.countSessions.get(accountId)!.n
    const history =
      q.hasHistory.get(HISTORY_TABLE) === null
        ? 0
        : db.query<{ n: number }, [number]>(`SELECT count(*) AS n FROM ${HISTORY_TABLE} WHERE account_id = ?`).get(accountId)!.n
    // Keys, sessions, reset tokens, credits, call counts and history go with it (ON DELETE CASCADE).
    if (q.deleteAccount.run(accountId).changes === 0) return null
    return { keys, sessions, history }
  })

  return {
    create: (accountId, tokenHash, now, expiresAt) => write(() => toSession(q.insert.get(accountId, tokenHash, now, now, expiresAt)!)),
    findByHash: async (tokenHash) => {
      const r = q.byHash.get(tokenHash)
      if (!r) return null
      return {
        session: toSession(r),
        account: joinedAccount(r.account_id, r),
      }
    },
    touch: (sessionId, now) => write(() => void q.touch.run(now, sessionId)),
    end: (tokenHash) => write(() => q.end.run(tokenHash).changes > 0),
    endAll: (accountId, keepSessionId) => write(() => (keepSessionId === null ? q.endAll.run(accountId) : q.endOthers.run(accountId, keepSessionId)).changes),
    changePassword: (accountId, passwordHash, keepSessionId, now) => write(() => changePassword.immediate(accountId, passwordHash, keepSessionId, now)),
    deleteAccount: (accountId) => write(() => deleteAccount.immediate(accountId)),
    purgeExpired: (now, idleMs) => write(() => q.purge.run(now, now - idleMs).changes),
  }
}
