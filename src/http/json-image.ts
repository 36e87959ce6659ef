// A streaming reader of a JSON object one of whose top-level fields is a large base64 string (an
// image): that string is decoded as it arrives, straight into the caller's buffer, and never held as
// text; the rest of the object is kept (bounded) and parsed at the end, with `null` where the string
// was. So a 10 MB image sent as 13.4 MB of base64 costs its 10 MB once, not the text, a copy of the
// text and the decoded bytes.
//
// The scanner follows the JSON structure only as far as it must to find that field at the top level
// (strings, escapes, nesting); everything else is checked by JSON.parse on the kept rest.
import { ApiError } from '../shared/errors'
import { Base64Error, Base64Stream, type ByteSink } from './base64-stream'
import { closingConnection, parseJsonObject, tooLarge } from './body'

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
const invalidJson = () => new ApiError('invalid_request', 'body is not valid JSON')

const DATA_URL = /^data:image\/[A-Za-z0-9.+-]+(?:;[^;,]*)*;base64,$/i

/** Escape sequences that may stand inside the image string, and the character each stands for. */
const ESCAPES: Record<number, number> = { 47: 0x2f, 110: 0x0a, 114: 0x0d, 116: 0x09, 34: 0x22, 92: 0x5c, 98: 0x08, 102: 0x0c }

/**
 * Where the string's plain runs in a chunk end: at the next quote or backslash. Each byte's next place
 * is searched for again only once it is passed, so a chunk is scanned once.
 */
class StringStops {
  private nextQuote = -1
  private nextBackslash = -1
  constructor(readonly chunk: Buffer) {}

  runEnd(i: number): number {
    if (this.nextQuote < i) this.nextQuote = this.find(QUOTE, i)
    if (this.nextBackslash < i) this.nextBackslash = this.find(BACKSLASH, i)
    return Math.min(this.nextQuote, this.nextBackslash)
  }

  private find(byte: number, i: number): number {
    const found = this.chunk.indexOf(byte, i)
    return found === -1 ? this.chunk.length : found
  }
}

/**
 * The image string of the body, from its opening quote to its closing one: escapes resolved, an
 * optional `data:image/…;base64,` prefix checked, and the base64 decoded straight into the sink by a
 * Base64Stream (spaces and escaped line breaks are skipped; padding may be left out).
 */
class Base64Field {
  /** Characters of the data: URL head once it is read, for error messages: the decoder counts the rest. */
  private headLength = 0
  /** The start of the string, until it is known whether it is a data: URL; null once it is. */
  private head: string | null = ''
  /** An escape cut by a chunk's end: the backslash and what came after it. */
  private escape: number[] = []
  private readonly base64: Base64Stream

  constructor(
    sink: ByteSink,
    private readonly field: string,
  ) {
    this.base64 = new Base64Stream(sink)
  }

  /** The decoder's refusal in the contract's words, counting characters from the string's start. */
  private bad(error: Base64Error): ApiError {
    const { code } = error
    if (code === null) return invalidImage(`${this.field} is not valid base64: its length leaves a single character over`)
    const shown = code < 0x20 || code > 0x7e ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : JSON.stringify(String.fromCharCode(code))
    return invalidImage(
      `${this.field} is not valid base64: ${shown} at character ${this.headLength + error.position}; send standard base64 (A-Z, a-z, 0-9, + and /, padded with =) or a data:image/<type>;base64, URL`,
    )
  }

  /** One character of the string, escapes resolved. */
  private char(code: number): void {
    if (this.head !== null) this.headChar(code)
    else this.base64.char(code)
  }

