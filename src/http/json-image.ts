// A streaming reader of a JSON object one of whose top-level fields is a large base64 string (an
// image): that string is decoded as it arrives, straight into the caller's buffer, and never held as
// text; the rest of the object is kept (bounded) and parsed at the end, with `null` where the string
// was. So a 10 MB image sent as 13.4 MB of base64 costs its 10 MB once, not the text, a copy of the
// text and the decoded bytes.
//
// The scanner follows the JSON structure only as far as it must to find that field at the top level
// (strings, escapes, nesting); everything else is checked by JSON.parse on the kept rest.
import { ApiError } from '../shared/errors'
import { closingConnection, parseJsonObject, tooLarge } from './body'

/**
 * Where decoded bytes go: `target()` is the room left (written from its start), `commit(n)` says how
 * many were written there, `overflow()` throws when more would pass its limit.
 */
export type ByteSink = { target(): Uint8Array; commit(written: number): void; overflow(): never }

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

/** Each byte's value in the standard base64 alphabet (RFC 4648 section 4), or 64 for anything else. */
const SEXTET = new Uint8Array(256).fill(64)
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) SEXTET[c.charCodeAt(0)] = i

/** A run shorter than this is decoded a character at a time (the native call costs more). */
const BULK_MIN = 64

/** Escape sequences that may stand inside the image string, and the character each stands for. */
const ESCAPES: Record<number, number> = { 47: 0x2f, 110: 0x0a, 114: 0x0d, 116: 0x09, 34: 0x22, 92: 0x5c, 98: 0x08, 102: 0x0c }

/**
 * Where plain runs of base64 in a chunk end: at the next quote, backslash, "=" (padding, whose rules
 * the character path keeps) or form feed (which base64 would skip and this reader refuses).
 * Each byte's next place is searched for again only once it is passed, so a chunk is scanned once.
 */
class RunStops {
  private readonly next = new Map<number, number>()
  constructor(private readonly chunk: Buffer) {}

  private after(byte: number, i: number): number {
    const known = this.next.get(byte)
    if (known !== undefined && known >= i) return known
    const found = this.chunk.indexOf(byte, i)
    const at = found === -1 ? this.chunk.length : found
    this.next.set(byte, at)
    return at
  }

  runEnd(i: number): number {
    return Math.min(this.after(QUOTE, i), this.after(BACKSLASH, i), this.after(0x3d, i), this.after(0x0c, i))
  }
}

/**
 * The image string of the body, from its opening quote to its closing one: escapes resolved, an
 * optional `data:image/…;base64,` prefix checked, and the base64 decoded straight into the sink: plain
 * runs by the engine's native decoder (from a string of at most one chunk, so little is left for the
 * collector), the rest a table lookup per character. Spaces and escaped line breaks are skipped;
 * padding may be left out.
 */
class Base64Field {
  /** Characters of the string so far, for error messages. */
  private position = 0
  /** Sextets of the quad under way, and how many. */
  private bits = 0
  private count = 0
  /** Padding characters seen: after the first, only more padding (and white space) may come. */
  private padded = 0
  /** The start of the string, until it is known whether it is a data: URL; null once it is. */
  private head: string | null = ''
  /** An escape cut by a chunk's end: the backslash and what came after it. */
  private escape: number[] = []
  // Where the current chunk's bytes go.
  private out: Uint8Array = new Uint8Array(0)
  private written = 0

  constructor(
    private readonly sink: ByteSink,
    private readonly field: string,
  ) {}

  private bad(code: number): ApiError {
    const shown = code < 0x20 || code > 0x7e ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : JSON.stringify(String.fromCharCode(code))
    return invalidImage(
      `${this.field} is not valid base64: ${shown} at character ${this.position}; send standard base64 (A-Z, a-z, 0-9, + and /, padded with =) or a data:image/<type>;base64, URL`,
    )
  }

  private emit(byte: number): void {
    if (this.written === this.out.length) {
      this.sink.commit(this.written)
      this.out = this.sink.target()
      this.written = 0
      if (this.out.length === 0) this.sink.overflow()
    }
    this.out[this.written++] = byte
  }

