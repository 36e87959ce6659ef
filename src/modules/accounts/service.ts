// Accounts: registration, sign-in (with the per-account slow-down), password reset and change, deletion. No HTTP here.
import type { CreditLedger } from '../../credits/service'
import type { Mailer } from './mailer'
import { ApiError } from '../../shared/errors'
import { randomToken, sha256Hex } from '../../shared/crypto'
import type { Logger } from '../../shared/logger'
import type { Store } from '../../store/types'
import { mintUniqueKey, SAVE_KEY_MESSAGE } from '../keys/material'
import { toKeySummary } from '../keys/service'
import { RESET_TOKEN_TTL_MINUTES } from '../../shared/limits'
import type { AccountRecord } from '../../store/types'
import { createLoginSlowDown } from './slow-down'

export const RESET_TOKEN_TTL_MS = RESET_TOKEN_TTL_MINUTES * 60_000
export const RESET_KEY_LABEL = 'issued at password reset'

export type AccountsDeps = {
  store: Store
  credits: CreditLedger
  mailer: Mailer
  logger: Logger
  publicUrl: string
  lastUsed: (keyId: number) => number | undefined
  clock: () => number
  /** Called when every key of an account was revoked, so cached keys stop working at once. */
  keysRevoked: (accountId: number) => void
  /** Called when an account was deleted, so nothing kept in memory outlives it. */
  accountRemoved: (accountId: number) => void
  passwords?: PasswordHasher
}

export type PasswordHasher = { hash(password: string): Promise<string>; verify(password: string, hash: string): Promise<boolean> }

export const argon2idHasher: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: 'argon2id' }),
  verify: (password, hash) => Bun.password.verify(password, hash),
}

const invalidToken = () => new ApiError('invalid_token', 'the reset token is unknown, used, replaced by a newer one, or expired')
const invalidCredentials = () => new ApiError('invalid_credentials', 'email or password is wrong')
const wrongPassword = () => new ApiError('invalid_credentials', 'the password is wrong')

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

