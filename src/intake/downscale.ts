// The one downscaling rule, for every format (GIF frames included), so the model gets the same
// picture whatever the source.
import type { Sharp as SharpPipeline } from 'sharp'

/**
 * Lanczos3, the filter used before sharp: libvips runs it with SIMD on the already reduced decode, a
 * few milliseconds, and it keeps the picture closest to a full-resolution resize (SSIM in
 * docs/performance.md); Catmull-Rom saved no measurable time and blurred fine stripes.
 */
const KERNEL = 'lanczos3'

/**
 * The scale (1 for none, 2, 4 or 8) at which to decode a JPEG, in the DCT: the smallest that still
 * leaves its longest side at least maxSide, so the resize after it only ever reduces.
 */
export function jpegShrink(width: number, height: number, maxSide: number): number {
  let shrink = 1
  while (shrink < 8 && Math.max(width, height) / (shrink * 2) >= maxSide) shrink *= 2
  return shrink
}

/**
 * Downscales so the longest side is at most maxSide; smaller images are left alone. A WebP is scaled
 * by libwebp while it is decoded (sharp's shrink-on-load).
 */
export function fitWithin(pipeline: SharpPipeline, maxSide: number): SharpPipeline {
  // A square box with "inside" fit keeps the aspect ratio whatever the orientation.
  return pipeline.resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true, kernel: KERNEL })
}
