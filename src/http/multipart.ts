// A streaming reader of multipart/form-data (RFC 7578) bodies: parts are handed over as their bytes
// arrive, never collected, so a file part can go straight to where it is kept and a body over a limit
// stops being read at once. Bun's request.formData() would buffer the whole body first (and then copy
// the file again); this reads the request's stream chunk by chunk, finding delimiters with the native
// Buffer.indexOf.
import { ApiError } from '../shared/errors'

/** What the reader knows of a part when its headers have arrived. */
export type PartInfo = { name: string; filename: string | null; contentType: string | null }

/** Receives a part's data. `end()` is called once its last byte has been given. */
export type PartSink = { data(chunk: Uint8Array): void; end(): void }

export type MultipartLimits = {
  /** Headers of one part, in bytes. */
  maxHeaderBytes: number
  /** Parts in the body. */
  maxParts: number
}

const invalid = (message: string) => new ApiError('invalid_request', `multipart body: ${message}`)

/** The boundary of a multipart/form-data Content-Type; throws 400 invalid_request when it has none. */
export function multipartBoundary(contentType: string): string {
  const match = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.){1,70})"|([^\s;"]{1,70}))/i.exec(contentType)
  const boundary = match?.[1]?.replace(/\\(.)/g, '$1') ?? match?.[2]
  if (!boundary) throw invalid('the Content-Type has no boundary parameter')
  return boundary
}

/** The value of `param` in a Content-Disposition header (quoted or a token), or null. */
function dispositionParam(header: string, param: string): string | null {
  const pattern = new RegExp(`;\\s*${param}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s;"]+))`, 'i')
  const match = pattern.exec(header)
  if (!match) return null
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : (match[2] ?? null)
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

function parsePartHeaders(raw: Uint8Array): PartInfo {
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    throw invalid('part headers are not valid UTF-8')
  }
  let disposition: string | null = null
  let contentType: string | null = null
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (name === 'content-disposition') disposition = value
    else if (name === 'content-type') contentType = value
  }
  if (disposition === null || !/^form-data\s*(;|$)/i.test(disposition)) throw invalid('a part has no Content-Disposition: form-data header')
  const name = dispositionParam(disposition, 'name')
  if (name === null) throw invalid('a part has no name')
  return { name, filename: dispositionParam(disposition, 'filename'), contentType }
}

type State = 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'done'

/**
 * Reads `chunks` (the request body) as multipart/form-data with `boundary`, calling `onPart` for each
 * part as its headers arrive; the returned sink gets the part's data. Throws 400 invalid_request for
 * a malformed or unfinished body, and whatever `onPart` or a sink throws (the caller stops reading
 * then, which is how a limit stops an upload at once).
 */
export async function readMultipart(
  chunks: AsyncIterable<Uint8Array>,
  boundary: string,
  limits: MultipartLimits,
  onPart: (part: PartInfo) => PartSink,
): Promise<void> {
  // Each delimiter is CRLF "--" boundary; the first may open the body without its CRLF, so the stream
  // is read as if it began with one.
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  const headerEnd = Buffer.from('\r\n\r\n')
  let pending: Buffer = Buffer.from('\r\n')
  let state = 'preamble' as State
  let sink: PartSink | null = null
  let parts = 0

  /** Advances through `pending` as far as it allows; returns when more bytes are needed. */
  const advance = (): void => {
    for (;;) {
      if (state === 'preamble' || state === 'body') {
        const at = pending.indexOf(delimiter)
        if (at === -1) {
          // Keep what could be the start of a delimiter cut by the chunk's end; pass on the rest.
          const keep = Math.min(pending.length, delimiter.length - 1)
          const safe = pending.length - keep
          if (state === 'body' && safe > 0) sink!.data(pending.subarray(0, safe))
          pending = pending.subarray(safe)
          return
        }
        if (state === 'body') {
          if (at > 0) sink!.data(pending.subarray(0, at))
          sink!.end()
          sink = null
        }
        pending = pending.subarray(at + delimiter.length)
        state = 'after-delimiter'
      } else if (state === 'after-delimiter') {
        // "--" ends the body; otherwise optional spaces or tabs (transport padding), then CRLF.
        if (pending.length < 2) return
        if (pending[0] === 0x2d && pending[1] === 0x2d) {
          state = 'done'
          return
        }
        let i = 0
        while (i < pending.length && (pending[i] === 0x20 || pending[i] === 0x09)) i++
        if (i + 2 > pending.length) {
          if (i > 256) throw invalid('malformed delimiter line')
          return
        }
        if (pending[i] !== 0x0d || pending[i + 1] !== 0x0a) throw invalid('malformed delimiter line')
        pending = pending.subarray(i + 2)
        if (++parts > limits.maxParts) throw invalid(`more than ${limits.maxParts} parts`)
        state = 'headers'
      } else if (state === 'headers') {
        // A part with no headers at all starts straight with the blank line.
        const at = pending[0] === 0x0d && pending[1] === 0x0a ? -2 : pending.indexOf(headerEnd)
        if (at === -1) {
          if (pending.length > limits.maxHeaderBytes) throw invalid(`part headers longer than ${limits.maxHeaderBytes} bytes`)
          return
        }
        if (at > limits.maxHeaderBytes) throw invalid(`part headers longer than ${limits.maxHeaderBytes} bytes`)
        const info = at === -2 ? null : parsePartHeaders(pending.subarray(0, at))
        if (info === null) throw invalid('a part has no Content-Disposition: form-data header')
        pending = pending.subarray(at + 4)
        sink = onPart(info)
        state = 'body'
      } else {
        return // done: the epilogue is ignored
      }
    }
  }

  for await (const chunk of chunks) {
    if (state === 'done') continue // the epilogue: read (and counted by the caller), not kept
    // The few bytes kept from the previous chunk go in front of this one: one small copy per chunk.
    pending = pending.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([pending, chunk])
    advance()
    // What is kept for the next chunk is copied (a delimiter's length, or a part's headers so far):
    // the stream owns the chunk's memory.
    pending = Buffer.from(pending)
  }
  if (state !== 'done') throw invalid(state === 'preamble' ? 'no part delimited by the boundary' : 'the body ends before its closing delimiter')
}
