// The one downscaling rule, for every format (GIF frames included), so the model gets the same
// picture whatever the source.
import type { Sharp as SharpPipeline } from 'sharp'

/**
 * Catmull-Rom: as sharp as Lanczos at a third less work, and the model resizes again anyway (llava to
 * 336/672 px, Qwen-VL to patches of 28 px). The figures are in docs/performance.md.
 */
const KERNEL = 'cubic'

/** Downscales so the longest side is at most maxSide; smaller images are left alone. */
export function fitWithin(pipeline: SharpPipeline, maxSide: number): SharpPipeline {
  // A square box with "inside" fit keeps the aspect ratio whatever the orientation.
  return pipeline.resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true, kernel: KERNEL })
}
