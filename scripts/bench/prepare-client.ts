// Child process of scenario 18 (prepare):
//   mode "latency": per image, `iterations` times: the native floor (Debian's codec tools, process
//                   start and pipes included), then one cache-miss POST /api/alt-text to each service
//                   (in turn, the order alternating), recording the service's Server-Timing `prepare`
//                   stage and the end-to-end time. Floor and service samples are seconds apart at most.
//   mode "quality": one request per service and image whose context holds `bench-keep-<service>-<image>`
//                   (the fake Ollama writes what it received to `keepDir`), then the SSIM of each image
//                   received against a reference: Lanczos3 from the full-resolution decode, in floating
//                   point (@napi-rs/image), lossless, at the same size.
//   BENCH_PREPARE='{"mode":"latency","services":[{"label","url","key"}],"images":[...],"iterations":8,"prefix":"r0"}'
// Prints one line `BENCH_RESULT {json}`. Loopback only; each request has a 30 s timeout; exits after
// 300 s whatever happens, or when its stdin closes.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { inflateSync } from 'node:zlib'
import { ResizeFilterType, ResizeFit, Transformer } from '@napi-rs/image'
import { ssim } from 'ssim.js'
import { decodeGif } from '../../test/support/images'
import { boundLifetime } from './lib/child'
import { loopback } from './lib/common'
import type { BenchFormat } from './lib/images'

export type PrepareImage = {
  /** Short name, used in contexts and file names: jpeg-3000, webp... */
  name: string
  label: string
  url: string
  /** The same file on disk, for the floor. */
  file: string
  format: BenchFormat
  width: number
  height: number
}
export type PrepareService = { label: string; url: string; key: string }
type Options = {
  mode: 'latency' | 'quality'
  services: PrepareService[]
  images: PrepareImage[]
  iterations: number
  prefix: string
  keepDir: string
  maxSide: number
  /** Debian tools by command name. */
  tools: Record<string, string>
}
export type PrepareAnswer = { ms: number; status: number; cached: boolean | null; prepareMs: number }
export type LatencyResult = Record<string, { floorMs: number[]; answers: Record<string, PrepareAnswer[]> }>
export type QualityResult = Record<string, Record<string, { ssim: number; width: number; height: number; bytes: number } | { error: string }>>

boundLifetime('prepare-client.ts', 300_000)
const options = JSON.parse(process.env.BENCH_PREPARE ?? '{}') as Options

async function altText(service: PrepareService, image: PrepareImage, context: string): Promise<PrepareAnswer> {
  const started = performance.now()
  try {
    const response = await fetch(loopback(`${service.url}/api/alt-text`), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.key },
      body: JSON.stringify({ image_url: image.url, context }),
      signal: AbortSignal.timeout(30_000),
    })
    const body = (await response.json().catch(() => ({}))) as { cached?: boolean }
    const ms = performance.now() - started
    const stage = (response.headers.get('server-timing') ?? '').match(/(?:^|,\s*)prepare;dur=([\d.]+)/)
    return { ms, status: response.status, cached: body.cached ?? null, prepareMs: stage ? Number(stage[1]) : Number.NaN }
  } catch {
    return { ms: performance.now() - started, status: 0, cached: null, prepareMs: Number.NaN }
  }
}

/** The size the model gets: the longest side at most maxSide, as the service computes it. */
function fitted(image: PrepareImage): { width: number; height: number } {
  const scale = Math.min(1, options.maxSide / Math.max(image.width, image.height))
  return { width: Math.round(image.width * scale), height: Math.round(image.height * scale) }
}

/** Runs `first | second` and waits for both; the output is read and dropped. */
async function pipeline(first: string[], second: string[] | null): Promise<void> {
  const a = Bun.spawn(first, { stdout: 'pipe', stderr: 'ignore' })
  const b = second ? Bun.spawn(second, { stdin: a.stdout, stdout: 'pipe', stderr: 'ignore' }) : a
  await new Response(b.stdout).arrayBuffer()
  const codes = await Promise.all([a.exited, b.exited])
  if (codes.some((code) => code !== 0)) throw new Error(`floor failed: ${first.join(' ')}${second ? ` | ${second.join(' ')}` : ''} (exit ${codes.join(', ')})`)
}

/** A PNG decode in a bare script: zlib inflates (natively) the IDAT data, then the rows are unfiltered. */
function decodePng(bytes: Uint8Array): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  const channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[bytes[25]!] ?? 4
  const parts: Uint8Array[] = []
  for (let at = 8; at < bytes.length; ) {
    const length = view.getUint32(at)
    if (String.fromCharCode(...bytes.subarray(at + 4, at + 8)) === 'IDAT') parts.push(bytes.subarray(at + 8, at + 8 + length))
    at += 12 + length
  }
  const raw = inflateSync(Buffer.concat(parts))
  const stride = width * channels
  const out = new Uint8Array(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!
    const row = y * stride
    const input = y * (stride + 1) + 1
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? out[row + x - channels]! : 0
      const up = y > 0 ? out[row - stride + x]! : 0
      const upLeft = y > 0 && x >= channels ? out[row - stride + x - channels]! : 0
      let predicted = 0
      if (filter === 1) predicted = left
      else if (filter === 2) predicted = up
      else if (filter === 3) predicted = (left + up) >> 1
      else if (filter === 4) {
        const p = left + up - upLeft
        const pa = Math.abs(p - left)
        const pb = Math.abs(p - up)
        const pc = Math.abs(p - upLeft)
        predicted = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft
      }
      out[row + x] = (raw[input + x]! + predicted) & 0xff
    }
  }
  return out
}

