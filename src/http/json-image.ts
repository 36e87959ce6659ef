// A streaming reader of a JSON object one of whose top-level fields is a large base64 string (an
// image): that string is decoded as it arrives, straight into the caller's buffer, and never held as
// text; the rest of the object is kept (bounded) and parsed at the end, with `null` where the string
// was. So a 10 MB image sent as 13.4 MB of base64 costs its 10 MB once, not the text, a copy of the
// text and the decoded bytes.
//
// The scanner follows the JSON structure only as far as it must to find that field at the top level
// (strings, escapes, nesting); everything else is checked by JSON.parse on the kept rest.
import { ApiError } from '../shared/errors'
import { parseJsonObject, tooLarge } from './body'

/** Where decoded bytes go: room for `n` more (throwing when over its limit), then how many were written. */
export type ByteSink = { room(n: number): Uint8Array; commit(written: number): void }

export type JsonImageOptions = {
  /** The top-level field holding the base64 (or `data:image/…;base64,` URL) string. */
  field: string
  /** Bytes of the body apart from that string. */
  maxRestBytes: number
  /** Called when the field's string starts: where its bytes go. */
  sink: () => ByteSink
}

export type JsonImageResult = {
  /** The object without the field when its string was taken out (with it otherwise, e.g. not a string). */
  body: Record<string, unknown>
  /** Whether the field's string was decoded into the sink. */
  image: boolean
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

const invalidImage = (message: string) => new ApiError('invalid_image', message)

/** The standard base64 alphabet (RFC 4648 section 4) and nothing else. */
const BASE64_ONLY = /^[A-Za-z0-9+/]*$/
const BASE64_CHAR = /[A-Za-z0-9+/]/
const DATA_URL = /^data:image\/[A-Za-z0-9.+-]+(?:;[^;,]*)*;base64,$/i

/** Decodes a base64 string that arrives in pieces, into a ByteSink, refusing anything that is not base64. */
class Base64Stream {
  /** Characters of the string seen so far (for error messages). */
  private position = 0
  /** Base64 characters taken so far (their count decides where padding may stand). */
  private count = 0
  /** Characters not decoded yet: whole quads go at each flush, up to 3 stay. */
  private pending = ''
  /** Padding characters seen: only more padding and whitespace may follow. */
  private padded = 0
  /** Before the data: the start of the string, until it is known whether it is a data: URL. */
  private head: string | null = ''

  constructor(
    private readonly sink: ByteSink,
    private readonly field: string,
  ) {}

  private bad(text: string, at: number): ApiError {
    const code = text.charCodeAt(at)
    const shown = code < 0x20 || code > 0x7e ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : JSON.stringify(text[at])
    return invalidImage(
      `${this.field} is not valid base64: ${shown} at character ${this.position + at + 1}; send standard base64 (A-Z, a-z, 0-9, + and /, padded with =) or a data:image/<type>;base64, URL`,
    )
  }

  /** Takes the next piece of the string (escapes already resolved). */
  feed(text: string): void {
    if (this.head === null) {
      this.data(text)
      return
    }
    // "data:" cannot start base64 (":" is not in its alphabet), so five characters decide.
    const head = this.head + text
    if (head.length < 5 && 'data:'.startsWith(head.toLowerCase())) {
      this.head = head
      return
    }
    if (head.slice(0, 5).toLowerCase() !== 'data:') {
      this.head = null
      this.data(head)
      return
    }
    const comma = head.indexOf(',')
    if (comma === -1) {
      if (head.length > 256) throw invalidImage(`${this.field} starts like a data: URL but has no "," within 256 characters`)
      this.head = head
      return
    }
    const prefix = head.slice(0, comma + 1)
    if (!DATA_URL.test(prefix))
      throw invalidImage(`${this.field} is a data: URL that is not data:image/<type>;base64,… (found ${JSON.stringify(prefix.slice(0, 60))})`)
    this.head = null
    this.position += comma + 1
    this.data(head.slice(comma + 1))
  }

  private data(text: string): void {
    if (BASE64_ONLY.test(text)) {
      if (this.padded > 0 && text.length > 0) throw this.bad(text, 0)
      this.pending += text
      this.count += text.length
    } else {
      // The slow path: spaces and line breaks are skipped, padding ends the data.
      let clean = ''
      for (let i = 0; i < text.length; i++) {
        const c = text[i]!
        if (c === ' ' || c === '\n' || c === '\r' || c === '\t') continue
        if (c === '=') {
          const over = this.count % 4
          if (over < 2 || this.padded + over >= 4) throw this.bad(text, i)
          this.padded++
          continue
        }
        if (this.padded > 0 || !BASE64_CHAR.test(c)) throw this.bad(text, i)
        clean += c
        this.count++
      }
      this.pending += clean
    }
    this.position += text.length
  }

  /** Decodes the whole quads received so far (called once per chunk of the body, so each call decodes many). */
  flush(): void {
    const whole = this.pending.length - (this.pending.length % 4)
    if (whole === 0) return
    const quads = this.pending.slice(0, whole)
    this.pending = this.pending.slice(whole)
    const { written } = this.sink.room((whole / 4) * 3).setFromBase64(quads, { lastChunkHandling: 'strict' })
    this.sink.commit(written)
  }

  /** The closing quote: decodes what is left; padding may have been left out. */
  end(): void {
    if (this.head !== null) {
      const head = this.head
      this.head = null
      if (head.toLowerCase().startsWith('data:')) throw invalidImage(`${this.field} is a data: URL with no "," before its data`)
      this.data(head)
    }
    this.flush()
    const rest = this.pending
    this.pending = ''
    if (rest.length === 0) return
    if (rest.length === 1) throw invalidImage(`${this.field} is not valid base64: its length leaves a single character over`)
    if (this.padded > 0 && rest.length + this.padded !== 4) throw invalidImage(`${this.field} is not valid base64: wrong padding`)
    const { written } = this.sink.room(rest.length - 1).setFromBase64(rest, { lastChunkHandling: 'loose' })
    this.sink.commit(written)
  }
}

/** Escape sequences inside the image string: the few base64 may carry (an escaped "/", line breaks). */
const ESCAPED: Record<number, string> = { 47: '/', 110: '\n', 114: '\r', 116: '\t', 34: '"', 92: '\\', 98: '\b', 102: '\f' }

/**
 * Reads `chunks` as one JSON object, decoding the top-level string `options.field` into the sink as it
 * arrives. Throws 400 invalid_request for a body that is not a JSON object (or names the field twice),
 * 400 invalid_image for a string that is not base64, 413 when the rest passes `maxRestBytes`, and
 * whatever the sink throws (its own limit).
 */
export async function readJsonWithImage(chunks: AsyncIterable<Uint8Array>, options: JsonImageOptions): Promise<JsonImageResult> {
  const { field, maxRestBytes } = options
  const rest = new Uint8Array(maxRestBytes)
  let restLength = 0
  const keep = (byte: number) => {
    if (restLength === maxRestBytes) throw tooLarge(maxRestBytes, `the request body apart from ${field}`)
    rest[restLength++] = byte
  }

  // The structure, outside the image string.
  let depth = 0
  let inString = false
  let escaped = false
  let expectKey = false
  let keyStart = -1
  let lastKey: string | null = null
  /** After `"<field>":` at the top level: the next token decides whether it is a string to take out. */
  let awaitingValue = false
  let sawField = false
  let image: Base64Stream | null = null
  let taken = false

  // Inside the image string.
  let inImage = false
  /** An escape cut by a chunk's end: "\\" or "\\u" and some of its hex digits. */
  let pendingEscape = ''

  const finishKey = () => {
    const raw = rest.subarray(keyStart, restLength - 1)
    try {
      lastKey = JSON.parse(`"${new TextDecoder('utf-8', { fatal: true }).decode(raw)}"`) as string
    } catch {
      lastKey = null // JSON.parse of the whole rest will say what is wrong
    }
    keyStart = -1
  }

  /** Resolves an escape inside the image string; returns the character, or null if more bytes are needed. */
  const escapeChar = (sequence: string): string | null => {
    if (sequence.length < 2) return null
    const code = sequence.charCodeAt(1)
    if (code === 0x75) {
      if (sequence.length < 6) return null
      const hex = sequence.slice(2, 6)
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new ApiError('invalid_request', 'body is not valid JSON')
      return String.fromCharCode(Number.parseInt(hex, 16))
    }
    const char = ESCAPED[code]
    if (char === undefined) throw new ApiError('invalid_request', 'body is not valid JSON')
    return char
  }

  /** Consumes image-string bytes from `chunk` at `start`; returns where the string ended (after its quote), or -1. */
  const imageBytes = (chunk: Buffer, start: number): number => {
    let i = start
    // Found once per chunk: wrapped base64 has an escape every 76 characters, and looking for the
    // closing quote again after each would scan the rest of the chunk each time.
    let quote = chunk.indexOf(QUOTE, i)
    while (i < chunk.length) {
      if (pendingEscape !== '') {
        while (i < chunk.length && (pendingEscape.length < 2 || (pendingEscape[1] === 'u' && pendingEscape.length < 6))) {
          pendingEscape += String.fromCharCode(chunk[i]!)
          i++
        }
        const char = escapeChar(pendingEscape)
        if (char === null) break
        pendingEscape = ''
        // Escaped line breaks (base64 wrapped at 76 characters) are skipped here, the cheapest place.
        if (char !== '\n' && char !== '\r') image!.feed(char)
        continue
      }
      if (quote !== -1 && quote < i) quote = chunk.indexOf(QUOTE, i)
      const backslash = chunk.indexOf(BACKSLASH, i)
      const stop = quote === -1 ? backslash : backslash === -1 ? quote : Math.min(quote, backslash)
      const end = stop === -1 ? chunk.length : stop
      if (end > i) image!.feed(chunk.toString('latin1', i, end))
      if (stop === -1) break
      if (stop === quote) {
        image!.end()
        return quote + 1
      }
      pendingEscape = '\\'
      i = backslash + 1
    }
    image!.flush()
    return -1
  }

  let first = true
  for await (const piece of chunks) {
    const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength)
    let i = 0
    // A UTF-8 byte order mark before the object is skipped, as TextDecoder does.
    if (first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3
    first = false
    while (i < chunk.length) {
      if (inImage) {
        const after = imageBytes(chunk, i)
        if (after === -1) break
        inImage = false
        i = after
        continue
      }
      const byte = chunk[i]!
      i++
      if (inString) {
        keep(byte)
        if (escaped) escaped = false
        else if (byte === BACKSLASH) escaped = true
        else if (byte === QUOTE) {
          inString = false
          if (keyStart !== -1) finishKey()
        }
        continue
      }
      const whitespace = byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
      if (awaitingValue && !whitespace) {
        awaitingValue = false
        if (byte === QUOTE) {
          // The image string: `null` stands in its place in what JSON.parse will read.
          for (const b of [0x6e, 0x75, 0x6c, 0x6c]) keep(b)
          image = new Base64Stream(options.sink(), field)
          taken = true
          inImage = true
          continue
        }
      }
      keep(byte)
      if (byte === QUOTE) {
        inString = true
        if (depth === 1 && expectKey) keyStart = restLength
      } else if (byte === 0x7b || byte === 0x5b) {
        depth++
        if (depth === 1) expectKey = byte === 0x7b
      } else if (byte === 0x7d || byte === 0x5d) {
        depth--
      } else if (depth === 1 && byte === 0x2c) {
        expectKey = true
      } else if (depth === 1 && byte === 0x3a) {
        expectKey = false
        if (lastKey === field) {
          if (sawField) throw new ApiError('invalid_request', `${field} is given more than once`)
          sawField = true
          awaitingValue = true
        }
        lastKey = null
      }
    }
  }
  if (inImage || inString) throw new ApiError('invalid_request', 'body is not valid JSON')
  if (restLength === 0) return { body: {}, image: false }
  const body = parseJsonObject(rest.subarray(0, restLength))
  if (taken) delete body[field]
  return { body, image: taken }
}
