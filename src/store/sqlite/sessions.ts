// Browser sessions on bun:sqlite. Only the SHA-256 of a session's token is stored. Times are Unix ms.
import type { Database } from 'bun:sqlite'
import type { Write } from './connection'
import type { SessionStore } from '../contract'
import { ACCOUNT_JOIN_COLUMNS, type Row, SESSION_COLUMNS, toAccount, toSession } from '../shared/rows'

export function createSessionStore(db: Database, write: Write): SessionStore {
  const q = {
    insert: db.query<Row, [number, string, number, number, number]>(
      `INSERT INTO sessions (account_id, token_hash, created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING ${SESSION_COLUMNS}`,
    ),
    byHash: db.query<Row, [string]>(
      `SELECT s.id, s.account_id, s.created_at, s.last_seen_at, s.expires_at, ${ACCOUNT_JOIN_COLUMNS}
       FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ?`,
    ),
    touch: db.query<null, [number, number]>('UPDATE sessions SET last_seen_at = max(last_seen_at, ?) WHERE id = ?'),
    end: db.query<null, [string]>('DELETE FROM sessions WHERE token_hash = ?'),
    endAll: db.query<null, [number]>('DELETE FROM sessions WHERE account_id = ?'),
    endOthers: db.query<null, [number, number]>('DELETE FROM sessions WHERE account_id = ? AND id <> ?'),
    purge: db.query<null, [number, number]>('DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at <= ?'),
  }

  return {
    create: (accountId, tokenHash, now, expiresAt) => write(() => toSession(q.insert.get(accountId, tokenHash, now, now, expiresAt)!)),
    findByHash: async (tokenHash) => {
      const r = q.byHash.get(tokenHash)
      if (!r) return null
      return { session: toSession(r), account: toAccount(r, 'a_') }
    },
    touch: (sessionId, now) => write(() => void q.touch.run(now, sessionId)),
    end: (tokenHash) => write(() => q.end.run(tokenHash).changes > 0),
    endAll: (accountId, keepSessionId) => write(() => (keepSessionId === null ? q.endAll.run(accountId) : q.endOthers.run(accountId, keepSessionId)).changes),
    purgeExpired: (now, idleMs) => write(() => q.purge.run(now, now - idleMs).changes),
  }
}
