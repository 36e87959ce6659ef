// Fetching a caller-supplied image URL without becoming a proxy into the operator's network:
// https only, every hop's host resolved once and every answer checked, the connection pinned
// to the checked addresses, redirects followed here (never by the client), bytes counted as
// they arrive, and the caller's deadline honoured at every await.
import { createHash } from 'node:crypto'
import { lookup as dnsLookup } from 'node:dns/promises'
import type { ClientRequest, IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { raceAbort } from '../shared/abort.ts'
import { ApiError } from '../shared/errors.ts'
import { VERSION } from '../version.ts'
import { blockedAddressKind, isAllowedByList, parseIp } from './address.ts'
import { deadlineError, invalidImageUrl } from './refusals.ts'
import type { FetchWorkerReply, FetchWorkerRequest } from './fetch-worker.ts'
import type { HostResolver } from './types.ts'
import { workerPath } from './worker-path.ts'

export const MAX_URL_LENGTH = 8192

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

// Asks for the formats we accept, and for no content encoding, so the byte limit counts
// exactly the bytes that are stored (a gzip bomb cannot inflate past it).
const REQUEST_HEADERS = {
  accept: 'image/png,image/jpeg,image/gif,image/webp;q=0.9,*/*;q=0.1',
  'accept-encoding': 'identity',
  'user-agent': `alttext/${VERSION} image fetcher`,
}

const TLS_ERROR_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
])

/**
 * Copying and hashing received bytes runs on the event loop. When many large images arrive at once, a
 * single turn could handle tens of MB and stall every other request; past this many bytes in one turn
 * the streams pause and resume on the next turn (TCP back-pressure holds the rest meanwhile).
 */
const BYTES_PER_TURN = 2 * 1024 * 1024
let bytesThisTurn = 0
let turnReset = false
const pausedResponses: IncomingMessage[] = []

function accountBytes(response: IncomingMessage, bytes: number): void {
  bytesThisTurn += bytes
  if (!turnReset) {
    turnReset = true
    setImmediate(() => {
      turnReset = false
      bytesThisTurn = 0
      for (const paused of pausedResponses.splice(0)) if (!paused.destroyed) paused.resume()
    })
  }
  if (bytesThisTurn > BYTES_PER_TURN) {
    response.pause()
    pausedResponses.push(response)
  }
}

export type FetchLimits = {
  allowPrivateHosts: string[]
  /** Full CA list for TLS, or undefined for the runtime's default trust store. */
  ca: string[] | undefined
  resolve: HostResolver
  maxBytes: number
  connectTimeoutMs: number
  maxRedirects: number
}

/** node:dns lookup of every address (v4 and v6), in the resolver's own order. */
export const systemResolver: HostResolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true })
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }))
}

export function describeBytes(bytes: number): string {
  const mebibyte = 1024 * 1024
  return bytes % mebibyte === 0 ? `${bytes / mebibyte} MB` : `${bytes} bytes`
}

