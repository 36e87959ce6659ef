// Browser sessions on PostgreSQL. Only the SHA-256 of a session's token is stored.
import type { SessionStore } from '../contract'
import { changed, type Db, first } from './connection'
import { ACCOUNT_JOIN_COLUMNS, SESSION_COLUMNS, toAccount, toSession } from '../shared/rows'

export function createPostgresSessionStore({ run }: Db): SessionStore {
  return {
    create: (accountId, tokenHash, now, expiresAt) =>
      run(async (s) =>
        toSession(
          (await first(
            s,
            `INSERT INTO sessions (account_id, token_hash, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $3, $4) RETURNING ${SESSION_COLUMNS}`,
            [accountId, tokenHash, now, expiresAt],
          ))!,
        ),
      ),
    findByHash: (tokenHash) =>
      run(async (s) => {
        const r = await first(
          s,
          `SELECT s.id, s.account_id, s.created_at, s.last_seen_at, s.expires_at, ${ACCOUNT_JOIN_COLUMNS}
           FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = $1`,
          [tokenHash],
        )
        return r ? { session: toSession(r), account: toAccount(r, 'a_') } : null
      }),
    touch: (sessionId, now) =>
      run(async (s) => void (await s.unsafe('UPDATE sessions SET last_seen_at = GREATEST(last_seen_at, $1) WHERE id = $2', [now, sessionId]))),
    end: (tokenHash) => run(async (s) => (await changed(s, 'DELETE FROM sessions WHERE token_hash = $1', [tokenHash])) > 0),
    endAll: (accountId, keepSessionId) =>
      run((s) =>
        keepSessionId === null
          ? changed(s, 'DELETE FROM sessions WHERE account_id = $1', [accountId])
          : changed(s, 'DELETE FROM sessions WHERE account_id = $1 AND id <> $2', [accountId, keepSessionId]),
      ),
    purgeExpired: (now, idleMs) => run((s) => changed(s, 'DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2', [now, now - idleMs])),
  }
}
