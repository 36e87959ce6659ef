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

/** One `; name=value` parameter (the value quoted or a token), matched where the last one ended. */
const PARAMETER = /^;[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=[ \t]*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))[ \t]*/

/**
 * The parameters of a Content-Disposition value after its `form-data`, names lowercased; null when
 * they are not `; name=value` pairs, each name once. Read in order, so a quoted value that holds
 * `; filename=` is part of that value, not a parameter.
 */
function dispositionParams(value: string, from: number): Map<string, string> | null {
  const params = new Map<string, string>()
  // Up to the end, or a trailing ";" (let pass).
  for (let rest = value.slice(from); !/^;?[ \t]*$/.test(rest); ) {
    const match = PARAMETER.exec(rest)
    if (!match) return null
    const name = match[1]!.toLowerCase()
    // A parameter given twice is ambiguous (readers differ on which counts): refused (RFC 6266 4.1).
    if (params.has(name)) return null
    // A quoted value is taken as sent: browsers (WHATWG) write " as %22 and a backslash as itself, so
    // a backslash escapes nothing (it only keeps a quote after it from ending the value, as Bun reads it).
    params.set(name, match[2] ?? match[3]!)
    rest = rest.slice(match[0].length)
  }
  return params
}

/** A header field name (RFC 9110 token). */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

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
    // A line that is no header is refused, not skipped (so a delimiter-like line cannot hide in the headers).
    const name = colon > 0 ? line.slice(0, colon).toLowerCase() : ''
    if (!FIELD_NAME.test(name)) throw invalid('a part header line is not "Name: value"')
    // RFC 9110 5.5: a field value with NUL, CR or LF is to be refused (Bun's parser cuts a name at a NUL).
    if (/[\0\r\n]/.test(line)) throw invalid('a part header holds a NUL, CR or LF')
    const value = line.slice(colon + 1).trim()
    // Given twice, either could be meant (readers differ on which counts): refused.
    if ((name === 'content-disposition' && disposition !== null) || (name === 'content-type' && contentType !== null))
      throw invalid(`a part has two ${line.slice(0, colon)} headers`)
    if (name === 'content-disposition') disposition = value
    else if (name === 'content-type') contentType = value
  }
  const type = disposition === null ? null : /^form-data[ \t]*(?=;|$)/i.exec(disposition)
  if (disposition === null || type === null) throw invalid('a part has no Content-Disposition: form-data header')
  const params = dispositionParams(disposition, type[0].length)
  if (params === null) throw invalid('a part has a malformed Content-Disposition header')
  const name = params.get('name')
  if (name === undefined) throw invalid('a part has no name')
  return { name, filename: params.get('filename') ?? null, contentType }
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
  // The blank line after a part's headers: its CRLF may be the one that begins the next delimiter (a
  // part with no data), so it stays in front of the data until that is known, and is not passed on.
  let blankLine = 0

  /** Passes pending[0, end) to the part, less what is left of the blank line. */
  const pass = (end: number): void => {
    const skipped = Math.min(blankLine, end)
    blankLine -= skipped
    if (end > skipped) sink!.data(pending.subarray(skipped, end))
  }

  /** Advances through `pending` as far as it allows; returns when more bytes are needed. */
  const advance = (): void => {
    for (;;) {
      if (state === 'preamble' || state === 'body') {
        const at = pending.indexOf(delimiter)
        if (at === -1) {
          // Keep what could be the start of a delimiter cut by the chunk's end; pass on the rest.
          const keep = Math.min(pending.length, delimiter.length - 1)
          const safe = pending.length - keep
          if (state === 'body') pass(safe)
          pending = pending.subarray(safe)
          return
        }
        if (state === 'body') {
          pass(at)
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
        // A delimiter before the blank line: the part ended inside its headers (it cannot straddle the blank line).
        if (at !== -2 && pending.subarray(0, at === -1 ? pending.length : at).indexOf(delimiter) !== -1) {
          throw invalid('a part ends before the blank line after its headers')
        }
        if (at === -1) {
          if (pending.length > limits.maxHeaderBytes) throw invalid(`part headers longer than ${limits.maxHeaderBytes} bytes`)
          return
        }
        if (at > limits.maxHeaderBytes) throw invalid(`part headers longer than ${limits.maxHeaderBytes} bytes`)
        const info = at === -2 ? null : parsePartHeaders(pending.subarray(0, at))
        if (info === null) throw invalid('a part has no Content-Disposition: form-data header')
        pending = pending.subarray(at + 2)
        blankLine = 2
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