/** Checks the rules a URL must meet before anything is resolved or sent. */
export function checkImageUrl(raw: string): URL {
  if (raw.length > MAX_URL_LENGTH) throw invalidImageUrl(`the image URL is longer than ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalidImageUrl('the image URL is not a valid absolute URL')
  }
  return checkParsedUrl(url, false)
}

function checkParsedUrl(url: URL, viaRedirect: boolean): URL {
  const scheme = url.protocol.replace(/:$/, '')
  if (url.protocol !== 'https:') {
    throw invalidImageUrl(
      viaRedirect
        ? `the image URL redirects to a ${scheme} URL; the image URL must use https on every hop`
        : `the image URL must use https (found ${scheme})`,
    )
  }
  const where = viaRedirect ? `the image URL redirects to a URL that` : 'the image URL'
  if (url.username !== '' || url.password !== '') throw invalidImageUrl(`${where} contains a user name or password, which is not allowed`)
  if (url.hostname === '') throw invalidImageUrl(`${where} has no host`)
  if (url.href.length > MAX_URL_LENGTH) throw invalidImageUrl(`${where} is longer than ${MAX_URL_LENGTH} characters`)
  return url
}

export type CheckedAddress = { address: string; family: 4 | 6 }

function withArticle(kind: string): string {
  return /^([aeio]|u(?!ni)|IETF|IPv)/i.test(kind) ? `an ${kind}` : `a ${kind}`
}

/** Resolves the URL's host once and refuses if any answer is a blocked address. */
async function resolveChecked(url: URL, limits: FetchLimits, signal: AbortSignal, viaRedirect: boolean): Promise<CheckedAddress[]> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  const literalFamily = isIP(host)
  let answers: { address: string; family: number }[]
  if (literalFamily !== 0) {
    answers = [{ address: host, family: literalFamily }]
  } else {
    try {
      answers = await raceAbort(limits.resolve(host), signal, deadlineError)
    } catch (error) {
      if (error instanceof ApiError) throw error
      throw invalidImageUrl(`the image host ${host} cannot be resolved`)
    }
    if (answers.length === 0) throw invalidImageUrl(`the image host ${host} cannot be resolved`)
  }

  const checked: CheckedAddress[] = []
  for (const answer of answers) {
    const parsed = parseIp(answer.address)
    if (parsed === null) throw invalidImageUrl(`the image host ${host} resolves to something that is not an IP address`)
    const kind = blockedAddressKind(answer.address)
    if (kind !== null && !isAllowedByList(host, answer.address, limits.allowPrivateHosts)) {
      const address = `${withArticle(kind)} address (${answer.address})`
      if (literalFamily !== 0) {
        throw invalidImageUrl(`${viaRedirect ? 'the image URL redirects to' : 'the image host is'} ${address}, which is blocked`)
      }
      throw invalidImageUrl(
        viaRedirect
          ? `the image URL redirects to ${host}, which resolves to ${address}; such addresses are blocked`
          : `the image host ${host} resolves to ${address}, which is blocked`,
      )
    }
    checked.push({ address: answer.address, family: parsed.family })
  }
  return checked
}

/** A lookup that answers only with the addresses already checked: no second DNS answer. */
function pinnedLookup(addresses: CheckedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0
    const usable = family === 0 ? addresses : addresses.filter((address) => address.family === family)
    const first = usable[0]
    if (first === undefined) {
      const error: NodeJS.ErrnoException = new Error(`no checked IPv${family} address for ${hostname}`)
      error.code = 'ENOTFOUND'
      callback(error, '', 0)
      return
    }
    if (options.all) callback(null, usable)
    else callback(null, first.address, first.family)
  }
}

export type HopOutcome = { kind: 'redirect'; status: number; location: string } | { kind: 'body'; bytes: Uint8Array; sha256: string }

/** What one hop needs; plain data, so it can be posted to the fetch worker. */
export type HopLimits = Pick<FetchLimits, 'ca' | 'maxBytes' | 'connectTimeoutMs'>

function describeRequestError(error: NodeJS.ErrnoException): string {
  const code = error.code ?? ''
  if (TLS_ERROR_CODES.has(code) || /certificate/i.test(error.message)) {
    return `the image host's TLS certificate was not accepted (${code || error.message})`
  }
  if (code === 'ECONNREFUSED') return 'the image host refused the connection'
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'the image host closed the connection before answering'
  if (code.startsWith('HPE_')) return `the image host sent a malformed HTTP response (${code})`
  return `the image could not be fetched (${code || error.message})`
}

