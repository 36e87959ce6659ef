// `auth: true` on a route: the caller's X-API-Key is checked before the body is validated (a stranger gets
// 401, never a hint about the body), after the request passed the route's rate limit (so key guessing is
// limited), and the caller is handed to the handler.
import { Elysia } from 'elysia'
import type { RequestMeta } from '../../http/context'
import { KEYED_ROUTE_DETAIL } from '../../http/openapi-doc'
import type { Admission } from '../../http/rate-limit'
import type { AuthService, Caller } from './service'

type AuthContext = { meta: RequestMeta & { caller?: Caller }; request: Request; route: string; set: { headers: Record<string, string | number> } }

export function authPlugin(auth: AuthService, admit: Admission) {
  return new Elysia({ name: 'auth' }).macro({
    auth: {
      detail: KEYED_ROUTE_DETAIL,
      async transform(context) {
        const c = context as unknown as AuthContext
        admit(c, 'standard')
        const caller = auth.authenticate(c.request.headers.get('x-api-key'))
        c.meta.caller = caller instanceof Promise ? await caller : caller
      },
      resolve(context) {
        const caller = (context as unknown as AuthContext).meta.caller
        // Unreachable unless the transform above did not run; failing closed keeps a route from serving anyone.
        if (caller === undefined) throw new Error('auth macro: no authenticated caller')
        return { caller }
      },
    },
  })
}
