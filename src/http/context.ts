// Who is asking and since when: every request gets an id, its client address and a start time before
// routing, and one access-log line after its response, whatever route, error or 404 it met.
import { Elysia } from 'elysia'
import { clientAddress, type ProxyTrust } from './client-address'
import type { Logger } from '../shared/logger'

export type RequestMeta = {
  id: string
  /** The rate-limit identity: an IPv4 address, or the /64 of an IPv6 address. */
  client: string
  startedAt: number
  /** Set once the request passed its rate limit, so a second limit hook does not count it again. */
  admitted: boolean
}

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/

/** Requests between arrival and their log line: shutdown waits for them, so no line is lost. */
export function createInFlight() {
  let count = 0
  let waiters: Array<() => void> = []
  return {
    enter: () => {
      count++
    },
    leave: () => {
      count--
      if (count > 0) return
      for (const wake of waiters) wake()
      waiters = []
    },
    idle: () => (count === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  }
}
export type InFlight = ReturnType<typeof createInFlight>

export function requestContext(options: { proxyTrust: ProxyTrust; logger: Logger; inFlight: InFlight }) {
  const { proxyTrust, logger, inFlight } = options
  return new Elysia({ name: 'request-context' })
    .decorate('meta', null as unknown as RequestMeta)
    .onRequest((c) => {
      inFlight.enter()
      const incoming = c.request.headers.get('x-request-id')
      const id = incoming !== null && SANE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID()
      const peer = c.server?.requestIP(c.request)?.address
      c.meta = { id, client: clientAddress(peer, c.request.headers.get('x-forwarded-for'), proxyTrust), startedAt: performance.now(), admitted: false }
      c.set.headers['x-request-id'] = id
      // Every answer is what its Content-Type says: no browser may sniff a JSON error into a page.
      c.set.headers['x-content-type-options'] = 'nosniff'
    })
    .onAfterResponse({ as: 'global' }, (c) => {
      const meta = c.meta
      if (meta === null) return
      inFlight.leave()
      // A handler may answer with its own Response (readiness's 503); errors set the status they send.
      const response = (c as { responseValue?: unknown }).responseValue
      const status = response instanceof Response ? response.status : typeof c.set.status === 'number' ? c.set.status : 200
      logger.access({ method: c.request.method, path: c.path, status, durationMs: performance.now() - meta.startedAt, requestId: meta.id, client: meta.client })
    })
}