  /** One character of the string, escapes resolved. */
  private char(code: number): void {
    this.position++
    if (this.head !== null) {
      this.headChar(code)
      return
    }
    const value = SEXTET[code]!
    if (value < 64) {
      if (this.padded > 0) throw this.bad(code)
      this.bits = (this.bits << 6) | value
      if (++this.count === 4) {
        this.emit(this.bits >>> 16)
        this.emit((this.bits >>> 8) & 0xff)
        this.emit(this.bits & 0xff)
        this.bits = 0
        this.count = 0
      }
      return
    }
    if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) return
    if (code === 0x3d) {
      // "=": the data ends with the quad under way, which must have two or three characters.
      if (this.padded === 0) {
        if (this.count < 2) throw this.bad(code)
        this.finishQuad()
      } else if (this.padded + this.quadAtPadding >= 4) {
        throw this.bad(code)
      }
      this.padded++
      return
    }
    throw this.bad(code)
  }

  /** Characters the quad had when padding began (2 or 3). */
  private quadAtPadding = 0

  /** Writes the bytes of an unfinished quad of 2 or 3 characters. */
  private finishQuad(): void {
    this.quadAtPadding = this.count
    if (this.count === 2) this.emit((this.bits >>> 4) & 0xff)
    else if (this.count === 3) {
      this.emit((this.bits >>> 10) & 0xff)
      this.emit((this.bits >>> 2) & 0xff)
    }
    this.bits = 0
    this.count = 0
  }

  /** The first characters: "data:" cannot start base64 (":" is not in its alphabet), so five decide. */
  private headChar(code: number): void {
    const head = this.head + String.fromCharCode(code)
    if (head.length <= 5 && 'data:'.startsWith(head.toLowerCase())) {
      this.head = head
      return
    }
    if (!head.toLowerCase().startsWith('data:')) {
      this.head = null
      this.position -= head.length
      for (let i = 0; i < head.length; i++) this.char(head.charCodeAt(i))
      return
    }
    if (code !== 0x2c) {
      if (head.length > 256) throw invalidImage(`${this.field} starts like a data: URL but has no "," within 256 characters`)
      this.head = head
      return
    }
    if (!DATA_URL.test(head))
      throw invalidImage(`${this.field} is a data: URL that is not data:image/<type>;base64,… (found ${JSON.stringify(head.slice(0, 60))})`)
    this.head = null
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
    this.out = this.sink.target()
    this.written = 0
    try {
      const stops = new RunStops(chunk)
      // The character path takes over from the bulk decoder up to here (so a run it refused is tried once).
      let bulkUntil = start
      for (let i = start; i < chunk.length; i++) {
        if (i >= bulkUntil && this.count === 0 && this.head === null && this.padded === 0 && this.escape.length === 0) {
          bulkUntil = Math.max(stops.runEnd(i), i + 1)
          i = this.bulk(chunk, i, bulkUntil)
          if (i === chunk.length) break
        }
        const code = chunk[i]!
        if (this.escape.length > 0) {
          this.escape.push(code)
          this.resolveEscape()
          continue
        }
        if (code === QUOTE) {
          this.end()
          return i + 1
        }
        if (code === BACKSLASH) {
          this.escape.push(code)
          continue
        }
        // The common case inline: a base64 character outside the head.
        const value = SEXTET[code]!
        if (value < 64 && this.head === null && this.padded === 0) {
          this.position++
          this.bits = (this.bits << 6) | value
          if (++this.count === 4) {
            if (this.written + 3 <= this.out.length) {
              this.out[this.written++] = this.bits >>> 16
              this.out[this.written++] = (this.bits >>> 8) & 0xff
              this.out[this.written++] = this.bits & 0xff
            } else {
              this.emit(this.bits >>> 16)
              this.emit((this.bits >>> 8) & 0xff)
              this.emit(this.bits & 0xff)
            }
            this.bits = 0
            this.count = 0
          }
          continue
        }
        this.char(code)
      }
      return -1
    } finally {
      this.sink.commit(this.written)
      this.written = 0
    }
  }

  /**
   * Decodes the run from `i` to `end` with the engine's native decoder, 8× faster than a character at
   * a time. Returns where the character path goes on: after what was decoded (a partial quad, or what
   * did not fit the sink, is left to it), or at `i` for a run too short or refused, so that path says
   * precisely what is wrong.
   */
  private bulk(chunk: Buffer, i: number, end: number): number {
    if (end - i < BULK_MIN) return i
    let result: { read: number; written: number }
    try {
      result = this.out.subarray(this.written).setFromBase64(chunk.toString('latin1', i, end), { lastChunkHandling: 'stop-before-partial' })
    } catch {
      return i
    }
    this.written += result.written
    this.position += result.read
    return i + result.read
  }

  /** The closing quote. */
  private end(): void {
    if (this.head !== null) {
      const head = this.head
      if (head.toLowerCase().startsWith('data:') && head.length >= 5) throw invalidImage(`${this.field} is a data: URL with no "," before its data`)
      this.head = null
      this.position -= head.length
      for (let i = 0; i < head.length; i++) this.char(head.charCodeAt(i))
    }
    if (this.count === 1) throw invalidImage(`${this.field} is not valid base64: its length leaves a single character over`)
    if (this.count > 1) this.finishQuad()
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