export function createAccountsService(deps: AccountsDeps) {
  const { store, credits, mailer, logger, publicUrl } = deps
  const { clock } = deps
  const passwords = deps.passwords ?? argon2idHasher
  const hashPassword = (password: string) => passwords.hash(password)
  const verifyPassword = (password: string, hash: string) => passwords.verify(password, hash)
  // Unknown emails are checked against this hash so that they cost the same time as a wrong password.
  let decoyHash: Promise<string> | null = null
  const decoy = () => (decoyHash ??= hashPassword(`decoy-${randomToken(16)}`))
  // Made at start, so that even the first unknown-email login costs one verify and no extra hash.
  void decoy().catch(() => {
    decoyHash = null
  })
  const slowDown = createLoginSlowDown()

  /**
   * The one password check of sign-in (login and sessions): the account's slow-down first (429 without
   * checking), then the password; an unknown email costs the same as a wrong password.
   */
  const verifyCredentials = async (email: string, password: string, client: string, now = clock()): Promise<AccountRecord> => {
    const wait = slowDown.wait(email, client, now)
    if (wait > 0) {
      const seconds = Math.max(1, Math.ceil(wait / 1000))
      throw new ApiError('rate_limited', `too many failed sign-ins for this account; retry in ${seconds} s`, { 'Retry-After': String(seconds) })
    }
    const account = await store.accounts.findByEmail(email)
    const ok = await verifyPassword(password, account?.passwordHash ?? (await decoy()))
    if (!account || !ok) {
      slowDown.failed(email, now)
      throw invalidCredentials()
    }
    slowDown.succeeded(email, client)
    return account
  }

  return {
    async register(email: string, password: string, now = clock()) {
      if (await store.accounts.findByEmail(email)) throw new ApiError('email_taken', 'an account with this email already exists')
      const passwordHash = await hashPassword(password)
      const minted = await mintUniqueKey(store.keys.prefixExists, null, null)
      const created = await store.accounts.createWithKey(email, passwordHash, 'free', minted.record, now)
      if (!created) throw new ApiError('email_taken', 'an account with this email already exists')
      const balance = await credits.balance(created.account, now)
      logger.info('account registered', { account_id: created.account.id, key_prefix: created.key.prefix })
      return {
        api_key: minted.apiKey,
        prefix: created.key.prefix,
        email: created.account.email,
        plan: created.account.plan,
        credits_total: balance.total,
        credits_remaining: balance.remaining,
        message: SAVE_KEY_MESSAGE,
      }
    },

    verifyCredentials,

    async login(email: string, password: string, client: string, now = clock()) {
      const account = await verifyCredentials(email, password, client, now)
      const [balance, keys] = await Promise.all([credits.balance(account, now), store.keys.listActive(account.id, now)])
      return {
        email: account.email,
        plan: account.plan,
        credits: { total: balance.total, used: balance.used, remaining: balance.remaining },
        keys: keys.map((k) => toKeySummary(k, deps.lastUsed(k.id))),
      }
    },

    /** Issues a reset token when the account exists; the caller answers the same either way. */
    async forgotPassword(email: string, now = clock()) {
      const account = await store.accounts.findByEmail(email)
      const token = randomToken(32)
      // An unknown email makes the same durable write (a decoy row): the fsync is most of this request's
      // time, so without it the answer's time would tell whether the account exists.
      await store.resetTokens.issue(account?.id ?? null, sha256Hex(token), now + RESET_TOKEN_TTL_MS, now)
      if (!account) return
      const link = `${publicUrl}/reset-password?token=${token}`
      const text = [
        'Someone asked to reset the password of your alttext account.',
        '',
        `Open this link within 60 minutes to choose a new password:`,
        link,
        '',
        `Or send this token to POST ${publicUrl}/api/reset-password with your new password:`,
        token,
        '',
        'Resetting revokes all your API keys and issues one new key.',
        'If you did not ask for this, ignore this mail: nothing changes.',
      ].join('\n')
      // Sent after the answer (on the next turn, so even the mailer's synchronous part is not timed) so
      // that the response time does not tell whether the account exists.
      setImmediate(() => {
        mailer
          .send({ to: account.email, subject: 'Reset your alttext password', text }, { account_id: account.id, reset_link: link })
          .then(() => logger.info('reset mail sent', { account_id: account.id, via: mailer.kind }))
          .catch((error) => logger.error('reset mail failed', { account_id: account.id, error: String(error instanceof Error ? error.message : error) }))
      })
    },

    async resetPassword(token: string, newPassword: string, now = clock()) {
      const tokenHash = sha256Hex(token)
      // The token first: argon2id costs a core for tens of milliseconds, and must not be spent on a bogus
      // token. consume() checks the token again in its transaction, so a token used meanwhile still fails.
      if (!(await store.resetTokens.isUsable(tokenHash, now))) throw invalidToken()
      const passwordHash = await hashPassword(newPassword)
      const minted = await mintUniqueKey(store.keys.prefixExists, RESET_KEY_LABEL, null)
      const result = await store.resetTokens.consume(tokenHash, now, passwordHash, minted.record)
      if (!result) throw invalidToken()
      deps.keysRevoked(result.account.id)
      logger.info('password reset; all keys revoked and all sessions ended', { account_id: result.account.id, key_prefix: result.key.prefix })
      return {
        message: `Password changed. Every earlier API key was revoked; this new key replaces them. ${SAVE_KEY_MESSAGE}`,
        api_key: minted.apiKey,
        prefix: result.key.prefix,
      }
    },

    /** Needs the current password; ends every other session of the account (keeping `keepSessionId`); keys stay. */
    async changePassword(account: AccountRecord, keepSessionId: number, currentPassword: string, newPassword: string, now = clock()) {
      if (!(await verifyPassword(currentPassword, account.passwordHash))) throw wrongPassword()
      const passwordHash = await hashPassword(newPassword)
      const ended = await store.sessions.changePassword(account.id, passwordHash, keepSessionId, now)
      logger.info('password changed; other sessions ended', { account_id: account.id, sessions_ended: ended })
      return {
        message: `Password changed. ${plural(ended, 'other session was', 'other sessions were')} signed out; this session and your API keys still work.`,
      }
    },

    /** Needs the password; removes the account with its keys, sessions, credits, call counts and history. */
    async deleteAccount(account: AccountRecord, password: string) {
      if (!(await verifyPassword(password, account.passwordHash))) throw wrongPassword()
      const deleted = (await store.sessions.deleteAccount(account.id)) ?? { keys: 0, sessions: 0, history: 0 }
      deps.accountRemoved(account.id)
      slowDown.forget(account.email)
      logger.info('account deleted', { account_id: account.id, ...deleted })
      return {
        message: `Your account was deleted with ${plural(deleted.keys, 'API key', 'API keys')}, ${plural(deleted.sessions, 'session', 'sessions')} and ${plural(deleted.history, 'history entry', 'history entries')}, its usage and its credits.`,
        deleted,
      }
    },
  }
}

export type AccountsService = ReturnType<typeof createAccountsService>
