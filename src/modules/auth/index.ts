// `auth: true` on a route: the caller's X-API-Key, or else the session cookie, is checked before the body is
// validated (a stranger gets 401, never a hint about the body), after the request passed the route's rate
// limit (so key guessing is limited), and the caller is handed to the handler. A key, when sent, wins.
// `auth: 'session'`: only a signed-in session will do (the account settings); a key alone is 401.
// An account that has not followed its mailed link yet is refused (403) by both; `auth: 'unverified'` (key
// or session) lets it through, for the one thing it may do: ask for the mail again.
// A session request that changes something must come from this service's own pages (403 otherwise), and
// a request from another origin never uses the session.
// The caller acts in one organisation: a key in its own; a session in the one its X-Alttext-Org header names
// (the console's choice; absent: the personal one); a route under /api/orgs/:id in that one. One it is not a
// member of is 404 org_not_found, never a hint that it exists. `role: 'reviewer'` beside `auth` refuses a
// weaker role with 403 forbidden_for_role, here and nowhere else.
import { Elysia } from 'elysia'
import { KEYED_ROUTE_DETAIL, SESSION_ROUTE_DETAIL, UNVERIFIED_ROUTE_DETAIL } from '../../http/openapi-doc'
import type { OriginCheck } from '../../http/origin'
import type { Admission } from '../../http/rate-limit'
import { ApiError } from '../../shared/errors'
import type { MaybePromise } from '../../shared/maybe-promise'
import { type Membership, type OrgRecord, type Role, roleAllows } from '../../store/contract'
import { OrgId } from '../orgs/ids'
import type { SessionsService } from '../sessions/service'
import { type AuthService, type Caller, emailNotVerified, forbiddenForRole, missingCredentials, orgNotFound } from './service'

/** How the plugin finds the organisation a call acts in (the organisation store). */
export type OrgDirectory = {
  byId(id: number): Promise<OrgRecord | null>
  membership(accountId: number, publicId: string): Promise<Membership | null>
}

/** The header by which a browser session names the organisation it acts in. */
export const ORG_HEADER = 'x-alttext-org'

/** Routes whose `:id` names the organisation they act in. */
const ORG_ROUTE = /^\/api\/orgs\/:id(\/|$)/u

/** Key or session (`true`), a session only, or key or session of an account that may still be unverified. */
type AuthMode = true | 'session' | 'unverified'

const DETAIL = { true: KEYED_ROUTE_DETAIL, session: SESSION_ROUTE_DETAIL, unverified: UNVERIFIED_ROUTE_DETAIL }

const READ_ONLY = new Set(['GET', 'HEAD', 'OPTIONS'])

export const crossSiteRequest = () =>
  new ApiError('cross_site_request', "a request that changes something with the session cookie must come from this service's own pages (Origin)")

/** A route's `:id` that is no organisation id at all: a client's mistake, told once the caller is known. */
const malformedOrgId = () => new ApiError('invalid_request', 'id: must be an organisation id: org_ and 24 hex characters')

const sessionRequired = () => new ApiError('session_required', 'this needs a signed-in session (POST /api/session); an API key is not enough')

export function authPlugin(auth: AuthService, admit: Admission, sessions: SessionsService, origin: OriginCheck, orgs: OrgDirectory) {
  // The caller of each request under way, found by the request: hooks name only what they read.
  const callers = new WeakMap<Request, Caller>()

  /** A session acts where it names (a route's organisation, else its header), else in its personal organisation. */
  const bySession = async (token: string, unverified: boolean, named: string | null): Promise<Caller> => {
    const { account, session } = await sessions.authenticate(token)
    if (account.emailVerifiedAt === null && !unverified) throw emailNotVerified()
    if (named !== null) {
      const membership = await orgs.membership(account.id, named)
      if (!membership) throw orgNotFound()
      return { account, key: null, session, org: membership.org, role: membership.role }
    }
    const personal = await orgs.byId(account.id)
    // Unreachable while the account exists: its personal organisation is its own row.
    if (!personal) throw orgNotFound()
    return { account, key: null, session, org: personal, role: 'owner' }
  }

  const authenticate = (request: Request, mode: AuthMode, routeOrg: string | null, malformed: boolean): MaybePromise<Caller> => {
    const header = request.headers.get('x-api-key')
    const hasKey = header !== null && header.trim() !== ''
    const unverified = mode === 'unverified'
    if (hasKey && mode !== 'session') {
      const byKey = auth.authenticate(header, { unverified })
      // A key acts in its own organisation only: another's is as if it did not exist.
      const inRouteOrg = (caller: Caller) => {
        if (routeOrg !== null && !malformed && caller.org.publicId !== routeOrg) throw orgNotFound()
        return caller
      }
      return byKey instanceof Promise ? byKey.then(inRouteOrg) : inRouteOrg(byKey)
    }
    let token = sessions.cookie.token(request.headers.get('cookie'))
    if (token !== null && !READ_ONLY.has(request.method) && !origin.isSameOrigin(request)) throw crossSiteRequest()
    if (token !== null && origin.isForeign(request)) token = null
    if (token === null) throw mode === 'session' ? sessionRequired() : missingCredentials()
    // A route's malformed id names nothing: the session is checked in its personal organisation, then 400.
    const named = malformed ? '' : (routeOrg ?? request.headers.get(ORG_HEADER)?.trim() ?? '')
    return bySession(token, unverified, named === '' ? null : named)
  }

  const callerOf = (request: Request): Caller => {
    const caller = callers.get(request)
    // Unreachable unless the auth transform did not run; failing closed keeps a route from serving anyone.
    if (caller === undefined) throw new Error('auth macro: no authenticated caller')
    return caller
  }

  return new Elysia({ name: 'auth' }).macro({
    auth: (mode: AuthMode) => ({
      detail: DETAIL[String(mode) as keyof typeof DETAIL],
      async transform({ request, route, set, params }) {
        const admitted = admit(request, route, set as { headers: Record<string, string | number> }, 'standard')
        if (admitted instanceof Promise) await admitted
        const routeOrg = ORG_ROUTE.test(route) ? ((params as Record<string, string | undefined>).id ?? '') : null
        // Authenticated first (a stranger gets 401), then a malformed id is 400 rather than 404 for a member.
        const malformed = routeOrg !== null && !OrgId.safeParse(routeOrg).success
        const caller = authenticate(request, mode, routeOrg, malformed)
        callers.set(request, caller instanceof Promise ? await caller : caller)
        if (malformed) throw malformedOrgId()
      },
      resolve: ({ request }) => ({ caller: callerOf(request) }),
    }),
    // Runs after auth's transform (macros apply in the order a route names them: auth first), before the body is read.
    role: (needed: Role) => ({
      transform({ request }) {
        const { role } = callerOf(request)
        if (!roleAllows(role, needed)) throw forbiddenForRole(role, needed)
      },
    }),
  })
}
