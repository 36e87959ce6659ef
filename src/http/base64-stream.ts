// A streaming decoder of standard base64 (RFC 4648 section 4) straight into a caller's buffer: the
// characters come in runs of whatever arrived (and single characters, e.g. from a JSON escape), the
// bytes go to a sink as they are decoded, and nothing is held but the quad under way.
//
// What it takes: the alphabet A-Z a-z 0-9 + /, space, tab, CR and LF anywhere (skipped), padding
// with "=" or none, and a last quad of 2 or 3 characters padded or not (trailing bits are ignored, as
// every decoder does). It refuses any other character, including form feed (which native decoders
// would skip), the base64url alphabet, data after padding and a single character over at the end.

/**
 * Where decoded bytes go: `target()` is the room left (written from its start), `commit(n)` says how
 * many were written there, `overflow()` throws when more would pass its limit.
 */
export type ByteSink = { target(): Uint8Array; commit(written: number): void; overflow(): never }

/** Input that is not base64: `code` is the offending character (null: a single character over at the end). */
export class Base64Error extends Error {
  constructor(
    /** The offending character's place, counting from 1. */
    readonly position: number,
    readonly code: number | null,
  ) {
    super(code === null ? 'not valid base64: its length leaves a single character over' : `not valid base64: character ${code} at ${position}`)
  }
}

/** Each byte's value in the standard base64 alphabet, or 64 for anything else. */
const SEXTET = new Uint8Array(256).fill(64)
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) SEXTET[c.charCodeAt(0)] = i

const PAD = 0x3d
const FORM_FEED = 0x0c

/** A run shorter than this is decoded a character at a time (the native call costs more). */
const BULK_MIN = 64

const EMPTY = new Uint8Array(0)

/**
 * Where plain runs in a chunk end: at the next "=" (padding, whose rules the character path keeps) or
 * form feed (which the native decoder would skip and this one refuses). Each byte's next place is
 * searched for again only once it is passed, so a chunk is scanned once however many runs it has.
 */
class RunStops {
  private readonly next = new Map<number, number>()
  constructor(readonly chunk: Uint8Array) {}

  private after(byte: number, i: number): number {
    const known = this.next.get(byte)
    if (known !== undefined && known >= i) return known
    const found = this.chunk.indexOf(byte, i)
    const at = found === -1 ? this.chunk.length : found
    this.next.set(byte, at)
    return at
  }

  runEnd(i: number, end: number): number {
    return Math.min(this.after(PAD, i), this.after(FORM_FEED, i), end)
  }
}

/**
 * Decodes what it is given into `sink`: plain runs by the engine's native decoder (from a string of at
 * most one run), the rest a table lookup per character. Decoded bytes are committed to the sink by
 * flush() (call it before the chunk's memory is let go or the sink is looked at) and by end().
 */
export class Base64Stream {
  /** Characters so far. */
  private position = 0
  /** Sextets of the quad under way, and how many. */
  private bits = 0
  private count = 0
  /** Padding characters seen: after the first, only more padding (and white space) may come. */
  private padded = 0
  /** Characters the quad had when padding began (2 or 3). */
  private quadAtPadding = 0
  // The sink's room being written, and how much of it is written.
  private out: Uint8Array = EMPTY
  private written = 0
  private stops: RunStops | null = null

  constructor(private readonly sink: ByteSink) {}

  /** The characters of `chunk` from `start` to `end`. */
  write(chunk: Uint8Array, start: number, end: number): void {
    if (this.written === this.out.length) this.refill()
    if (this.stops?.chunk !== chunk) this.stops = new RunStops(chunk)
    const stops = this.stops
    // The character path takes over from the bulk decoder up to here (so a run it refused is tried once).
    let bulkUntil = start
    for (let i = start; i < end; i++) {
      if (i >= bulkUntil && this.count === 0 && this.padded === 0) {
        bulkUntil = Math.max(stops.runEnd(i, end), i + 1)
        i = this.bulk(chunk, i, bulkUntil)
        if (i === end) break
      }
      const code = chunk[i]!
      // The common case inline: a character of the alphabet before any padding.
      const value = SEXTET[code]!
      if (value < 64 && this.padded === 0) {
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
  }

  /** One character (a UTF-16 code unit: anything past the alphabet is refused). */
  char(code: number): void {
    this.position++
    const value = code < 256 ? SEXTET[code]! : 64
    if (value < 64) {
      if (this.padded > 0) throw new Base64Error(this.position, code)
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
    if (code === PAD) {
      // "=": the data ends with the quad under way, which must have two or three characters.
      if (this.padded === 0) {
        if (this.count < 2) throw new Base64Error(this.position, code)
        this.finishQuad()
      } else if (this.padded + this.quadAtPadding >= 4) {
        throw new Base64Error(this.position, code)
      }
      this.padded++
      return
    }
    throw new Base64Error(this.position, code)
  }

  /** Commits what was decoded so far to the sink. */
  flush(): void {
    this.sink.commit(this.written)
    this.out = EMPTY
    this.written = 0
  }

  /** The end of the input: the last quad's bytes, committed. Throws for a single character over. */
  end(): void {
    if (this.count === 1) throw new Base64Error(this.position, null)
    if (this.count > 1) this.finishQuad()
    this.flush()
  }

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

  /** Commits the room written and takes the sink's next. */
  private refill(): void {
    this.sink.commit(this.written)
    this.out = this.sink.target()
    this.written = 0
  }

  private emit(byte: number): void {
    if (this.written === this.out.length) {
      this.refill()
      if (this.out.length === 0) this.sink.overflow()
    }
    this.out[this.written++] = byte
  }

  /**
   * Decodes the run from `i` to `end` with the engine's native decoder, 8× faster than a character at
   * a time. Returns where the character path goes on: after what was decoded (a partial quad, or what
   * did not fit the sink, is left to it), or at `i` for a run too short or refused, so that path says
   * precisely what is wrong.
   */
  private bulk(chunk: Uint8Array, i: number, end: number): number {
    if (end - i < BULK_MIN) return i
    let result: { read: number; written: number }
    try {
      const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1', i, end)
      result = this.out.subarray(this.written).setFromBase64(text, { lastChunkHandling: 'stop-before-partial' })
    } catch {
      return i
    }
    this.written += result.written
    this.position += result.read
    return i + result.read
  }
}
