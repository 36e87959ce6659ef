// One HTTPS request to a destination the caller has already resolved and checked: never follows a
// redirect, never looks a name up, never reuses a connection. Uses Bun's native fetch (its HTTP client
// runs TLS and parsing on its own thread), pinned to the checked address: the URL names the IP, the
// Host header and TLS server name carry the host name, and the certificate is checked against that
// name. Image GETs run in a fetch worker (fetch-worker.ts), or in the main thread where the worker is
// missing; a webhook's POST (sendOnce) goes out the same pinned way from the dispatcher's thread.
import { Blake3Hasher } from '@napi-rs/blake-hash'
import { VERSION } from '../version.ts'
import { deadlineError, invalidImageUrl } from './refusals.ts'

export type CheckedAddress = { address: string; family: 4 | 6 }

export type HopOutcome = { kind: 'redirect'; status: number; location: string } | { kind: 'body'; bytes: Uint8Array; contentHash: string }

export type HopLimits = {
  /** Full CA list for TLS, or undefined for the runtime's default trust store. */
  ca: string[] | undefined
  maxBytes: number
  /** Connecting, the TLS handshake and the response headers together must take no longer. */
  connectTimeoutMs: number
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

// Asks for the formats we accept, and for no content encoding, so the byte limit counts exactly the
// bytes that are stored (and fetch is told not to inflate anything a server compresses anyway).
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

/** Connection-level failures after which the next checked address (if any) is worth a try. */
const CONNECT_ERROR_CODES = new Set(['ECONNREFUSED', 'ConnectionRefused', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ConnectionClosed', 'ECONNRESET'])

function describeBytes(bytes: number): string {
  const mebibyte = 1024 * 1024
  return bytes % mebibyte === 0 ? `${bytes / mebibyte} MB` : `${bytes} bytes`
}

export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

/** What the client is told when a connection fails, whatever the cause: refused, reset, TLS or a timeout. */
const UNREACHABLE = 'the image host could not be reached'

/** The operator's side of a failed connection: which kind of failure, and the runtime's own code. */
function describeRequestError(error: { code?: string; message?: string }): string {
  const code = error.code ?? ''
  const message = error.message ?? ''
  if (TLS_ERROR_CODES.has(code) || /certificate|TLS|SSL/i.test(`${code} ${message}`)) return `TLS certificate not accepted (${code || message})`
  if (code === 'ECONNREFUSED' || code === 'ConnectionRefused') return 'connection refused'
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ConnectionClosed') return `connection closed before an answer (${code})`
  if (code.startsWith('HPE_') || /malformed|invalid http|Response/i.test(code)) return `malformed HTTP response (${code || message})`
  return `request failed (${code || message})`
}

/**
 * Hashing (and copying) received bytes runs on its thread's event loop. When many large images arrive
 * at once, one turn could hash tens of MB and stall everything else; so at most this many bytes are
 * handled per turn, across all downloads of the thread, and the rest waits for the next turn.
 */
const BYTES_PER_TURN = 2 * 1024 * 1024

/** One thread's per-turn hashing budget, shared by the downloads running in that thread. */
export class HashTurns {
  private bytesThisTurn = 0
  private turnReset = false
  private nextTurn: Promise<void> | null = null

  private waitForNextTurn(): Promise<void> {
    this.nextTurn ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.nextTurn = null
        resolve()
      }),
    )
    return this.nextTurn
  }

  /** Takes up to `wanted` bytes of this turn's budget (at least one), waiting for a later turn when it is spent. */
  private async take(wanted: number): Promise<number> {
    for (;;) {
      if (!this.turnReset) {
        this.turnReset = true
        setImmediate(() => {
          this.turnReset = false
          this.bytesThisTurn = 0
        })
      }
      const room = BYTES_PER_TURN - this.bytesThisTurn
      if (room > 0) {
        const granted = Math.min(room, wanted)
        this.bytesThisTurn += granted
        return granted
      }
      await this.waitForNextTurn()
    }
  }

  /** Feeds `bytes` to the hash within the per-turn budget. */
  async hash(hash: Blake3Hasher, bytes: Uint8Array): Promise<void> {
    for (let offset = 0; offset < bytes.length; ) {
      const granted = await this.take(bytes.length - offset)
      // A Buffer view of the same memory: the binding takes Buffers, and nothing is copied.
      hash.update(Buffer.from(bytes.buffer, bytes.byteOffset + offset, granted))
      offset += granted
    }
  }
}

