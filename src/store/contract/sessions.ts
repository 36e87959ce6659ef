// Browser sessions. Only the SHA-256 of a session's token is stored; the account operations that end
// them (password change, account deletion) are the account store's.
import type { AccountRecord } from './accounts'

export type SessionRecord = {
  id: number
  accountId: number
  createdAt: number
  lastSeenAt: number
  /** The absolute end; the idle end is `lastSeenAt` + the idle time. */
  expiresAt: number
}

export interface SessionStore {
  create(accountId: number, tokenHash: string, now: number, expiresAt: number): Promise<SessionRecord>
  /** The session with this token hash and its account; null when there is none (expiry is the caller's check). */
  findByHash(tokenHash: string): Promise<{ session: SessionRecord; account: AccountRecord } | null>
  /** Records a use of the session (the caller throttles how often). */
  touch(sessionId: number, now: number): Promise<void>
  /** Ends the session with this token hash; false when there was none. */
  end(tokenHash: string): Promise<boolean>
  /** Ends every session of the account, except `keepSessionId` when given; returns how many ended. */
  endAll(accountId: number, keepSessionId: number | null): Promise<number>
  /** Deletes sessions past their absolute end or idle for `idleMs`. */
  purgeExpired(now: number, idleMs: number): Promise<number>
}
