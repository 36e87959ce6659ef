// An animated GIF or WebP as one picture for the model: up to four key frames, evenly spaced from the
// first to the last (cheap, and it shows how the animation starts, goes on and ends; picking the most
// different frames would mean decoding every one), side by side in reading order with a thin
// separator, the whole within maxSide. libvips decodes the frames (libnsgif for GIF, libwebp's
// demuxer for WebP), one at a time: a frame costs one canvas, however long the animation.
import type { Sharp as SharpPipeline } from 'sharp'
import type { Sharp } from './codec.ts'

/** Frames the model is shown at most. */
export const MAX_KEY_FRAMES = 4
/** Between the frames of the grid, in pixels of the grid. */
export const SEPARATOR_PIXELS = 4
/** The separator's colour: a mid grey that reads as a border against light and dark frames alike. */
export const SEPARATOR_COLOUR = { r: 128, g: 128, b: 128, alpha: 1 }
/** Where frames are transparent: white, as most pages behind an animation are. */
const BACKGROUND = { r: 255, g: 255, b: 255 }
/**
 * Canvas pixels decoded across an animation's frames: reaching frame k decodes frames 0…k (a frame
 * may draw over the ones before), and the four loads reach about 2.5× the frames considered. Only the
 * frames from the start that fit are considered for a longer or larger one.
 */
export const MAX_ANIMATION_PIXELS = 100_000_000

/** The grid: `columns`×`rows` cells of `tileWidth`×`tileHeight`, and its size with the separators. */
export type GridLayout = { columns: number; rows: number; tileWidth: number; tileHeight: number; width: number; height: number }

/** The key frames of `frames` frames of `width`×`height`: evenly spaced over those within MAX_ANIMATION_PIXELS, first and last included. */
export function keyFrameIndices(frames: number, width: number, height: number): number[] {
  const considered = Math.max(1, Math.min(frames, Math.floor(MAX_ANIMATION_PIXELS / Math.max(1, width * height))))
  const count = Math.min(MAX_KEY_FRAMES, considered)
  if (count === 1) return [0]
  return Array.from({ length: count }, (_, i) => Math.round((i * (considered - 1)) / (count - 1)))
}

/** 2 or 3 frames in one row, 4 in two rows of two; each frame scaled alike, never enlarged, so the grid fits maxSide. */
export function gridLayout(count: number, width: number, height: number, maxSide: number): GridLayout {
  const columns = count <= 3 ? count : 2
  const rows = Math.ceil(count / columns)
  const scale = Math.min(1, (maxSide - SEPARATOR_PIXELS * (columns - 1)) / (columns * width), (maxSide - SEPARATOR_PIXELS * (rows - 1)) / (rows * height))
  const tileWidth = Math.max(1, Math.floor(width * scale))
  const tileHeight = Math.max(1, Math.floor(height * scale))
  return {
    columns,
    rows,
    tileWidth,
    tileHeight,
    width: columns * tileWidth + SEPARATOR_PIXELS * (columns - 1),
    height: rows * tileHeight + SEPARATOR_PIXELS * (rows - 1),
  }
}

/** Bytes the grid holds at its peak: the file's copy, one frame decoded (and the one it draws over) with its resize, the tiles and the grid. */
export function animationPrepareBytes(fileBytes: number, width: number, height: number, maxSide: number): number {
  return 2 * fileBytes + width * height * 4 * 3 + maxSide * maxSide * 4 * 4
}

export type FrameLoad = {
  sharp: Sharp
  bytes: Uint8Array
  maxPixels: number
  /** For each frame's load, after which libvips stops it. */
  timeoutSeconds: number
}

/** One frame, flattened on white and scaled to its tile, as RGB pixels. */
async function tile(load: FrameLoad, page: number, layout: GridLayout): Promise<Buffer> {
  const frame: SharpPipeline = load.sharp(load.bytes, { page, pages: 1, limitInputPixels: load.maxPixels, failOn: 'error' })
  return frame
    .timeout({ seconds: load.timeoutSeconds })
    .resize(layout.tileWidth, layout.tileHeight, { fit: 'fill', kernel: 'lanczos3' })
    .flatten({ background: BACKGROUND })
    .removeAlpha()
    .raw()
    .toBuffer()
}

/** The key frames in a grid, as RGBA pixels (what the PNG encoder takes). The frames are decoded one after another, so one canvas is held at a time. */
export async function keyFrameGrid(
  load: FrameLoad,
  indices: number[],
  width: number,
  height: number,
  maxSide: number,
): Promise<{ rgba: Buffer; width: number; height: number }> {
  const layout = gridLayout(indices.length, width, height, maxSide)
  const tiles: { input: Buffer; raw: { width: number; height: number; channels: 3 }; left: number; top: number }[] = []
  for (const [position, page] of indices.entries()) {
    const column = position % layout.columns
    const row = Math.floor(position / layout.columns)
    tiles.push({
      input: await tile(load, page, layout),
      raw: { width: layout.tileWidth, height: layout.tileHeight, channels: 3 },
      left: column * (layout.tileWidth + SEPARATOR_PIXELS),
      top: row * (layout.tileHeight + SEPARATOR_PIXELS),
    })
  }
  const rgba = await load
    .sharp({ create: { width: layout.width, height: layout.height, channels: 4, background: SEPARATOR_COLOUR } })
    .composite(tiles)
    .raw()
    .toBuffer()
  return { rgba, width: layout.width, height: layout.height }
}