/** BLAKE3 (256-bit): as collision-resistant as SHA-256 for a cache key, and several times faster. */
function newContentHash(): Blake3Hasher {
  return new Blake3Hasher()
}

/** The URL to connect to: the checked address in place of the host name, everything else kept. */
function pinnedUrl(url: URL, address: CheckedAddress): string {
  const host = address.family === 6 ? `[${address.address}]` : address.address
  return `https://${host}${url.port === '' ? '' : `:${url.port}`}${url.pathname}${url.search}`
}

class HopRefusal extends Error {
  constructor(
    readonly refusal: Error,
    readonly retryable: boolean,
  ) {
    super(refusal.message)
  }
}

/** The words refusals are made of: the image fetcher's, or another sender's (the webhook dispatcher's). */
export type HopWords = {
  refuse(message: string, detail?: string): Error
  /** What the caller is told when a connection fails, whatever the cause (the cause goes to `detail`). */
  unreachable: string
  /** The caller's deadline (its signal) ended the request. */
  deadline(): Error
}

const IMAGE_WORDS: HopWords = { refuse: invalidImageUrl, unreachable: UNREACHABLE, deadline: deadlineError }

/** What one request sends: the image fetcher's GET, or a POST with its own headers and body. */
export type Outgoing = { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }

const IMAGE_GET: Outgoing = { method: 'GET', headers: REQUEST_HEADERS }

/** How a request connects: the trust store, and how long connecting and the response headers may take. */
export type ConnectLimits = Pick<HopLimits, 'ca' | 'connectTimeoutMs'>

/** Tries the checked addresses in order until one connects; a refusal that is not about connecting ends it. */
async function eachAddress<T>(
  url: URL,
  addresses: CheckedAddress[],
  signal: AbortSignal,
  words: HopWords,
  attempt: (address: CheckedAddress) => Promise<T>,
): Promise<T> {
  if (signal.aborted) throw words.deadline()
  if (addresses.length === 0) throw words.refuse(words.unreachable, `${hostOf(url)} has no checked address`)
  for (let i = 0; ; i++) {
    try {
      return await attempt(addresses[i]!)
    } catch (error) {
      if (error instanceof HopRefusal) {
        if (error.retryable && i + 1 < addresses.length && !signal.aborted) continue
        throw error.refusal
      }
      throw error
    }
  }
}

/**
 * One request to an already checked destination; tries the checked addresses in order until one
 * connects. `turns` is the hashing budget of the thread it runs in.
 */
export function requestOnce(url: URL, addresses: CheckedAddress[], limits: HopLimits, signal: AbortSignal, turns: HashTurns): Promise<HopOutcome> {
  return eachAddress(url, addresses, signal, IMAGE_WORDS, (address) =>
    exchange(url, address, IMAGE_GET, limits, signal, IMAGE_WORDS, async (response, abortedError) => {
      const status = response.status
      if (REDIRECT_STATUSES.has(status)) {
        const location = response.headers.get('location')
        if (location === null || location === '') throw invalidImageUrl(`the image host answered ${status} without a Location header`)
        return { kind: 'redirect', status, location }
      }
      if (status < 200 || status > 299) throw invalidImageUrl(`the image host answered ${status}`)
      return await readBody(response, limits, turns, abortedError)
    }),
  )
}

/**
 * Sends `outgoing` (a webhook's POST) to an already checked destination, pinned the same way, and
 * answers the response's status, whatever it is: a redirect is not followed, the body is not read.
 */
export function sendOnce(
  url: URL,
  addresses: CheckedAddress[],
  outgoing: Outgoing,
  limits: ConnectLimits,
  signal: AbortSignal,
  words: HopWords,
): Promise<{ status: number }> {
  return eachAddress(url, addresses, signal, words, (address) =>
    exchange(url, address, outgoing, limits, signal, words, async (response) => ({ status: response.status })),
  )
}

