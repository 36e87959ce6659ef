// Accounts: registration (by its policy, or by the operator), the proof of the mailbox a new account may
// owe (a mailed link), sign-in (with the per-account slow-down), password reset and change, deletion.
// No HTTP here.
import type { RegistrationPolicy } from '../../config'
import type { CreditLedger } from '../../credits/service'
import type { Mail, Mailer } from './mailer'
import { ApiError } from '../../shared/errors'
import { randomToken, sha256Hex } from '../../shared/crypto'
import type { Logger } from '../../shared/logger'
import { plural } from '../../shared/wording'
import type { Store } from '../../store/contract'
import { mintUniqueKey, SAVE_KEY_MESSAGE } from '../keys/material'
import { summariseKeys } from '../keys/service'
import { EMAIL_VERIFICATION_TTL_HOURS, RESET_MAIL_RESEND_SECONDS, RESET_TOKEN_TTL_MINUTES, VERIFICATION_RESEND_SECONDS } from '../../shared/limits'
import { type AccountRecord, FREE_PLAN } from '../../store/contract'
import { accountDisabled } from '../auth/service'
import { createLoginSlowDown, type LoginSlowDown } from './slow-down'
import { checkRegistration, registrationNotice } from './registration'

export const RESET_TOKEN_TTL_MS = RESET_TOKEN_TTL_MINUTES * 60_000
export const RESET_KEY_LABEL = 'issued at password reset'
const VERIFICATION_TTL_MS = EMAIL_VERIFICATION_TTL_HOURS * 3_600_000
const RESEND_AFTER_MS = VERIFICATION_RESEND_SECONDS * 1000
const RESET_MAIL_RESEND_MS = RESET_MAIL_RESEND_SECONDS * 1000

export type AccountsDeps = {
  store: Store
  credits: CreditLedger
  mailer: Mailer
  logger: Logger
  publicUrl: string
  /** Who may sign up with register; the operator's createByOperator is not bound by it. */
  registration: RegistrationPolicy
  /** Whether a registered account must follow a mailed link before its key or session does anything. */
  verifyEmail: boolean
  lastUsed: (keyId: number) => number | undefined
  clock: () => number
  /** Called when every key of an account was revoked, so cached keys stop working at once. */
  keysRevoked: (accountId: number) => void
  /** Called when an account was deleted, so nothing kept in memory outlives it. */
  accountRemoved: (accountId: number) => void
  /** Called when an account confirmed its email address, so its cached keys see it at once. */
  accountVerified: (accountId: number) => void
  passwords?: PasswordHasher
  /** The per-account slow-down: shared by every replica in Redis when configured; else this process's own. */
  slowDown?: LoginSlowDown
}

export type PasswordHasher = { hash(password: string): Promise<string>; verify(password: string, hash: string): Promise<boolean> }

export const argon2idHasher: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: 'argon2id' }),
  verify: (password, hash) => Bun.password.verify(password, hash),
}

const invalidToken = () => new ApiError('invalid_token', 'the reset token is unknown, used, replaced by a newer one, or expired')
const invalidVerification = () =>
  new ApiError(
    'invalid_token',
    `the verification link is unknown, used, replaced by a newer one, or older than ${EMAIL_VERIFICATION_TTL_HOURS} hours; ask for a new one`,
  )
