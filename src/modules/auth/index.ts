// `apiKey: true` on a route puts the caller in the context. The outer server (http/server.ts) has
// already authenticated every route whose detail declares the key (`auth: true`), before the body was
// read; this hands its caller on. Synchronous on purpose: an async resolve costs every request a
// microtask turn (see shared/maybe-promise.ts).
import { Elysia } from 'elysia'
import { requestMeta } from '../../http/request-meta'

export function authPlugin() {
  return new Elysia({ name: 'auth' }).macro({
    apiKey: {
      // `request`, not `headers`: naming `headers` makes Elysia copy every request header into an object.
      resolve({ request }) {
        const caller = requestMeta(request)?.caller
        // Fails closed: a route marked apiKey whose detail lacks `auth: true` is never served without a key.
        if (caller === undefined) throw new Error('route marked apiKey was not authenticated by the server: declare auth: true in its detail')
        return { caller }
      },
    },
  })
}
