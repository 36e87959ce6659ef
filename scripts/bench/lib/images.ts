// The benchmark's images, made at run time (no binary fixtures in the repo), written to a folder that
// the HTTPS image server serves. A gradient with a checker and seeded noise: the noise gives a JPEG
// a photo-like size (a flat pattern would compress to a fraction of a real 6-megapixel photo).
import { Transformer } from '@napi-rs/image'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ImageFormat } from '../../../src/intake/index.ts'
import { makeAnimatedGif, makePng } from '../../../test/support/images'
// The same bombs the tests use: one generator for both.
import { gifBomb, pngBomb } from '../../../test/support/images'

export type BenchFormat = ImageFormat

export type BenchImage = {
  /** Path on the image server, e.g. "/photo.jpg". */
  path: string
  label: string
  format: BenchFormat
  width: number
  height: number
  bytes: number
}

/** RGBA: horizontal/vertical gradients, an 8-pixel checker, and per-channel noise of ±amplitude. */
function photoRgba(width: number, height: number, amplitude: number, seed: number): Uint8Array {
  const pixels = new Uint8Array(width * height * 4)
  let state = seed >>> 0
  const noise = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return (((state >>> 24) - 128) * amplitude) / 128
  }
  const clamp = (v: number) => (v < 0 ? 0 : Math.min(v, 255))
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4
      const checker = ((x >> 3) + (y >> 3)) % 2 === 0 ? 0 : 96
      pixels[o] = clamp((x * 255) / (width - 1) + noise())
      pixels[o + 1] = clamp((y * 255) / (height - 1) + noise())
      pixels[o + 2] = clamp(128 + checker + noise())
      pixels[o + 3] = 255
    }
  }
  return pixels
}

export type BenchImages = {
  /** Scenarios 2, 3 and 6: one of each accepted format. */
  intake: BenchImage[]
  /** Scenario 4: a small image, so the queue (not the intake) is what is measured. */
  small: BenchImage
  /** Scenario 5: a ~9 MB 12-megapixel JPEG (the limit is 10 MiB). */
  large: BenchImage
  /** Scenario 18: an animated GIF larger than the model's side, so its frame is downscaled. */
  largeGif: BenchImage
}

export function makeBenchImages(dir: string): BenchImages {
  mkdirSync(dir, { recursive: true })
  const write = (path: string, label: string, format: BenchFormat, width: number, height: number, data: Uint8Array): BenchImage => {
    writeFileSync(join(dir, path.slice(1)), data)
    return { path, label, format, width, height, bytes: data.byteLength }
  }
  const jpeg = (w: number, h: number, amplitude: number, seed: number) => Transformer.fromRgbaPixels(photoRgba(w, h, amplitude, seed), w, h).jpegSync(85)

  const intake = [
    // ~2.0 MB: what a phone or camera photo of 6 megapixels weighs.
    write('/photo.jpg', 'JPEG 3000×2000', 'jpeg', 3000, 2000, jpeg(3000, 2000, 15, 1)),
    write('/screenshot.png', 'PNG 2000×1500', 'png', 2000, 1500, Transformer.fromRgbaPixels(photoRgba(2000, 1500, 0, 2), 2000, 1500).pngSync()),
    write('/picture.webp', 'WebP 2000×1500', 'webp', 2000, 1500, Transformer.fromRgbaPixels(photoRgba(2000, 1500, 12, 3), 2000, 1500).webpSync(80)),
    write('/animation.gif', 'GIF 800×600, 3 frames', 'gif', 800, 600, makeAnimatedGif(800, 600, 3)),
  ]
  const small = write('/small.png', 'PNG 640×480', 'png', 640, 480, makePng(640, 480))
  const large = write('/large.jpg', 'JPEG 4000×3000', 'jpeg', 4000, 3000, jpeg(4000, 3000, 32, 4))
  const largeGif = write('/large.gif', 'GIF 2000×1500, 3 frames', 'gif', 2000, 1500, makeAnimatedGif(2000, 1500, 3))
  return { intake, small, large, largeGif }
}

/** Scenario 7: a PNG and a GIF of `side`×`side` pixels of one colour (see bombs.ts). */
export function writeBombImages(dir: string, side: number): { png: BenchImage; gif: BenchImage } {
  mkdirSync(dir, { recursive: true })
  const png = pngBomb(side, side)
  const gif = gifBomb(side, side)
  writeFileSync(join(dir, 'bomb.png'), png)
  writeFileSync(join(dir, 'bomb.gif'), gif)
  return {
    png: { path: '/bomb.png', label: `PNG bomb ${side}×${side}`, format: 'png', width: side, height: side, bytes: png.byteLength },
    gif: { path: '/bomb.gif', label: `GIF bomb ${side}×${side}`, format: 'gif', width: side, height: side, bytes: gif.byteLength },
  }
}
