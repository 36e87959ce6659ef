// Helpers shared by the intake tests: a fake resolver (no DNS query leaves the machine), an
// animated WebP builder (@napi-rs/image only encodes still images) and error matchers.
import { expect } from 'bun:test'
import { Transformer } from '@napi-rs/image'
import { createImageIntake, type HostResolver, type ImageIntakeOptions } from '../../src/intake/index.ts'
import { ApiError } from '../../src/shared/errors.ts'

export type FakeResolver = HostResolver & { calls: string[] }

/**
 * Answers from a fixed table; unknown names fail like getaddrinfo's ENOTFOUND. A table value
 * may be a list of answers, one per successive call (the last one repeats), to model DNS
 * rebinding.
 */
export function fakeResolver(table: Record<string, string[] | string[][]>): FakeResolver {
  const calls: string[] = []
  const resolver = async (hostname: string) => {
    calls.push(hostname)
    const entry = table[hostname]
    if (entry === undefined) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
      error.code = 'ENOTFOUND'
      throw error
    }
    const callIndex = calls.filter((name) => name === hostname).length - 1
    const answers = Array.isArray(entry[0]) ? ((entry as string[][])[Math.min(callIndex, entry.length - 1)] ?? []) : (entry as string[])
    return answers.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))
  }
  return Object.assign(resolver, { calls })
}

/**
 * Awaits a rejection and checks it is a 400 invalid_image_url whose message matches, and, when given,
 * whose log-only detail matches `detail`.
 */
export async function expectRefusal(work: Promise<unknown>, message: RegExp, detail?: RegExp): Promise<ApiError> {
  let caught: unknown
  try {
    await work
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(ApiError)
  const refusal = caught as ApiError
  expect(refusal.code).toBe('invalid_image_url')
  expect(refusal.status).toBe(400)
  expect(refusal.message).toMatch(message)
  if (detail !== undefined) expect(refusal.detail ?? '').toMatch(detail)
  return refusal
}

function solidRgba(width: number, height: number, rgb: readonly [number, number, number]): Uint8Array {
  const pixels = new Uint8Array(width * height * 4)
  for (let i = 0; i < width * height; i++) pixels.set([rgb[0], rgb[1], rgb[2], 255], i * 4)
  return pixels
}

function riffChunk(fourcc: string, data: Uint8Array): Uint8Array {
  const padding = data.length & 1
  const chunk = new Uint8Array(8 + data.length + padding)
  for (let i = 0; i < 4; i++) chunk[i] = fourcc.charCodeAt(i)
  new DataView(chunk.buffer).setUint32(4, data.length, true)
  chunk.set(data, 8)
  return chunk
}

const u24 = (value: number): number[] => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff]

/** The first chunk (VP8L here) of a simple still WebP, with its header and padding. */
function firstRiffChunk(webp: Uint8Array): Uint8Array {
  const size = new DataView(webp.buffer, webp.byteOffset, webp.byteLength).getUint32(16, true)
  return webp.slice(12, 20 + size + (size & 1))
}

/** An animated WebP (VP8X + ANIM + one ANMF per colour), each frame a solid colour. */
export function makeAnimatedWebp(width: number, height: number, frameColours: ReadonlyArray<readonly [number, number, number]>): Uint8Array {
  const vp8x = Uint8Array.from([0x02, 0, 0, 0, ...u24(width - 1), ...u24(height - 1)]) // animation flag
  const anim = Uint8Array.from([0, 0, 0, 0, 0, 0]) // background colour, loop forever
  const frames = frameColours.map((colour) => {
    const still = new Uint8Array(Transformer.fromRgbaPixels(solidRgba(width, height, colour), width, height).webpLosslessSync())
    const frameHeader = [...u24(0), ...u24(0), ...u24(width - 1), ...u24(height - 1), ...u24(100), 0]
    return riffChunk('ANMF', Uint8Array.from([...frameHeader, ...firstRiffChunk(still)]))
  })
  const chunks = [riffChunk('VP8X', vp8x), riffChunk('ANIM', anim), ...frames]
  const riffSize = 4 + chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const file = new Uint8Array(8 + riffSize)
  file.set([0x52, 0x49, 0x46, 0x46]) // RIFF
  new DataView(file.buffer).setUint32(4, riffSize, true)
  file.set([0x57, 0x45, 0x42, 0x50], 8) // WEBP
  let offset = 12
  for (const chunk of chunks) {
    file.set(chunk, offset)
    offset += chunk.length
  }
  return file
}

/** RGBA (or RGB) of the pixel at (x, y) of an encoded image, decoded by @napi-rs/image. */
export async function pixelAt(encoded: Uint8Array, x: number, y: number): Promise<number[]> {
  const transformer = new Transformer(encoded)
  const { width, colorType } = await transformer.metadata()
  const channels = colorType === 3 ? 4 : colorType === 2 ? 3 : colorType === 1 ? 2 : 1
  const raw = await new Transformer(encoded).rawPixels()
  const offset = (y * width + x) * channels
  return Array.from(raw.subarray(offset, offset + Math.min(channels, 3)))
}

export const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
export const JPEG_MAGIC = [0xff, 0xd8, 0xff]

export function startsWithBytes(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte)
}

/** The JPEG with an EXIF APP1 segment (big-endian TIFF, one IFD entry) saying `orientation`. */
export function withExifOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const tiff = [0x4d, 0x4d, 0x00, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0, 0, 0, 0, 0]
  const payload = [...new TextEncoder().encode('Exif'), 0, 0, ...tiff]
  const length = payload.length + 2
  return new Uint8Array([0xff, 0xd8, 0xff, 0xe1, length >> 8, length & 0xff, ...payload, ...jpeg.slice(2)])
}

/** An intake allowed to fetch from the local HTTPS test server (loopback, its CA, `localhost` faked). */
export function loopbackIntakeFor(server: { caPem: string }, extra: Partial<ImageIntakeOptions> = {}) {
  return createImageIntake({
    allowPrivateHosts: ['127.0.0.1'],
    extraCaPem: server.caPem,
    resolve: fakeResolver({ localhost: ['127.0.0.1'] }),
    ...extra,
  })
}