/** One request to one checked address; `use` reads the response before the connection is torn down. */
async function exchange<T>(
  url: URL,
  address: CheckedAddress,
  outgoing: Outgoing,
  limits: ConnectLimits,
  signal: AbortSignal,
  words: HopWords,
  use: (response: Response, abortedError: () => Error | null) => Promise<T>,
): Promise<T> {
  const host = hostOf(url)
  const hostIsName = host !== address.address
  // Our own controller ends the connection whatever happens: the caller's deadline, our connect
  // timer, a refusal mid-body, or a redirect whose body is never read.
  const connection = new AbortController()
  let cause: 'deadline' | 'connect' | null = null
  const onAbort = (): void => {
    cause ??= 'deadline'
    connection.abort()
  }
  signal.addEventListener('abort', onAbort, { once: true })
  const connectTimer = setTimeout(() => {
    cause ??= 'connect'
    connection.abort()
  }, limits.connectTimeoutMs)
  const ended = (): Error =>
    cause === 'connect'
      ? words.refuse(words.unreachable, `${host} (${address.address}): no connection and answer within ${limits.connectTimeoutMs} ms`)
      : words.deadline()

  try {
    let response: Response
    try {
      response = await fetch(pinnedUrl(url, address), {
        method: outgoing.method,
        headers: { ...outgoing.headers, host: url.host },
        ...(outgoing.body === undefined ? {} : { body: outgoing.body }),
        redirect: 'manual',
        keepalive: false,
        decompress: false,
        proxy: false,
        signal: connection.signal,
        // The URL names the address; with a server name Bun checks the certificate against that
        // name instead (test/intake/happy.test.ts holds it to that). No checkServerIdentity callback:
        // it would cost a JS round trip and a certificate object per connection.
        tls: {
          ...(limits.ca === undefined ? {} : { ca: limits.ca }),
          ...(hostIsName ? { serverName: host } : {}),
        },
      })
    } catch (error) {
      if (cause !== null) throw ended()
      const code = (error as { code?: string }).code ?? ''
      const detail = `${host} (${address.address}): ${describeRequestError(error as Error)}`
      throw new HopRefusal(words.refuse(words.unreachable, detail), CONNECT_ERROR_CODES.has(code))
    }
    clearTimeout(connectTimer)
    return await use(response, () => (cause !== null ? ended() : null))
  } finally {
    clearTimeout(connectTimer)
    signal.removeEventListener('abort', onAbort)
    // Tears the connection down if the body was not read to the end (a refusal, a redirect, an abort).
    connection.abort()
  }
}

/** Reads the body into one buffer, counting and hashing bytes as they arrive. */
async function readBody(response: Response, limits: HopLimits, turns: HashTurns, abortedError: () => Error | null): Promise<HopOutcome> {
  const tooLarge = `the image is over the ${describeBytes(limits.maxBytes)} limit`
  const declaredLength = Number(response.headers.get('content-length') ?? Number.NaN)
  // The header may lie either way; it only lets an honest "too large" stop early.
  if (Number.isFinite(declaredLength) && declaredLength > limits.maxBytes) throw invalidImageUrl(tooLarge)
  if (Number.isFinite(declaredLength) && declaredLength > 0) {
    let bytes: Uint8Array
    try {
      bytes = await response.bytes()
    } catch {
      throw abortedError() ?? invalidImageUrl(`the image is truncated (the connection closed before ${declaredLength} bytes)`)
    }
    if (bytes.length < declaredLength) throw invalidImageUrl(`the image is truncated (the connection closed after ${bytes.length} bytes)`)
    const hash = newContentHash()
    await turns.hash(hash, bytes)
    return { kind: 'body', bytes, contentHash: hash.digest('hex') }
  }
  const reader = response.body?.getReader()
  // One buffer, sized from an honest-looking Content-Length and grown if it lied: no list of chunks
  // plus a copy at the end (twice the memory of a large image). The hash is updated as bytes arrive,
  // so a 10 MB image never blocks the thread for one long digest.
  let body = new Uint8Array(Number.isFinite(declaredLength) && declaredLength > 0 ? declaredLength : 64 * 1024)
  const hash = newContentHash()
  let received = 0
  const truncated = () => invalidImageUrl(`the image is truncated (the connection closed after ${received} bytes)`)
  if (reader !== undefined) {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>
      try {
        chunk = await reader.read()
      } catch {
        throw abortedError() ?? truncated()
      }
      if (chunk.done) break
      const bytes = chunk.value
      if (received + bytes.length > limits.maxBytes) throw invalidImageUrl(tooLarge)
      if (received + bytes.length > body.length) {
        const grown = new Uint8Array(Math.min(limits.maxBytes, Math.max(body.length * 2, received + bytes.length)))
        grown.set(body.subarray(0, received))
        body = grown
      }
      body.set(bytes, received)
      received += bytes.length
      await turns.hash(hash, bytes)
    }
  }
  const aborted = abortedError()
  if (aborted !== null) throw aborted
  if (Number.isFinite(declaredLength) && received < declaredLength) throw truncated()
  const bytes = received === body.length ? body : body.slice(0, received)
  return { kind: 'body', bytes, contentHash: hash.digest('hex') }
}