/** One request to an already checked destination; never follows redirects. */
export function requestOnce(url: URL, addresses: CheckedAddress[], limits: HopLimits, signal: AbortSignal): Promise<HopOutcome> {
  return new Promise<HopOutcome>((resolve, reject) => {
    if (signal.aborted) {
      reject(deadlineError())
      return
    }
    let settled = false
    let connectTimer: ReturnType<typeof setTimeout> | undefined

    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
    const request: ClientRequest = httpsRequest({
      host,
      port: url.port === '' ? 443 : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { ...REQUEST_HEADERS, host: url.host },
      // A fresh connection per hop: a pooled socket could belong to an earlier answer.
      agent: false,
      lookup: pinnedLookup(addresses),
      ...(limits.ca === undefined ? {} : { ca: limits.ca }),
    })

    const settle = (outcome: { value: HopOutcome } | { error: unknown }): void => {
      if (settled) return
      settled = true
      clearTimeout(connectTimer)
      signal.removeEventListener('abort', onAbort)
      // Ends the socket whatever state it is in (a redirect's body is never read).
      request.destroy()
      if ('value' in outcome) resolve(outcome.value)
      else reject(outcome.error)
    }
    const fail = (message: string): void => settle({ error: invalidImageUrl(message) })
    const onAbort = (): void => settle({ error: deadlineError() })
    signal.addEventListener('abort', onAbort, { once: true })

    connectTimer = setTimeout(
      () => fail(`the image host did not complete a TLS connection within ${limits.connectTimeoutMs} ms`),
      limits.connectTimeoutMs,
    )
    request.on('socket', (socket) => {
      ;(socket as TLSSocket).once('secureConnect', () => clearTimeout(connectTimer))
    })
    // Stays attached after settling: errors from a destroyed request must not go unhandled.
    request.on('error', (error: NodeJS.ErrnoException) => fail(describeRequestError(error)))

    request.on('response', (response: IncomingMessage) => {
      clearTimeout(connectTimer)
      response.on('error', () => undefined)
      const status = response.statusCode ?? 0
      if (REDIRECT_STATUSES.has(status)) {
        const location = response.headers.location
        if (location === undefined || location === '') fail(`the image host answered ${status} without a Location header`)
        else settle({ value: { kind: 'redirect', status, location } })
        return
      }
      if (status < 200 || status > 299) {
        fail(`the image host answered ${status}`)
        return
      }
      const tooLarge = `the image is over the ${describeBytes(limits.maxBytes)} limit`
      const declaredLength = Number(response.headers['content-length'])
      // The header may lie either way; it only lets an honest "too large" stop early.
      if (Number.isFinite(declaredLength) && declaredLength > limits.maxBytes) {
        fail(tooLarge)
        return
      }
      // One buffer, sized from an honest-looking Content-Length and grown if it lied: no list of
      // chunks plus a copy at the end (twice the memory of a large image). The hash is updated as
      // bytes arrive, so a 10 MB image never blocks the event loop for one long digest.
      let body = new Uint8Array(Number.isFinite(declaredLength) && declaredLength > 0 ? declaredLength : 64 * 1024)
      const hash = createHash('sha256')
      let received = 0
      const cutShort = (): void => fail(`the image is truncated (the connection closed after ${received} bytes)`)
      response.on('data', (chunk: Uint8Array) => {
        if (settled) return
        if (received + chunk.length > limits.maxBytes) {
          received += chunk.length
          fail(tooLarge)
          return
        }
        if (received + chunk.length > body.length) {
          const grown = new Uint8Array(Math.min(limits.maxBytes, Math.max(body.length * 2, received + chunk.length)))
          grown.set(body.subarray(0, received))
          body = grown
        }
        body.set(chunk, received)
        received += chunk.length
        hash.update(chunk)
        accountBytes(response, chunk.length)
      })
      response.on('end', () => {
        if (!response.complete) {
          cutShort()
          return
        }
        const bytes = received === body.length ? body : body.slice(0, received)
        settle({ value: { kind: 'body', bytes, sha256: hash.digest('hex') } })
      })
      response.on('aborted', cutShort)
      response.on('close', cutShort)
    })
    request.end()
  })
}

// Hops run in a small pool of long-lived workers (see fetch-worker.ts); where the worker is missing
// from a build, in this thread as before.
const FETCH_WORKERS = 2
type PendingHop = { worker: Worker; resolve: (outcome: HopOutcome) => void; reject: (error: unknown) => void }
const pendingHops = new Map<number, PendingHop>()
let fetchWorkers: Worker[] | null = null
let nextWorker = 0
let nextHopId = 0

