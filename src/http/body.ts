// JSON bodies: read only when declared as JSON (a form or text/plain post from another site is refused,
// not parsed), counted against a size limit as they arrive, strict UTF-8 (invalid bytes would all become
// U+FFFD and make different passwords equal), and an object at the top.
import { Elysia } from 'elysia'
import { ApiError } from '../shared/errors'
import { MAX_JSON_BODY_BYTES } from '../shared/limits'

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

const tooLarge = (limit: number) => new ApiError('payload_too_large', `the request body is over the limit of ${limit / 1024} KiB`)

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

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/** The parsed body; an empty body is `{}`, so a route whose fields are all optional needs none. */
export async function parseJsonBody(request: Request, limit = MAX_JSON_BODY_BYTES): Promise<Record<string, unknown>> {
  const bytes = await readLimited(request, limit)
  if (bytes.byteLength === 0) return {}
  const type = request.headers.get('content-type') ?? ''
  if (!JSON_TYPE.test(type)) {
    throw new ApiError(
      'unsupported_media_type',
      `the body must be JSON sent with Content-Type: application/json (got ${type === '' ? 'no Content-Type' : JSON.stringify(type.slice(0, 80))})`,
    )
  }
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

export function jsonBodies() {
  return new Elysia({ name: 'json-bodies' }).onParse({ as: 'global' }, ({ request }) => parseJsonBody(request))
}
