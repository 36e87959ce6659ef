// Accounts: registration, sign-in and password reset. No HTTP here.
import type { CreditLedger } from '../../credits/service'
import type { Mailer } from './mailer'
import { ApiError } from '../../shared/errors'
import { randomToken, sha256Hex } from '../../shared/crypto'
import type { Logger } from '../../shared/logger'
import type { Store } from '../../store/types'
import { mintUniqueKey, SAVE_KEY_MESSAGE } from '../keys/material'
import { toKeySummary } from '../keys/service'
import { RESET_TOKEN_TTL_MINUTES } from '../../shared/limits'

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
  passwords?: PasswordHasher
}

export type PasswordHasher = { hash(password: string): Promise<string>; verify(password: string, hash: string): Promise<boolean> }

export const argon2idHasher: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: 'argon2id' }),
  verify: (password, hash) => Bun.password.verify(password, hash),
}

const invalidToken = () => new ApiError('invalid_token', 'the reset token is unknown, used, replaced by a newer one, or expired')

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

    async login(email: string, password: string, now = clock()) {
      const account = await store.accounts.findByEmail(email)
      const ok = await verifyPassword(password, account?.passwordHash ?? (await decoy()))
      if (!account || !ok) throw new ApiError('invalid_credentials', 'email or password is wrong')
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
      logger.info('password reset; all keys revoked', { account_id: result.account.id, key_prefix: result.key.prefix })
      return {
        message: `Password changed. Every earlier API key was revoked; this new key replaces them. ${SAVE_KEY_MESSAGE}`,
        api_key: minted.apiKey,
        prefix: result.key.prefix,
      }
    },
  }
}

export type AccountsService = ReturnType<typeof createAccountsService>
