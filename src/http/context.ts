// Who is asking and since when: every request gets an id, its client address and a start time before
// routing, and one access-log line after its response, whatever route, error or 404 it met.
import { Elysia } from 'elysia'
import { clientIp, clientKey, type ProxyTrust } from './client-address'
import type { Logger } from '../shared/logger'
import type { ServedRequest } from '../modules/metrics/service'

export type RequestMeta = {
  id: string
  /** The client's address, canonical (see clientIp). */
  address: string
  /** The rate-limit identity: an IPv4 address, or the /64 of an IPv6 address. */
  client: string
  startedAt: number
  /** Set once the request passed its rate limit, so a second limit hook does not count it again. */
  admitted: boolean
}

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/
/** Socket addresses whose parse is remembered; past it the memory starts again (a flood of new peers). */
const PEERS_REMEMBERED = 4096

/**
 * The facts of each request under way, and how many there are: shutdown waits for the last log line.
 * Hooks name only the context fields they read (Elysia then skips parsing cookies, queries and the rest),
 * so the facts are found by the request rather than carried on the context.
 */
export function createRequestRegistry() {
  const metas = new WeakMap<Request, RequestMeta>()
  let count = 0
  let waiters: Array<() => void> = []
  return {
    begin(request: Request, meta: RequestMeta) {
      count++
      metas.set(request, meta)
    },
    meta: (request: Request): RequestMeta | undefined => metas.get(request),
    end(request: Request) {
      if (!metas.delete(request)) return
      count--
      if (count > 0) return
      for (const wake of waiters) wake()
      waiters = []
    },
    idle: () => (count === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  }
}
export type RequestRegistry = ReturnType<typeof createRequestRegistry>

export function requestContext(options: { proxyTrust: ProxyTrust; logger: Logger; requests: RequestRegistry; served?: (request: ServedRequest) => void }) {
  const { proxyTrust, logger, requests, served } = options
  // A peer's canonical address and rate-limit key, by the socket address as Bun gives it: every request of a
  // connection asks again, and parsing it costs more than the rest of a cheap request's duties.
  const peers = new Map<string, { address: string; client: string }>()
  const identify = (socketAddress: string | undefined, forwardedFor: string | null) => {
    if (forwardedFor !== null || socketAddress === undefined) {
      const address = clientIp(socketAddress, forwardedFor, proxyTrust)
      return { address, client: clientKey(address) }
    }
    let peer = peers.get(socketAddress)
    if (peer === undefined) {
      const address = clientIp(socketAddress, null, proxyTrust)
      peer = { address, client: clientKey(address) }
      if (peers.size >= PEERS_REMEMBERED) peers.clear()
      peers.set(socketAddress, peer)
    }
    return peer
  }
  return new Elysia({ name: 'request-context' })
    .onRequest(({ request, server, set }) => {
      const incoming = request.headers.get('x-request-id')
      const id = incoming !== null && SANE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID()
      const { address, client } = identify(server?.requestIP(request)?.address, request.headers.get('x-forwarded-for'))
      requests.begin(request, {
        id,
        address,
        client,
        startedAt: performance.now(),
        admitted: false,
      })
      set.headers['x-request-id'] = id
      // Every answer is what its Content-Type says: no browser may sniff a JSON error into a page.
      set.headers['x-content-type-options'] = 'nosniff'
    })
    .onAfterResponse({ as: 'global' }, ({ request, path, route, set, responseValue }) => {
      const meta = requests.meta(request)
      if (meta === undefined) return
      requests.end(request)
      // A handler may answer with its own Response (readiness's 503); errors set the status they send.
      const status = responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200
      const durationMs = performance.now() - meta.startedAt
      logger.access({ method: request.method, path, status, durationMs, requestId: meta.id, client: meta.client })
      served?.({ method: request.method, route, status, durationMs })
    })
}
