// Where an uploaded image's bytes go as they arrive: one buffer, written once (a multipart part's chunks
// copied in, or base64 decoded straight into it), hashed as it fills, and refused the moment it would
// pass the byte limit. The buffer is allocated at the limit (or the size the request declares, when
// smaller) but the kernel only backs the pages that are written, so a small image costs what it is.
import { Blake3Hasher } from '@napi-rs/blake-hash'
import { ApiError } from '../shared/errors.ts'
import { MAX_IMAGE_BYTES, MAX_IMAGE_MB } from '../shared/limits.ts'
import type { ReceivedImage } from './types.ts'

export class UploadBuffer {
  private readonly buffer: Uint8Array
  private readonly hash = new Blake3Hasher()
  private filled = 0

  /** `expectedBytes`: at most this many will come (the body's declared length), when known. */
  constructor(
    expectedBytes: number | null,
    private readonly maxBytes = MAX_IMAGE_BYTES,
  ) {
    const size = expectedBytes !== null && Number.isFinite(expectedBytes) && expectedBytes >= 0 ? Math.min(expectedBytes, maxBytes) : maxBytes
    this.buffer = new Uint8Array(size)
  }

  get length(): number {
    return this.filled
  }

  /** Throws 413 payload_too_large: more bytes would take the image past the limit. */
  overflow(): never {
    // Only a declared length that lied (a chunked body has none) can leave the buffer short of the limit.
    if (this.buffer.length < this.maxBytes) throw new ApiError('invalid_request', 'the request body is longer than its Content-Length says')
    const limit = this.maxBytes === MAX_IMAGE_BYTES ? `${MAX_IMAGE_MB} MB` : `${this.maxBytes} bytes`
    throw new ApiError('payload_too_large', `the image is over the limit of ${limit} (counted after decoding)`)
  }

  /** Copies `chunk` in; throws like overflow() when it does not fit. */
  write(chunk: Uint8Array): void {
    if (this.filled + chunk.length > this.buffer.length) this.overflow()
    this.buffer.set(chunk, this.filled)
    this.commit(chunk.length)
  }

  /** The room left, for a decoder that writes in place and then calls commit() with how much it wrote. */
  target(): Uint8Array {
    return this.buffer.subarray(this.filled)
  }

  commit(written: number): void {
    if (written === 0) return
    const start = this.filled
    this.filled += written
    // A Buffer view of the same memory: the binding takes Buffers, and nothing is copied.
    this.hash.update(Buffer.from(this.buffer.buffer, this.buffer.byteOffset + start, written))
  }

  /** The bytes (a view, no copy) and their content hash, as a fetched image's (BLAKE3, hex). */
  finish(): ReceivedImage {
    return { bytes: this.buffer.subarray(0, this.filled), contentHash: this.hash.digest('hex') }
  }
}
