// Browser sessions on PostgreSQL, and the account operations that end them (password change, account
// deletion). Only the SHA-256 of a session's token is stored.
import type { SessionStore } from '../types'
import { changed, type Db, first, num } from './connection'
import { ACCOUNT_JOIN_COLUMNS, SESSION_COLUMNS, toAccount, toSession } from './rows'

export function createPostgresSessionStore({ transaction, run }: Db): SessionStore {
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
    changePassword: (accountId, passwordHash, keepSessionId, now) =>
      transaction(async (tx) => {
        await tx.unsafe('UPDATE accounts SET password_hash = $1 WHERE id = $2', [passwordHash, accountId])
        await tx.unsafe('UPDATE reset_tokens SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [now, accountId])
        return changed(tx, 'DELETE FROM sessions WHERE account_id = $1 AND id <> $2', [accountId, keepSessionId])
      }),
    deleteAccount: (accountId) =>
      transaction(async (tx) => {
        // Locked first: nothing of the account can be added (a key, a session) between the counts and the delete.
        if (!(await first(tx, 'SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]))) return null
        const counts = (await first(
          tx,
          `SELECT (SELECT count(*) FROM api_keys WHERE account_id = $1) AS keys, (SELECT count(*) FROM sessions WHERE account_id = $1) AS sessions,
             (SELECT count(*) FROM generation_history WHERE account_id = $1) AS history`,
          [accountId],
        ))!
        // Keys, sessions, reset tokens, credits, call counts and history go with it (ON DELETE CASCADE).
        await tx.unsafe('DELETE FROM accounts WHERE id = $1', [accountId])
        return { keys: num(counts.keys), sessions: num(counts.sessions), history: num(counts.history) }
      }),
    purgeExpired: (now, idleMs) => run((s) => changed(s, 'DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2', [now, now - idleMs])),
  }
}
