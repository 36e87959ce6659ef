// Accounts and the tokens mailed to them (password reset, email verification), and the account's own
// lifecycle: changing its password and deleting it.
import type { KeyRecord, NewKey } from './keys'

/** `free` unless an operator set another plan (alttext admin plans set). */
export const FREE_PLAN = 'free'

export type AccountRecord = {
  id: number
  email: string
  passwordHash: string
  /** The plan's name: `free`, or the name an operator gave a monthly allowance. */
  plan: string
  /** Credits per period of the account's plan; null: the free plan's (ALTTEXT_FREE_CREDITS). */
  monthlyCredits: number | null
  /** When an operator disabled the account; null while it is enabled. */
  disabledAt: number | null
  createdAt: number
  /** When the account proved its mailbox, or was made without that being asked; null while it waits for the mailed link. */
  emailVerifiedAt: number | null
}

/** What deleting an account removed, by kind. */
export type RemovedAccount = { keys: number; sessions: number; history: number }

export interface AccountStore {
  /**
   * Creates the account and its first key atomically; null when the email is taken. `emailVerifiedAt`:
   * `now` unless given (no proof asked); null makes an account that waits for its mailed link.
   */
  createWithKey(
    email: string,
    passwordHash: string,
    plan: string,
    key: NewKey,
    now: number,
    emailVerifiedAt?: number | null,
  ): Promise<{ account: AccountRecord; key: KeyRecord } | null>
  findByEmail(email: string): Promise<AccountRecord | null>
  findById(id: number): Promise<AccountRecord | null>
  /**
   * In one transaction: sets the password, ends every other session of the account (keeping
   * `keepSessionId`) and invalidates its unused reset tokens. Keys stay. Returns the sessions ended.
   */
  changePassword(accountId: number, passwordHash: string, keepSessionId: number, now: number): Promise<number>
  /** In one transaction: deletes the account with everything that belongs to it; null when it was already gone. */
  deleteAccount(accountId: number): Promise<RemovedAccount | null>
}

export interface ResetTokenStore {
  /**
   * Stores a new token hash and invalidates every older unused token of the account; true when it did.
   * With `cooldownMs`, a token of the account issued less than that before `now` stops it (checked in the
   * same transaction, so requests at once on any replica issue one). With a null account (an unknown
   * email), or in the cooldown, it rewrites a decoy row instead, in the same kind of durable transaction,
   * so all cost the same and the answer's time does not tell whether the account exists; false then.
   */
  issue(accountId: number | null, tokenHash: string, expiresAt: number, now: number, cooldownMs?: number): Promise<boolean>
  /** Is there an unused, unexpired token with this hash? A read: lets a bogus token be refused before any hashing. */
  isUsable(tokenHash: string, now: number): Promise<boolean>
  /**
   * In one transaction: checks the token is unused and unexpired, marks it used, sets the new password,
   * marks the account verified (the token came by mail), revokes every key of the account, ends every
   * session of it and inserts `key`. Null when the token is not valid.
   */
  consume(tokenHash: string, now: number, passwordHash: string, key: NewKey): Promise<{ account: AccountRecord; key: KeyRecord } | null>
}

export interface EmailVerificationStore {
  /** Stores a new token hash of the account and ends its older unused ones. */
  issue(accountId: number, tokenHash: string, expiresAt: number, now: number): Promise<void>
  /** When the account's newest token was issued; null when none was. */
  lastIssuedAt(accountId: number): Promise<number | null>
  /**
   * In one transaction: checks the token is unused and unexpired, marks it and every other token of the
   * account used, and marks the account verified. The account as it is then; null when the token is not valid.
   */
  consume(tokenHash: string, now: number): Promise<AccountRecord | null>
}
