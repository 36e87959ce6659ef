// `apiKey: true` on a route requires X-API-Key and puts the caller in the context.
import { Elysia } from 'elysia'
import type { AuthService } from './service'

export function authPlugin(auth: AuthService) {
  return new Elysia({ name: 'auth' }).macro({
    apiKey: {
      async resolve({ headers }) {
        return { caller: await auth.authenticate(headers['x-api-key']) }
      },
    },
  })
}
