// HTTP routes of browser sessions: sign in, "am I signed in", sign out, sign out everywhere.
import { Elysia } from 'elysia'
import { type Body, routeDetail, SESSION_ROUTE_DETAIL } from '../../http/openapi-doc'
import type { OriginCheck } from '../../http/origin'
import type { rateLimits } from '../../http/rate-limit'
import { LOGIN_FAILURE_WINDOW_MINUTES, LOGIN_FAILURES_BEFORE_DELAY, RATE_LIMITS, SESSION_IDLE_HOURS, SESSION_MAX_DAYS } from '../../shared/limits'
import { Credentials } from '../accounts/model'
import type { authPlugin } from '../auth'
import { crossSiteRequest } from '../auth'
import { EndedSessionsResponse, SessionResponse, SignedInResponse } from './model'
import { invalidSession, type SessionsService } from './service'

const LIFETIME = `The session ends ${SESSION_IDLE_HOURS} hours after its last request, and ${SESSION_MAX_DAYS} days after sign-in at the latest.`

const SET_COOKIE_HEADER = {
  'Set-Cookie': {
    description: `The session cookie \`alttext_session\`: \`HttpOnly; SameSite=Lax; Path=/\`, \`Max-Age\` of ${SESSION_MAX_DAYS} days. When the service is reached over https (ALTTEXT_PUBLIC_URL) it is \`Secure\` and named \`__Host-alttext_session\`, so that no other host (a sibling sub-domain) can set it.`,
    schema: { type: 'string', example: 'alttext_session=q3E…; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax; Secure' },
  },
}

const CLEARED_COOKIE_HEADER = {
  'Set-Cookie': {
    description: 'Removes the session cookie (`Max-Age=0`).',
    schema: { type: 'string', example: 'alttext_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax' },
  },
}

export function sessionRoutes(deps: {
  sessions: SessionsService
  authentication: ReturnType<typeof authPlugin>
  limits: ReturnType<typeof rateLimits>
  origin: OriginCheck
  /** The rate-limit identity of the request's client (the per-account slow-down remembers it). */
  clientOf: (request: Request) => string
}) {
  const { sessions, origin, clientOf } = deps
  const { cookie: cookies } = sessions
  return new Elysia({ prefix: '/api' })
    .use(deps.limits)
    .use(deps.authentication)
    .post(
      '/session',
      async ({ body, request, set }): Promise<Body<typeof SignedInResponse>> => {
        // Signing a browser in from another site's page would put it in someone else's account.
        if (origin.isForeign(request)) throw crossSiteRequest()
        const { token, account, session } = await sessions.signIn(body.email, body.password, clientOf(request))
        set.headers['set-cookie'] = cookies.set(token)
        return {
          email: account.email,
          plan: account.plan,
          expires_at: new Date(session.expiresAt).toISOString(),
          email_verified: account.emailVerifiedAt !== null,
        }
      },
      {
        rateLimit: 'credentials',
        body: Credentials,
        parse: 'json',
        detail: routeDetail({
          summary: 'Sign in (browser session)',
          operationId: 'signIn',
          jsonBody: true,
          description: `Checks the email and password like \`POST /api/login\` and starts a browser session: the answer sets the \`alttext_session\` cookie. With it, the console (and any client that keeps cookies) may use the key, usage, history and alt-text endpoints without an API key. ${LIFETIME} A request from another origin is refused (403). Limited to ${RATE_LIMITS.credentials} requests per minute per address; after ${LOGIN_FAILURES_BEFORE_DELAY} failed password checks for one account within ${LOGIN_FAILURE_WINDOW_MINUTES} minutes, attempts for it from addresses that never signed in to it wait (429 with Retry-After).`,
          tags: ['Sessions'],
          success: [
            {
              status: 200,
              description: 'Signed in; the cookie is set.',
              schema: SignedInResponse,
              headers: SET_COOKIE_HEADER,
              example: { email: 'dev@example.com', plan: 'free', expires_at: '2026-11-30T09:45:33.393Z', email_verified: true },
            },
          ],
          errors: ['invalid_credentials', 'cross_site_request', 'account_disabled', 'database_busy'],
          exampleMessages: { rate_limited: 'too many failed sign-ins for this account; retry in 4 s' },
        }),
      },
    )
    .get(
      '/session',
      async ({ request }): Promise<Body<typeof SessionResponse>> => {
        // A page of another origin never learns whether this browser is signed in.
        const token = origin.isForeign(request) ? null : cookies.token(request.headers.get('cookie'))
        if (token === null) throw invalidSession('no session: sign in with POST /api/session')
        return sessions.describe(await sessions.authenticate(token))
      },
      {
        // Read by the cookie alone (never by key): documented with the cookie scheme.
        detail: {
          ...SESSION_ROUTE_DETAIL,
          ...routeDetail({
            summary: 'The current session',
            operationId: 'getSession',
            description: `Who is signed in with this browser's session cookie, and whether the account has confirmed its email address yet (\`email_verified\`). Answers 401 \`invalid_session\` without a cookie, or with one that is signed out or expired. ${LIFETIME}`,
            tags: ['Sessions'],
            success: [
              {
                status: 200,
                description: 'Signed in.',
                schema: SessionResponse,
                example: {
                  email: 'dev@example.com',
                  plan: 'free',
                  created_at: '2026-11-23T09:45:33.393Z',
                  expires_at: '2026-11-30T09:45:33.393Z',
                  email_verified: true,
                },
              },
            ],
            errors: ['invalid_session', 'account_disabled'],
          }),
        },
      },
    )
    .delete(
      '/session',
      async ({ request, set }) => {
        const token = cookies.token(request.headers.get('cookie'))
        if (token !== null) {
          if (!origin.isSameOrigin(request)) throw crossSiteRequest()
          await sessions.signOut(token)
        }
        set.headers['set-cookie'] = cookies.cleared
        set.status = 204
        return ''
      },
      {
        detail: routeDetail({
          summary: 'Sign out',
          operationId: 'signOut',
          description:
            "Ends this browser's session and removes its cookie; also answers 204 when the session had already ended. Must come from the service's own pages (`Origin`), or it is refused with 403.",
          tags: ['Sessions'],
          success: [{ status: 204, description: 'Signed out; the cookie is removed.', headers: CLEARED_COOKIE_HEADER }],
          errors: ['cross_site_request', 'database_busy'],
        }),
      },
    )
    .post(
      '/session/end-all',
      async ({ caller, set }): Promise<Body<typeof EndedSessionsResponse>> => {
        const ended = await sessions.endAll(caller.account.id)
        // A browser signed in with the session it just ended; a program with a key has no cookie of ours to drop.
        if (caller.session !== null) set.headers['set-cookie'] = cookies.cleared
        return { ended }
      },
      {
        auth: true,
        detail: routeDetail({
          summary: 'Sign out everywhere',
          operationId: 'endAllSessions',
          description:
            "Ends every session of the account, in every browser, this one included, and removes this browser's cookie. API keys keep working. Works with a session or an API key (a program can sign a lost laptop out).",
          tags: ['Sessions'],
          success: [{ status: 200, description: 'Every session ended.', schema: EndedSessionsResponse, headers: CLEARED_COOKIE_HEADER, example: { ended: 3 } }],
          errors: ['database_busy'],
        }),
      },
    )
}
