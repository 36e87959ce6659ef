// The one downscaling rule, shared by prepare.ts and the GIF worker so both paths give the model
// the same picture.
import { ResizeFilterType, ResizeFit, type Transformer } from '@napi-rs/image'

/** Queues a downscale so the longest side is at most maxSide; smaller images are left alone. */
export function fitWithin(transformer: Transformer, width: number, height: number, maxSide: number): Transformer {
  // A square box with "inside" fit keeps the aspect ratio whatever the orientation.
  if (Math.max(width, height) > maxSide) transformer.resize(maxSide, maxSide, ResizeFilterType.Lanczos3, ResizeFit.Inside)
  return transformer
}