function startFetchWorker(path: string): Worker {
  const worker = new Worker(path)
  worker.unref()
  worker.onmessage = (event: MessageEvent<FetchWorkerReply>) => {
    const reply = event.data
    const pending = pendingHops.get(reply.id)
    if (!pending) return // aborted meanwhile
    pendingHops.delete(reply.id)
    if (pendingHops.size === 0) for (const w of fetchWorkers ?? []) w.unref()
    if (reply.ok) pending.resolve(reply.outcome)
    else pending.reject(reply.refusal ? invalidImageUrl(reply.message) : new Error(reply.message))
  }
  worker.onerror = (event: ErrorEvent) => {
    // A crashed worker fails its own hops and is replaced; the others carry on.
    for (const [id, pending] of pendingHops) {
      if (pending.worker !== worker) continue
      pendingHops.delete(id)
      pending.reject(new Error(`image fetch worker failed: ${event.message}`))
    }
    const index = fetchWorkers?.indexOf(worker) ?? -1
    worker.terminate()
    if (fetchWorkers && index >= 0) fetchWorkers[index] = startFetchWorker(path)
  }
  return worker
}

function pickFetchWorker(): Worker | null {
  if (fetchWorkers === null) {
    try {
      const path = workerPath('fetch-worker')
      fetchWorkers = Array.from({ length: FETCH_WORKERS }, () => startFetchWorker(path))
    } catch {
      fetchWorkers = []
    }
  }
  if (fetchWorkers.length === 0) return null
  return fetchWorkers[nextWorker++ % fetchWorkers.length]!
}

function hop(url: URL, addresses: CheckedAddress[], limits: HopLimits, signal: AbortSignal): Promise<HopOutcome> {
  const worker = pickFetchWorker()
  if (worker === null) return requestOnce(url, addresses, limits, signal)
  if (signal.aborted) return Promise.reject(deadlineError())
  const id = ++nextHopId
  return new Promise<HopOutcome>((resolve, reject) => {
    const onAbort = (): void => {
      if (!pendingHops.delete(id)) return
      if (pendingHops.size === 0) for (const w of fetchWorkers ?? []) w.unref()
      worker.postMessage({ type: 'abort', id } satisfies FetchWorkerRequest)
      reject(deadlineError())
    }
    signal.addEventListener('abort', onAbort, { once: true })
    const done = () => signal.removeEventListener('abort', onAbort)
    pendingHops.set(id, {
      worker,
      resolve: (outcome) => {
        done()
        resolve(outcome)
      },
      reject: (error) => {
        done()
        reject(error)
      },
    })
    // Keeps the process alive while a hop is under way; idle workers are unref'd again.
    worker.ref()
    worker.postMessage({ type: 'hop', id, url: url.href, addresses, limits } satisfies FetchWorkerRequest)
  })
}

/** Follows up to maxRedirects redirects, checking each hop like the first; returns the body. */
export async function fetchImageBytes(rawUrl: string, limits: FetchLimits, signal: AbortSignal): Promise<{ bytes: Uint8Array; sha256: string; finalUrl: string }> {
  if (signal.aborted) throw deadlineError()
  let url = checkImageUrl(rawUrl)
  for (let redirects = 0; ; ) {
    const addresses = await resolveChecked(url, limits, signal, redirects > 0)
    const outcome = await hop(url, addresses, { ca: limits.ca, maxBytes: limits.maxBytes, connectTimeoutMs: limits.connectTimeoutMs }, signal)
    if (outcome.kind === 'body') return { bytes: outcome.bytes, sha256: outcome.sha256, finalUrl: url.href }
    if (redirects >= limits.maxRedirects) throw invalidImageUrl(`too many redirects (over ${limits.maxRedirects})`)
    redirects++
    let next: URL
    try {
      next = new URL(outcome.location, url)
    } catch {
      throw invalidImageUrl(`the image host answered ${outcome.status} with an invalid Location header`)
    }
    url = checkParsedUrl(next, true)
  }
}
