// `auth: true` on a route: the caller's X-API-Key is checked before the body is validated (a stranger gets
// 401, never a hint about the body), after the request passed the route's rate limit (so key guessing is
// limited), and the caller is handed to the handler.
import { Elysia } from 'elysia'
import { KEYED_ROUTE_DETAIL } from '../../http/openapi-doc'
import type { Admission } from '../../http/rate-limit'
import type { AuthService, Caller } from './service'

export function authPlugin(auth: AuthService, admit: Admission) {
  // The caller of each request under way, found by the request: hooks name only what they read.
  const callers = new WeakMap<Request, Caller>()
  return new Elysia({ name: 'auth' }).macro({
    auth: {
      detail: KEYED_ROUTE_DETAIL,
      async transform({ request, route, set }) {
        admit(request, route, set as { headers: Record<string, string | number> }, 'standard')
        const caller = auth.authenticate(request.headers.get('x-api-key'))
        callers.set(request, caller instanceof Promise ? await caller : caller)
      },
      resolve({ request }) {
        const caller = callers.get(request)
        // Unreachable unless the transform above did not run; failing closed keeps a route from serving anyone.
        if (caller === undefined) throw new Error('auth macro: no authenticated caller')
        return { caller }
      },
    },
  })
}