/** The floor of one image: its format's native decoder (and encoder), as a shell pipeline would run them. */
async function floor(image: PrepareImage): Promise<void> {
  const { djpeg, cjpeg, dwebp, giftopnm } = options.tools
  switch (image.format) {
    case 'jpeg': {
      // The largest DCT scale (1/2, 1/4, 1/8) that still covers the wanted size, as libjpeg-turbo offers it.
      let denominator = 1
      while (denominator < 8 && Math.max(image.width, image.height) / (denominator * 2) >= options.maxSide) denominator *= 2
      await pipeline([djpeg!, '-scale', `1/${denominator}`, image.file], [cjpeg!, '-quality', '85'])
      return
    }
    case 'webp': {
      const size = fitted(image)
      await pipeline([dwebp!, '-scale', String(size.width), String(size.height), '-ppm', '-o', '-', image.file], [cjpeg!, '-quality', '85'])
      return
    }
    case 'png':
      decodePng(new Uint8Array(readFileSync(image.file)))
      return
    case 'gif':
      await pipeline([giftopnm!, image.file], null)
      return
  }
}

async function latency(): Promise<LatencyResult> {
  const result: LatencyResult = {}
  for (const image of options.images) {
    const entry = { floorMs: [] as number[], answers: Object.fromEntries(options.services.map((s) => [s.label, [] as PrepareAnswer[]])) }
    result[image.name] = entry
    for (let i = 0; i < options.iterations; i++) {
      const started = performance.now()
      await floor(image)
      entry.floorMs.push(performance.now() - started)
      const order = i % 2 === 0 ? options.services : [...options.services].reverse()
      for (const service of order) entry.answers[service.label]!.push(await altText(service, image, `${options.prefix}-${image.name}-${i}`))
    }
  }
  return result
}

type Rgba = { data: Uint8ClampedArray; width: number; height: number }

/** 8-bit pixels of any channel count, as RGBA (what ssim.js reads). */
async function rgbaOf(transformer: Transformer): Promise<Rgba> {
  const { width, height } = await transformer.metadata()
  const raw = await transformer.rawPixels()
  const channels = raw.length / (width * height)
  if (!Number.isInteger(channels) || channels < 1 || channels > 4) throw new Error(`unexpected pixel layout: ${raw.length} bytes for ${width}×${height}`)
  const data = new Uint8ClampedArray(width * height * 4)
  for (let i = 0, o = 0; i < raw.length; i += channels, o += 4) {
    const grey = channels < 3
    data[o] = raw[i]!
    data[o + 1] = raw[grey ? i : i + 1]!
    data[o + 2] = raw[grey ? i : i + 2]!
    data[o + 3] = channels === 4 || channels === 2 ? raw[i + channels - 1]! : 255
  }
  return { data, width, height }
}

/** The source at full resolution, upright (a GIF: its first frame, decoded by the tests' reference decoder). */
function sourceOf(image: PrepareImage): Transformer {
  const bytes = new Uint8Array(readFileSync(image.file))
  if (image.format !== 'gif') return new Transformer(bytes).rotate()
  const frame = decodeGif(bytes).frames[0]!
  return Transformer.fromRgbaPixels(frame.rgba, image.width, image.height)
}

async function quality(): Promise<QualityResult> {
  const result: QualityResult = {}
  for (const image of options.images) {
    result[image.name] = {}
    for (const service of options.services) {
      const answer = await altText(service, image, `${options.prefix} bench-keep-${service.label}-${image.name}`)
      if (answer.status !== 200) result[image.name]![service.label] = { error: `answered ${answer.status}` }
    }
    for (const service of options.services) {
      if (result[image.name]![service.label]) continue
      try {
        const received = new Uint8Array(readFileSync(join(options.keepDir, `${service.label}-${image.name}.img`)))
        const got = await rgbaOf(new Transformer(received))
        const reference = await rgbaOf(sourceOf(image).resize(got.width, got.height, ResizeFilterType.Lanczos3, ResizeFit.Fill))
        const score = ssim(reference, got, { ssim: 'original' }).mssim
        result[image.name]![service.label] = { ssim: score, width: got.width, height: got.height, bytes: received.byteLength }
      } catch (error) {
        result[image.name]![service.label] = { error: error instanceof Error ? error.message : String(error) }
      }
    }
  }
  return result
}

const result = options.mode === 'latency' ? await latency() : await quality()
console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
process.exit(0)
