// `apiKey: true` on a route requires X-API-Key and puts the caller in the context.
import { Elysia } from 'elysia'
import { requestMeta } from '../../http/request-meta'
import type { AuthService } from './service'

export function authPlugin(auth: AuthService) {
  return new Elysia({ name: 'auth' }).macro({
    apiKey: {
      async resolve({ headers, request }) {
        // The outer server has usually authenticated already (before parsing); don't count the call twice.
        return { caller: requestMeta(request)?.caller ?? (await auth.authenticate(headers['x-api-key'])) }
      },
    },
  })
}