  /** The first characters: "data:" cannot start base64 (":" is not in its alphabet), so five decide. */
  private headChar(code: number): void {
    const head = this.head + String.fromCharCode(code)
    if (head.length <= 5 && 'data:'.startsWith(head.toLowerCase())) {
      this.head = head
      return
    }
    if (!head.toLowerCase().startsWith('data:')) {
      this.replayHead(head)
      return
    }
    // A data: URL's head is printable ASCII (RFC 2397). Anything else is refused: this string never
    // reaches JSON.parse, so no one else would check its bytes as UTF-8.
    if (code < 0x20 || code > 0x7e || (code === 0x2c && !DATA_URL.test(head)))
      throw invalidImage(`${this.field} is a data: URL that is not data:image/<type>;base64,… (found ${JSON.stringify(head.slice(0, 60))})`)
    if (code !== 0x2c) {
      if (head.length > 256) throw invalidImage(`${this.field} starts like a data: URL but has no "," within 256 characters`)
      this.head = head
      return
    }
    this.head = null
    this.headLength = head.length
  }

  /** A head that is no data: URL is base64 (or not): its characters go to the decoder. */
  private replayHead(head: string): void {
    this.head = null
    for (let i = 0; i < head.length; i++) this.base64.char(head.charCodeAt(i))
  }

  /** Resolves the escape collected so far; false while it needs more bytes. */
  private resolveEscape(): boolean {
    const [, kind] = this.escape
    if (kind === undefined) return false
    if (kind === 0x75) {
      if (this.escape.length < 6) return false
      const hex = String.fromCharCode(...this.escape.slice(2))
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw invalidJson()
      this.escape = []
      this.char(Number.parseInt(hex, 16))
      return true
    }
    const code = ESCAPES[kind]
    if (code === undefined) throw invalidJson()
    this.escape = []
    this.char(code)
    return true
  }

  /**
   * Takes the string's bytes from `chunk` at `start`: returns the index after its closing quote, or -1
   * when the chunk ended first.
   */
  consume(chunk: Buffer, start: number): number {
    try {
      const stops = new StringStops(chunk)
      let i = start
      while (i < chunk.length) {
        const code = chunk[i]!
        if (this.escape.length > 0) {
          this.escape.push(code)
          this.resolveEscape()
          i++
        } else if (code === QUOTE) {
          this.end()
          return i + 1
        } else if (code === BACKSLASH) {
          this.escape.push(code)
          i++
        } else if (this.head !== null) {
          this.headChar(code)
          i++
        } else {
          const end = stops.runEnd(i)
          this.base64.write(chunk, i, end)
          i = end
        }
      }
      return -1
    } catch (error) {
      throw error instanceof Base64Error ? this.bad(error) : error
    } finally {
      // The chunk's memory is the stream's: what was decoded from it is the sink's before it goes.
      this.base64.flush()
    }
  }

  /** The closing quote. */
  private end(): void {
    if (this.head !== null) {
      const head = this.head
      if (head.toLowerCase().startsWith('data:') && head.length >= 5) throw invalidImage(`${this.field} is a data: URL with no "," before its data`)
      this.replayHead(head)
    }
    this.base64.end()
  }
}

/**
 * Reads `chunks` as one JSON object, decoding the top-level string `options.field` into the sink as it
 * arrives. Throws 400 invalid_request for a body that is not a JSON object (or names the field twice)
 * or whose rest is over the shape limits, 400 invalid_image for a string that is not base64, 413 when
 * the rest passes `maxRestBytes`, and whatever the sink throws (its own limit); each closes the
 * connection, as the body may not have been read to its end.
 */
export async function readJsonWithImage(chunks: AsyncIterable<Uint8Array>, options: JsonImageOptions): Promise<JsonImageResult> {
  try {
    return await readJsonWithImageOnce(chunks, options)
  } catch (error) {
    throw closingConnection(error)
  }
}

async function readJsonWithImageOnce(chunks: AsyncIterable<Uint8Array>, options: JsonImageOptions): Promise<JsonImageResult> {
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
  let image: Base64Field | null = null
  let taken = false

  // Inside the image string.
  let inImage = false

  const finishKey = () => {
    const raw = rest.subarray(keyStart, restLength - 1)
    try {
      lastKey = JSON.parse(`"${new TextDecoder('utf-8', { fatal: true }).decode(raw)}"`) as string
    } catch {
      lastKey = null // JSON.parse of the whole rest will say what is wrong
    }
    keyStart = -1
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
        const after = image!.consume(chunk, i)
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
          image = new Base64Field(options.sink(), field)
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
