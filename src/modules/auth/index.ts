// `apiKey: true` on a route requires X-API-Key and puts the caller in the context.
import { Elysia } from 'elysia'
import { requestMeta } from '../../http/request-meta'
import type { AuthService } from './service'

export function authPlugin(auth: AuthService) {
  return new Elysia({ name: 'auth' }).macro({
    apiKey: {
      // `request`, not `headers`: naming `headers` makes Elysia copy every request header into an object.
      async resolve({ request }) {
        // The outer server has usually authenticated already (before parsing); don't count the call twice.
        return { caller: requestMeta(request)?.caller ?? (await auth.authenticate(request.headers.get('x-api-key'))) }
      },
    },
  })
}
