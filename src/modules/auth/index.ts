// `auth: true` on a route: the caller's X-API-Key, or else the session cookie, is checked before the body is
// validated (a stranger gets 401, never a hint about the body), after the request passed the route's rate
// limit (so key guessing is limited), and the caller is handed to the handler. A key, when sent, wins.
// `auth: 'session'`: only a signed-in session will do (the account settings); a key alone is 401.
// An account that has not followed its mailed link yet is refused (403) by both; `auth: 'unverified'` (key
// or session) lets it through, for the one thing it may do: ask for the mail again.
// A session request that changes something must come from this service's own pages (403 otherwise), and
// a request from another origin never uses the session.
import { Elysia } from 'elysia'
import { KEYED_ROUTE_DETAIL, SESSION_ROUTE_DETAIL, UNVERIFIED_ROUTE_DETAIL } from '../../http/openapi-doc'
import type { OriginCheck } from '../../http/origin'
import type { Admission } from '../../http/rate-limit'
import { ApiError } from '../../shared/errors'
import type { MaybePromise } from '../../shared/maybe-promise'
import type { SessionsService } from '../sessions/service'
import { type AuthService, type Caller, emailNotVerified, missingCredentials } from './service'

/** Key or session (`true`), a session only, or key or session of an account that may still be unverified. */
type AuthMode = true | 'session' | 'unverified'

const DETAIL = { true: KEYED_ROUTE_DETAIL, session: SESSION_ROUTE_DETAIL, unverified: UNVERIFIED_ROUTE_DETAIL }

const READ_ONLY = new Set(['GET', 'HEAD', 'OPTIONS'])

export const crossSiteRequest = () =>
  new ApiError('cross_site_request', "a request that changes something with the session cookie must come from this service's own pages (Origin)")

const sessionRequired = () => new ApiError('session_required', 'this needs a signed-in session (POST /api/session); an API key is not enough')

export function authPlugin(auth: AuthService, admit: Admission, sessions: SessionsService, origin: OriginCheck) {
  // The caller of each request under way, found by the request: hooks name only what they read.
  const callers = new WeakMap<Request, Caller>()

  const bySession = async (token: string, unverified: boolean): Promise<Caller> => {
    const { account, session } = await sessions.authenticate(token)
    if (account.emailVerifiedAt === null && !unverified) throw emailNotVerified()
    return { account, key: null, session }
  }

  const authenticate = (request: Request, mode: AuthMode): MaybePromise<Caller> => {
    const header = request.headers.get('x-api-key')
    const hasKey = header !== null && header.trim() !== ''
    const unverified = mode === 'unverified'
    if (hasKey && mode !== 'session') return auth.authenticate(header, { unverified })
    let token = sessions.cookie.token(request.headers.get('cookie'))
    if (token !== null && !READ_ONLY.has(request.method) && !origin.isSameOrigin(request)) throw crossSiteRequest()
    if (token !== null && origin.isForeign(request)) token = null
    if (token === null) throw mode === 'session' ? sessionRequired() : missingCredentials()
    return bySession(token, unverified)
  }

  return new Elysia({ name: 'auth' }).macro({
    auth: (mode: AuthMode) => ({
      detail: DETAIL[String(mode) as keyof typeof DETAIL],
      async transform({ request, route, set }) {
        const admitted = admit(request, route, set as { headers: Record<string, string | number> }, 'standard')
        if (admitted instanceof Promise) await admitted
        const caller = authenticate(request, mode)
        callers.set(request, caller instanceof Promise ? await caller : caller)
      },
      resolve({ request }) {
        const caller = callers.get(request)
        // Unreachable unless the transform above did not run; failing closed keeps a route from serving anyone.
        if (caller === undefined) throw new Error('auth macro: no authenticated caller')
        return { caller }
      },
    }),
  })
}
