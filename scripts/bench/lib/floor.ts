// The physical floor of an intake request, measured in this process while the service is idle:
//  - fetch: the same bytes from the same HTTPS server with Bun's native fetch (the cheapest HTTPS client
//    of this runtime), over a fresh TLS connection each time (as the service must: it pins each hop's
//    checked address and never reuses a socket), trusting only the bench CA;
//  - prepare: decode, first frame, downscale to 1024 px and encode, with the codecs and settings of
//    src/intake/prepare.ts, downscale.ts and codec.ts: sharp (a JPEG decoded at a DCT scale, read from a
//    file named with `[shrink=N]`, here a temporary file), its PNG output encoded by @napi-rs/image. For
//    GIF the codec is alttext's own (src/intake/gif-frame.ts), called directly in this thread, with no
//    Worker: the Worker hand-off the service pays per GIF is therefore part of its overhead, not of the
//    floor. (Scenario 18 measures the native codecs' own floor.)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CompressionType, FilterType, Transformer } from '@napi-rs/image'
import sharp, { type Sharp } from 'sharp'
import { gifFrameForModel } from '../../../src/intake/gif-frame'
import type { BenchFormat } from './images'

/** As src/intake/prepare.ts, downscale.ts and codec.ts. */
const JPEG_QUALITY = 90
const PNG_OPTIONS = { compressionType: CompressionType.Fast, filterType: FilterType.Adaptive }
const MAX_SIDE = 1024
sharp.cache(false)
sharp.concurrency(1)

export async function fetchBytes(url: string, caPem: string): Promise<Uint8Array> {
  const response = await fetch(url, { tls: { ca: caPem }, keepalive: false, headers: { 'accept-encoding': 'identity' } })
  if (response.status !== 200) throw new Error(`image server answered ${response.status} for ${url}`)
  return new Uint8Array(await response.arrayBuffer())
}

/** Fetch only, `count` times back to back (as the cache-hit runs are); returns each time in ms. */
export async function fetchSamples(url: string, caPem: string, count: number): Promise<number[]> {
  const samples: number[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    await fetchBytes(url, caPem)
    samples.push(performance.now() - started)
  }
  return samples
}

export async function prepareBytes(bytes: Uint8Array, format: BenchFormat): Promise<Uint8Array> {
  let input: Sharp
  let dir: string | null = null
  if (format === 'gif') {
    // As the GIF worker does: a frame within the side comes as PNG, a larger one as pixels to resize.
    const frame = gifFrameForModel(bytes, MAX_SIDE)
    if ('png' in frame) return frame.png
    input = sharp(frame.pixels, { raw: { width: frame.width, height: frame.height, channels: frame.channels } })
  } else {
    const options = { failOn: 'warning', autoOrient: true } as const
    input = sharp(bytes, options)
    const { width = 0, height = 0 } = format === 'jpeg' ? await input.metadata() : {}
    let shrink = 1
    while (shrink < 8 && Math.max(width, height) / (shrink * 2) >= MAX_SIDE) shrink *= 2
    if (shrink > 1) {
      dir = mkdtempSync(join(tmpdir(), 'alttext-floor-'))
      writeFileSync(join(dir, 'image.jpg'), bytes)
      input = sharp(`${join(dir, 'image.jpg')}[shrink=${shrink}]`, options)
    }
  }
  try {
    const resized = input.resize(MAX_SIDE, MAX_SIDE, { fit: 'inside', withoutEnlargement: true, kernel: 'lanczos3' })
    if (format === 'jpeg') {
      const out = await resized.jpeg({ quality: JPEG_QUALITY, optimiseCoding: false }).toBuffer()
      return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
    }
    const { data, info } = await resized.toColourspace('srgb').ensureAlpha().raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true })
    const png = await Transformer.fromRgbaPixels(data, info.width, info.height).png(PNG_OPTIONS)
    return new Uint8Array(png.buffer, png.byteOffset, png.byteLength)
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true })
  }
}

export type FloorSample = { fetchMs: number; prepareMs: number; totalMs: number }

/** One floor sample: fetch, then prepare, timed separately and together. */
export async function floorSample(url: string, caPem: string, format: BenchFormat): Promise<FloorSample> {
  const t0 = performance.now()
  const bytes = await fetchBytes(url, caPem)
  const t1 = performance.now()
  await prepareBytes(bytes, format)
  const t2 = performance.now()
  return { fetchMs: t1 - t0, prepareMs: t2 - t1, totalMs: t2 - t0 }
}
