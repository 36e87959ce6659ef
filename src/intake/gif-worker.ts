// Worker entry: decodes the first frame of a GIF (gif-frame.ts reduces it while drawing), so a large
// GIF costs a worker thread, not the event loop. A frame already within maxSide is encoded here as
// PNG, which saves handing it back and forth; a larger one is handed back without a copy (its buffer
// is transferred) for prepare.ts to resize with sharp, as every format.
//
// A `bun build --compile` binary must list this file as an extra entrypoint (see worker-path.ts).
import { CompressionType, FilterType, Transformer } from '@napi-rs/image'
import { firstGifFrame, type GifCanvas } from './gif-frame.ts'

export type GifWorkerRequest = { bytes: Uint8Array; maxSide: number }
/** The frame as PNG when it needed no resize, else the frame itself; or why it could not be decoded. */
export type GifWorkerReply = { ok: true; png: Uint8Array; width: number; height: number } | { ok: true; frame: GifCanvas } | { ok: false; reason: string }

/**
 * A frame as drawn is art of at most 256 colours: full deflate finds its long runs at once (5 ms and
 * 14 KB at 800×600, where the fast deflate of prepare.ts makes 570 KB).
 */
const GIF_PNG_OPTIONS = { compressionType: CompressionType.Default, filterType: FilterType.NoFilter }

declare var self: Worker

self.onmessage = (event: MessageEvent<GifWorkerRequest>) => {
  let frame: GifCanvas
  try {
    frame = firstGifFrame(event.data.bytes, event.data.maxSide)
  } catch (error) {
    const reply: GifWorkerReply = { ok: false, reason: error instanceof Error ? error.message : String(error) }
    self.postMessage(reply)
    return
  }
  if (Math.max(frame.width, frame.height) > event.data.maxSide) {
    const reply: GifWorkerReply = { ok: true, frame }
    self.postMessage(reply, [frame.rgba.buffer])
    return
  }
  const encoded = Transformer.fromRgbaPixels(frame.rgba, frame.width, frame.height).pngSync(GIF_PNG_OPTIONS)
  // Copied, not transferred: the addon's buffers are external memory, which cannot be transferred; a
  // PNG of at most maxSide² pixels is small.
  const reply: GifWorkerReply = {
    ok: true,
    png: new Uint8Array(encoded.buffer, encoded.byteOffset, encoded.byteLength),
    width: frame.width,
    height: frame.height,
  }
  self.postMessage(reply)
}
