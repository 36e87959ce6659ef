// Browser sessions: sign-in with email and password sets a cookie holding an opaque token; only its SHA-256
// is stored. A session ends at sign-out, "sign out everywhere", a password reset or change (the others),
// account deletion, after SESSION_IDLE_HOURS without a request, or SESSION_MAX_DAYS after sign-in. No HTTP here.
import { ApiError } from '../../shared/errors'
import { randomToken, sha256Hex } from '../../shared/crypto'
import type { Logger } from '../../shared/logger'
import { SESSION_IDLE_HOURS, SESSION_MAX_DAYS, SESSION_TOUCH_EVERY_MS } from '../../shared/limits'
import { iso } from '../../shared/time'
import type { AccountRecord, SessionRecord, Store } from '../../store/contract'
import type { AccountsService } from '../accounts/service'
import { accountDisabled } from '../auth/service'

export const SESSION_COOKIE = 'alttext_session'
export const SESSION_IDLE_MS = SESSION_IDLE_HOURS * 3_600_000
export const SESSION_MAX_MS = SESSION_MAX_DAYS * 86_400_000

/** 32 random bytes, base64url without padding. */
const TOKEN_BYTES = 32
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

/** The session cookie of this service: its name, how it is read, and the Set-Cookie values that set and remove it. */
export type SessionCookie = {
  name: string
  /** The session token in a Cookie header, or null. A value that cannot be a token counts as one (it is refused later). */
  token(cookieHeader: string | null): string | null
  set(token: string): string
  cleared: string
}

/**
 * Over https the cookie is `__Host-alttext_session`: a browser takes a `__Host-` cookie only from this very
 * host (Secure, Path=/, no Domain), so a sibling sub-domain cannot plant a session of its choosing, and a
 * plain `alttext_session` is not read at all. Plain http keeps the plain name (browsers refuse `__Host-`
 * without Secure).
 */
export function sessionCookies(publicUrl: string): SessionCookie {
  const secure = publicUrl.startsWith('https:')
  const name = secure ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE
  const attributes = `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
  return {
    name,
    token(cookieHeader) {
      if (cookieHeader === null) return null
      for (const part of cookieHeader.split(';')) {
        const eq = part.indexOf('=')
        if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
      }
      return null
    },
    set: (token) => `${name}=${token}; Max-Age=${SESSION_MAX_MS / 1000}; ${attributes}`,
    cleared: `${name}=; Max-Age=0; ${attributes}`,
  }
}

export const invalidSession = (message = 'the session is unknown, signed out or expired; sign in again') => new ApiError('invalid_session', message)

export type SignedIn = { account: AccountRecord; session: SessionRecord }

export function createSessionsService(deps: { store: Store; accounts: AccountsService; logger: Logger; clock: () => number; publicUrl: string }) {
  const { store, accounts, logger, clock } = deps

  /** The live session of a token, or 401 invalid_session. Records the use at most once a minute. */
  const authenticate = async (token: string, now = clock()): Promise<SignedIn> => {
    if (!TOKEN_PATTERN.test(token)) throw invalidSession()
    const found = await store.sessions.findByHash(sha256Hex(token))
    if (found === null) throw invalidSession()
    const { session } = found
    if (session.expiresAt <= now || now - session.lastSeenAt >= SESSION_IDLE_MS) throw invalidSession()
    // Disabling ends the account's sessions; one started while that ran is refused here.
    if (found.account.disabledAt !== null) throw accountDisabled()
    if (now - session.lastSeenAt >= SESSION_TOUCH_EVERY_MS) {
      // Not awaited: a busy database must not fail the request that only wanted to be counted as a use.
      store.sessions.touch(session.id, now).catch((error: unknown) => logger.warn('session use not recorded', { error: String(error) }))
    }
    return found
  }

  return {
    /** The cookie, named for ALTTEXT_PUBLIC_URL's scheme. */
    cookie: sessionCookies(deps.publicUrl),

    authenticate,

    /** Checks the password (with the account's slow-down) and starts a session; the token is returned only here. */
    async signIn(email: string, password: string, client: string, now = clock()) {
      const account = await accounts.verifyCredentials(email, password, client, now)
      const token = randomToken(TOKEN_BYTES)
      const session = await store.sessions.create(account.id, sha256Hex(token), now, now + SESSION_MAX_MS)
      logger.info('session started', { account_id: account.id })
      return { token, account, session }
    },

    /** Ends the session of this token, if there is one. */
    async signOut(token: string) {
      if (!TOKEN_PATTERN.test(token)) return
      if (await store.sessions.end(sha256Hex(token))) logger.info('session ended')
    },

    /** Ends every session of the account; returns how many. */
    async endAll(accountId: number) {
      const ended = await store.sessions.endAll(accountId, null)
      logger.info('all sessions ended', { account_id: accountId, sessions_ended: ended })
      return ended
    },

    purgeExpired: (now = clock()) => store.sessions.purgeExpired(now, SESSION_IDLE_MS),

    describe: ({ account, session }: SignedIn) => ({
      email: account.email,
      plan: account.plan,
      created_at: iso(session.createdAt),
      expires_at: iso(session.expiresAt),
      email_verified: account.emailVerifiedAt !== null,
    }),
  }
}

export type SessionsService = ReturnType<typeof createSessionsService>
