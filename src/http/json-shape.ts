// The shape of a JSON body, checked on its bytes before JSON.parse builds anything: how deep arrays and
// objects nest, and how many elements and members they hold. Parsing is cheap per byte but not per
// value: 30 MB of "[" would become fifteen million nested arrays (gigabytes) and anything recursive
// over them (validation, JSON.stringify) would overflow the stack. The check follows only strings
// (with their escapes) and brackets; whether the rest is valid JSON is JSON.parse's to say.
import { ApiError } from '../shared/errors'

export type JsonShapeLimits = {
  /** Arrays and objects within each other; the body's own object is level 1. */
  maxDepth: number
  /** Array elements and object members, over the whole body. */
  maxValues: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

const tooDeep = (maxDepth: number) =>
  new ApiError('invalid_request', `body nests arrays and objects more than ${maxDepth} levels deep (the limit); send a flatter body`)

const tooManyValues = (maxValues: number) =>
  new ApiError('invalid_request', `body holds more than ${maxValues} array elements and object members together (the limit); send fewer`)

/** Fed a body's chunks in order; throws the 400 as soon as a limit is passed. */
export class JsonShapeCheck {
  private depth = 0
  private values = 0
  private inString = false
  /** A backslash ended the last chunk inside a string: the next byte is escaped. */
  private escaped = false
  /** An array or object was just opened: the next significant byte says whether it holds anything. */
  private opened = false

  constructor(private readonly limits: JsonShapeLimits) {}

  feed(chunk: Uint8Array): void {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const end = bytes.length
    // The next quote and backslash at or after the position searched from, found once each per chunk
    // position, so a long string with many escapes is still scanned in linear time.
    let quoteAt = -2
    let backslashAt = -2
    let i = 0
    if (this.escaped && end > 0) {
      this.escaped = false
      i = 1
    }
    while (i < end) {
      if (this.inString) {
        if (quoteAt < i && quoteAt !== -1) quoteAt = bytes.indexOf(QUOTE, i)
        if (backslashAt < i && backslashAt !== -1) backslashAt = bytes.indexOf(BACKSLASH, i)
        if (backslashAt !== -1 && (quoteAt === -1 || backslashAt < quoteAt)) {
          // The escaped byte (which may be a quote) is skipped, even when the next chunk has it.
          i = backslashAt + 2
          if (i > end) this.escaped = true
          continue
        }
        if (quoteAt === -1) return
        this.inString = false
        i = quoteAt + 1
        continue
      }
      const byte = bytes[i++]!
      if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
      if (this.opened) {
        this.opened = false
        if (byte !== 0x5d && byte !== 0x7d) this.count()
      }
      switch (byte) {
        case QUOTE:
          this.inString = true
          break
        case 0x5b: // [
        case 0x7b: // {
          if (++this.depth > this.limits.maxDepth) throw tooDeep(this.limits.maxDepth)
          this.opened = true
          break
        case 0x5d: // ]
        case 0x7d: // }
          // More closed than opened: JSON.parse stops there too, having built only what was counted.
          if (--this.depth < 0) throw new ApiError('invalid_request', 'body is not valid JSON')
          break
        case 0x2c: // ,
          this.count()
          break
      }
    }
  }

  private count(): void {
    if (++this.values > this.limits.maxValues) throw tooManyValues(this.limits.maxValues)
  }
}

/** Checks a whole body at once (see JsonShapeCheck). */
export function checkJsonShape(bytes: Uint8Array, limits: JsonShapeLimits): void {
  new JsonShapeCheck(limits).feed(bytes)
}