const ALREADY_VERIFIED = 'Your email address is already confirmed.'
const invalidCredentials = () => new ApiError('invalid_credentials', 'email or password is wrong')
const emailTaken = () => new ApiError('email_taken', 'an account with this email already exists')
const wrongPassword = () => new ApiError('invalid_credentials', 'the password is wrong')

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
  const slowDown = deps.slowDown ?? createLoginSlowDown()

  /**
   * Every password check of an account (sign-in, password change, deletion) waits its turn in the account's
   * one slow-down: while it waits, 429 without checking.
   */
  const awaitTurn = async (email: string, client: string, now: number): Promise<void> => {
    const wait = await slowDown.wait(email, client, now)
    if (wait <= 0) return
    const seconds = Math.max(1, Math.ceil(wait / 1000))
    throw new ApiError('rate_limited', `too many failed sign-ins for this account; retry in ${seconds} s`, { retryAfterSeconds: seconds })
  }

  /** Counts a password check in the slow-down: a wrong password toward the wait, a right one resets it. Returns `ok`. */
  const counted = async (email: string, client: string, now: number, ok: boolean): Promise<boolean> => {
    if (ok) await slowDown.succeeded(email, client, now)
    else await slowDown.failed(email, now)
    return ok
  }

  /**
   * The one password check of sign-in (login and sessions): the account's slow-down first (429 without
   * checking), then the password; an unknown email costs the same as a wrong password.
   */
  const verifyCredentials = async (email: string, password: string, client: string, now = clock()): Promise<AccountRecord> => {
    await awaitTurn(email, client, now)
    const account = await store.accounts.findByEmail(email)
    const ok = await verifyPassword(password, account?.passwordHash ?? (await decoy()))
    if (!(await counted(email, client, now, ok && account !== null)) || account === null) throw invalidCredentials()
    // Only after the password: a stranger does not learn that the account exists, nor that it is disabled.
    if (account.disabledAt !== null) throw accountDisabled()
    return account
  }

  /** The password of a signed-in account (changing it, deleting the account), through the account's slow-down. */
  const checkOwnPassword = async (account: AccountRecord, password: string, client: string, now: number): Promise<void> => {
    await awaitTurn(account.email, client, now)
    if (!(await counted(account.email, client, now, await verifyPassword(password, account.passwordHash)))) throw wrongPassword()
  }

  /**
   * A new single-use reset token of the account (older ones stop working), as the link the mail or the log
   * carries; null when none was issued (an unknown account, or one mailed less than `cooldownMs` ago).
   */
  const issueResetLink = async (accountId: number | null, now: number, cooldownMs = 0) => {
    const token = randomToken(32)
    if (!(await store.resetTokens.issue(accountId, sha256Hex(token), now + RESET_TOKEN_TTL_MS, now, cooldownMs))) return null
    return { token, link: `${publicUrl}/reset-password?token=${token}` }
  }

  /**
   * Mails the account on the next turn, once the answer is on its way: the mailer's time (even its
   * synchronous part) is not the request's, and its failure is only logged, as `<what> mail failed`.
   */
  const mailAfterAnswer = (what: 'verification' | 'reset', account: AccountRecord, mail: Omit<Mail, 'to'>, logFields: Record<string, unknown>) => {
    setImmediate(() => {
      mailer
        .send({ to: account.email, ...mail }, { account_id: account.id, ...logFields })
        .then(() => logger.info(`${what} mail sent`, { account_id: account.id, via: mailer.kind }))
        .catch((error) => logger.error(`${what} mail failed`, { account_id: account.id, error: String(error instanceof Error ? error.message : error) }))
    })
  }

  /** Creates the account with its first key, on the free plan; `verified`: no proof of the mailbox is owed. */
  const create = async (email: string, passwordHash: string, now: number, verified = true) => {
    const minted = await mintUniqueKey(store.keys.prefixExists, null, null)
    const created = await store.accounts.createWithKey(email, passwordHash, FREE_PLAN, minted.record, now, verified ? now : null)
    if (!created) throw emailTaken()
    return { ...created, apiKey: minted.apiKey }
  }

  /**
   * A new verification link for the account (older ones stop working), mailed after the answer: a mail
   * relay that is slow or down must not hold up or fail a sign-up. The link opens a page that asks for a
   * click (a POST), so a mail scanner that fetches every link confirms nothing.
   */
  const mailVerification = async (account: AccountRecord, now: number) => {
    const token = randomToken(32)
    await store.verifications.issue(account.id, sha256Hex(token), now + VERIFICATION_TTL_MS, now)
    const link = `${publicUrl}/verify-email?token=${token}`
    const text = [
      `Someone signed up at the alttext service at ${publicUrl} with this email address.`,
      '',
      `If it was you, open this link within ${EMAIL_VERIFICATION_TTL_HOURS} hours and confirm:`,
      link,
      '',
      `Or send this token to POST ${publicUrl}/api/verify-email:`,
      token,
      '',
      "Until then the account's API key and its console can do nothing else.",
      'If it was not you, do not confirm: ignore this mail. To take the account over, reset its password at',
      `${publicUrl}/forgot-password (that revokes every key someone else holds).`,
    ].join('\n')
    mailAfterAnswer('verification', account, { subject: 'Confirm your email address for alttext', text }, { verification_link: link })
  }

  /** Deletes the account with everything of it, and drops what memory kept of it. */
  /** An organisation keeps an owner: its only owner's account cannot go before someone else is made one. */
  const refuseSoleOwner = async (accountId: number) => {
    for (const { org, role } of await store.orgs.memberships(accountId)) {
      if (org.personal || role !== 'owner') continue
      const owners = (await store.orgs.members(org.id)).filter((m) => m.role === 'owner')
      if (owners.length === 1)
        throw new ApiError(
          'last_owner',
          `this account is the only owner of the organisation "${org.name}" (${org.publicId}): make another member an owner, or delete the organisation, first`,
        )
    }
  }

  const removeAccount = async (account: AccountRecord) => {
    await refuseSoleOwner(account.id)
    const deleted = (await store.accounts.deleteAccount(account.id)) ?? { keys: 0, sessions: 0, history: 0 }
    deps.accountRemoved(account.id)
    await slowDown.forget(account.email)
    logger.info('account deleted', { account_id: account.id, ...deleted })
    return deleted
  }

  return {
    /** What the registration policy tells someone about to sign up. */
    registration: () => registrationNotice(deps.registration),

    async register(email: string, password: string, now = clock()) {
      // The policy first: a refused sign-up learns nothing about which emails have accounts.
      // An invitation is the way in where sign-up is closed (or open to other domains only).
      try {
        checkRegistration(deps.registration, email)
      } catch (refused) {
        if (!(await store.orgs.isInvited(email, now))) throw refused
      }
      if (await store.accounts.findByEmail(email)) throw emailTaken()
      const created = await create(email, await hashPassword(password), now, !deps.verifyEmail)
      const balance = await credits.balance(created.account, now)
      logger.info('account registered', { account_id: created.account.id, key_prefix: created.key.prefix, email_verified: !deps.verifyEmail })
      if (deps.verifyEmail) await mailVerification(created.account, now)
      return {
        api_key: created.apiKey,
        prefix: created.key.prefix,
        email: created.account.email,
        plan: created.account.plan,
        credits_total: balance.total,
        credits_remaining: balance.remaining,
        message: deps.verifyEmail
          ? `${SAVE_KEY_MESSAGE} Before it works, confirm your email address: a link is on its way to ${created.account.email} (valid ${EMAIL_VERIFICATION_TTL_HOURS} hours).`
          : SAVE_KEY_MESSAGE,
      }
    },

    /** Follows a mailed verification link: the account's key and sessions work from now on. */
    async verifyEmail(token: string, now = clock()) {
      const account = await store.verifications.consume(sha256Hex(token), now)
      if (!account) throw invalidVerification()
      deps.accountVerified(account.id)
      logger.info('email address confirmed', { account_id: account.id })
      return { message: 'Your email address is confirmed: your API key and the console work now.', email: account.email }
    },

    /**
     * Mails a new verification link (the older ones stop working), at most once a minute per account: the
     * address may be someone else's, who must not be flooded. `sent: false` when there is nothing to confirm.
     */
    async resendVerification(account: AccountRecord, now = clock()) {
      if (account.emailVerifiedAt !== null) return { sent: false as const, message: ALREADY_VERIFIED }
      const last = await store.verifications.lastIssuedAt(account.id)
      if (last !== null && now - last < RESEND_AFTER_MS) {
        const seconds = Math.max(1, Math.ceil((last + RESEND_AFTER_MS - now) / 1000))
        throw new ApiError('rate_limited', `a link was mailed less than ${VERIFICATION_RESEND_SECONDS} seconds ago; retry in ${seconds} s`, {
          retryAfterSeconds: seconds,
        })
      }
      await mailVerification(account, now)
      return {
        sent: true as const,
        message: `A new link is on its way to ${account.email}; it works for ${EMAIL_VERIFICATION_TTL_HOURS} hours, and earlier links no longer do.`,
      }
    },

    verifyCredentials,

    /**
     * An account made by the operator (alttext admin), whatever the registration policy: on the free plan,
     * with a password nobody knows and its first key. With `mailLink`, the person is mailed a link to
     * choose a password (which replaces that key with one only they see), before this returns; a mail
     * that fails leaves the account made, with `mailError` saying why.
     */
    async createByOperator(email: string, options: { mailLink: boolean }, now = clock()) {
      if (await store.accounts.findByEmail(email)) throw emailTaken()
      const created = await create(email, await hashPassword(randomToken(32)), now)
      logger.info('account created by the operator', { account_id: created.account.id, key_prefix: created.key.prefix })
      const made = { account: created.account, apiKey: created.apiKey, prefix: created.key.prefix, mailed: false, mailError: null as string | null }
      if (!options.mailLink) return made
      // Just made, so it has no token to cool down from: always issued.
      const { link } = (await issueResetLink(created.account.id, now))!
      try {
        await mailer.send({ to: email, ...welcomeMail(publicUrl, link) }, { account_id: created.account.id, reset_link: link })
        return { ...made, mailed: true }
      } catch (error) {
        return { ...made, mailError: error instanceof Error ? error.message : String(error) }
      }
    },

    removeAccount,

    async login(email: string, password: string, client: string, now = clock()) {
      const account = await verifyCredentials(email, password, client, now)
      const [balance, keys] = await Promise.all([credits.balance(account, now), store.keys.listActive(account.id, now)])
      return {
        email: account.email,
        plan: account.plan,
        credits: { total: balance.total, used: balance.used, remaining: balance.remaining },
        keys: await summariseKeys(store.orgs, account.id, keys, deps.lastUsed),
      }
    },

    /**
     * Issues a reset token when the account exists and was not mailed one in the last
     * RESET_MAIL_RESEND_SECONDS (per account, whichever address asks); the caller answers the same either way.
     */
    async forgotPassword(email: string, now = clock()) {
      const found = await store.accounts.findByEmail(email)
      // A disabled account is answered like an unknown one: no mail, and no token to use once enabled.
      const account = found?.disabledAt === null ? found : null
      // An unknown email, and an account in its cooldown, make the same durable write (a decoy row): the
      // fsync is most of this request's time, so without it the answer's time would tell them apart.
      const issued = await issueResetLink(account?.id ?? null, now, RESET_MAIL_RESEND_MS)
      if (!account) return
      if (!issued) {
        logger.info(`reset mail not sent: the account was mailed one less than ${RESET_MAIL_RESEND_SECONDS} s ago`, { account_id: account.id })
        return
      }
      const { token, link } = issued
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
      mailAfterAnswer('reset', account, { subject: 'Reset your alttext password', text }, { reset_link: link })
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

    /** Needs the current password (with the account's slow-down); ends every other session of the account (keeping `keepSessionId`); keys stay. */
    async changePassword(account: AccountRecord, keepSessionId: number, currentPassword: string, newPassword: string, client: string, now = clock()) {
      await checkOwnPassword(account, currentPassword, client, now)
      const passwordHash = await hashPassword(newPassword)
      const ended = await store.accounts.changePassword(account.id, passwordHash, keepSessionId, now)
      logger.info('password changed; other sessions ended', { account_id: account.id, sessions_ended: ended })
      return {
        message: `Password changed. ${plural(ended, 'other session was', 'other sessions were')} signed out; this session and your API keys still work.`,
      }
    },

    /** Needs the password (with the account's slow-down); removes the account with its keys, sessions, credits, call counts and history. */
    async deleteAccount(account: AccountRecord, password: string, client: string, now = clock()) {
      await checkOwnPassword(account, password, client, now)
      const deleted = await removeAccount(account)
      return {
        message: `Your account was deleted with ${plural(deleted.keys, 'API key', 'API keys')}, ${plural(deleted.sessions, 'session', 'sessions')} and ${plural(deleted.history, 'history entry', 'history entries')}, its usage and its credits.`,
        deleted,
      }
    },
  }
}

export type AccountsService = ReturnType<typeof createAccountsService>

/** The mail of an account the operator made: the person chooses a password with the link, and gets a key then. */
export function welcomeMail(publicUrl: string, link: string) {
  return {
    subject: 'Your alttext account',
    text: [
      `An account on the alttext service at ${publicUrl} was made for you.`,
      '',
      'Open this link within 60 minutes to choose your password:',
      link,
      '',
      'Choosing it shows your API key, once. Later, sign in to the console to make more keys.',
      `If the link has expired, ask for a new one at ${publicUrl}/forgot-password.`,
    ].join('\n'),
  }
}
