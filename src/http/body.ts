// JSON bodies: read only when declared as JSON (a form or text/plain post from another site is refused,
// not parsed), counted against a size limit as they arrive, strict UTF-8 (invalid bytes would all become
// U+FFFD and make different passwords equal), and an object at the top. A route that reads its own body
// (the image upload of POST /api/alt-text, after authentication) is named to jsonBodies() and left alone.
// Every body's shape (nesting, values) is checked on its bytes before JSON.parse builds anything.
import { Elysia } from 'elysia'
import { ApiError, ClientClosedError } from '../shared/errors'
import { ConnectionClosingError } from './errors'
import { MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH, MAX_JSON_VALUES } from '../shared/limits'
import { checkJsonShape, JsonShapeCheck, type JsonShapeLimits } from './json-shape'

export const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

const describeLimit = (limit: number) => (limit % (1024 * 1024) === 0 ? `${limit / (1024 * 1024)} MB` : `${limit / 1024} KiB`)

export const tooLarge = (limit: number, what = 'the request body') => new ApiError('payload_too_large', `${what} is over the limit of ${describeLimit(limit)}`)

/** Reads at most `limit` bytes of the body, whatever Content-Length claims. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  const header = request.headers.get('content-length')
  const declared = Number(header ?? 0)
  if (declared > limit) throw tooLarge(limit)
  // With a Content-Length the HTTP framing delivers exactly that many bytes; a chunked body is counted.
  if (header !== null && Number.isInteger(declared) && declared >= 0) return new Uint8Array(await request.arrayBuffer())
  if (!request.body) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

/**
 * The body's chunks as they arrive, refused with 413 as soon as they pass `limit` (or at once when
 * Content-Length says they will), and ended when `signal` aborts: with `timedOut()` when the signal's
 * reason is a timeout, else as a hang-up (ClientClosedError). Leaving the loop early stops reading.
 */
export async function* bodyChunks(request: Request, limit: number, signal: AbortSignal, timedOut: () => Error): AsyncGenerator<Uint8Array> {
  const header = request.headers.get('content-length')
  if (header !== null && Number(header) > limit) throw tooLarge(limit)
  if (!request.body) return
  const reader = request.body.getReader()
  const stopped = (): Error => (signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError' ? timedOut() : new ClientClosedError('receive'))
  const onAbort = () => void reader.cancel().catch(() => {})
  signal.addEventListener('abort', onAbort, { once: true })
  let size = 0
  let finished = false
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        if (signal.aborted) throw stopped()
        if (request.signal.aborted) throw new ClientClosedError('receive')
        throw error
      }
      if (signal.aborted) throw stopped()
      if (next.done) {
        finished = true
        // A client that hung up mid-body ends the stream early: that is not a malformed body.
        if (request.signal.aborted) throw new ClientClosedError('receive')
        return
      }
      size += next.value.byteLength
      if (size > limit) throw tooLarge(limit)
      yield next.value
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    if (!finished) await reader.cancel().catch(() => {})
  }
}

/**
 * The error of a body refused before it was read to its end, made to close the connection after the
 * answer: the client may still be sending the rest, which must not be read as its next request, and a
 * connection left waiting for it would hold up the server's graceful stop.
 */
export function closingConnection(error: unknown): unknown {
  return error instanceof ApiError ? new ConnectionClosingError(error) : error
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/** The shape every JSON body keeps to (a batch body may hold more values). */
const JSON_SHAPE: JsonShapeLimits = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_JSON_VALUES }

/**
 * A JSON object from its bytes, with the contract's 400s for anything else. Its shape is checked first,
 * unless `shape` is null: the caller checked it as the bytes arrived.
 */
export function parseJsonObject(bytes: Uint8Array, shape: JsonShapeLimits | null = JSON_SHAPE): Record<string, unknown> {
  if (shape !== null) checkJsonShape(bytes, shape)
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    throw new ApiError('invalid_request', 'body is not valid UTF-8')
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new ApiError('invalid_request', 'body is not valid JSON')
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ApiError('invalid_request', 'body must be a JSON object')
  return parsed as Record<string, unknown>
}

/** The 415 of a body that is not declared as what the route reads. */
export function unsupportedType(type: string, wanted = 'JSON sent with Content-Type: application/json'): ApiError {
  return new ApiError('unsupported_media_type', `the body must be ${wanted} (got ${type === '' ? 'no Content-Type' : JSON.stringify(type.slice(0, 80))})`)
}

/** The parsed body; an empty body is `{}`, so a route whose fields are all optional needs none. */
export async function parseJsonBody(request: Request, limit = MAX_JSON_BODY_BYTES): Promise<Record<string, unknown>> {
  const bytes = await readLimited(request, limit)
  if (bytes.byteLength === 0) return {}
  const type = request.headers.get('content-type') ?? ''
  if (!JSON_TYPE.test(type)) throw unsupportedType(type)
  return parseJsonObject(bytes)
}

export type StreamedJsonOptions = {
  limit: number
  shape: JsonShapeLimits
  /** Ends the reading (see bodyChunks): the request's end, or its time to arrive. */
  signal: AbortSignal
  timedOut: () => Error
}

/**
 * A JSON object read as it arrives: each chunk's shape is checked before the next is read, so a body
 * over `limit` or over `shape` is refused without reading (or keeping) the rest. An empty body is `{}`.
 */
export async function readJsonObject(request: Request, options: StreamedJsonOptions): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type') ?? ''
  const header = request.headers.get('content-length')
  const declared = header === null ? Number.NaN : Number(header)
  const shape = new JsonShapeCheck(options.shape)
  // With a Content-Length the HTTP framing delivers exactly that many bytes: one buffer, filled as they come.
  const whole = Number.isInteger(declared) && declared >= 0 && declared <= options.limit ? new Uint8Array(declared) : null
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for await (const chunk of bodyChunks(request, options.limit, options.signal, options.timedOut)) {
      if (chunk.byteLength === 0) continue
      if (size === 0 && !JSON_TYPE.test(type)) throw unsupportedType(type)
      shape.feed(chunk)
      if (whole === null) chunks.push(chunk)
      else if (size + chunk.byteLength <= whole.length) whole.set(chunk, size)
      else throw new ApiError('invalid_request', 'the body is longer than its Content-Length')
      size += chunk.byteLength
    }
  } catch (error) {
    throw closingConnection(error)
  }
  if (size === 0) return {}
  return parseJsonObject(whole === null ? Buffer.concat(chunks) : whole.subarray(0, size), null)
}

/** What the parser hands a route that reads its own body: nothing read yet. */
const UNREAD: Readonly<Record<string, never>> = Object.freeze({})

/**
 * Every route's body is JSON of at most MAX_JSON_BODY_BYTES, parsed before the route runs, except the
 * routes named in `ownBodies` ("POST /api/alt-text"): they read the request's stream themselves, with
 * their own limit, once the caller is authenticated.
 */
export function jsonBodies(ownBodies: Iterable<string> = []) {
  const own = new Set(ownBodies)
  return new Elysia({ name: 'json-bodies' }).onParse({ as: 'global' }, ({ request, route }) =>
    own.size > 0 && own.has(`${request.method} ${route}`) ? UNREAD : parseJsonBody(request),
  )
}
