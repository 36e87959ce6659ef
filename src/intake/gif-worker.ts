// Worker entry: turns a GIF into the PNG the model gets (first frame, decoded and reduced by
// gif-frame.ts, then resized and encoded with @napi-rs/image's synchronous calls), so a large GIF
// costs a worker thread, not the event loop. Encoding here rather than on @napi-rs/image's thread
// pool saves a hand-off between threads and the copy of the canvas back to the parent.
//
// A `bun build --compile` binary must list this file as an extra entrypoint (see worker-path.ts).
import { Transformer } from '@napi-rs/image'
import { fitWithin } from './downscale.ts'
import { firstGifFrame } from './gif-frame.ts'

export type GifWorkerRequest = { bytes: Uint8Array; maxSide: number }
export type GifWorkerReply = { ok: true; png: Uint8Array } | { ok: false; reason: string }

declare var self: Worker

function gifToPng(bytes: Uint8Array, maxSide: number): GifWorkerReply {
  const { rgba, width, height } = firstGifFrame(bytes, maxSide)
  const encoded = fitWithin(Transformer.fromRgbaPixels(rgba, width, height), width, height, maxSide).pngSync()
  return { ok: true, png: new Uint8Array(encoded.buffer, encoded.byteOffset, encoded.byteLength) }
}

self.onmessage = (event: MessageEvent<GifWorkerRequest>) => {
  let reply: GifWorkerReply
  try {
    reply = gifToPng(event.data.bytes, event.data.maxSide)
  } catch (error) {
    reply = { ok: false, reason: error instanceof Error ? error.message : String(error) }
  }
  // Copied, not transferred: the addon's buffers are external memory, which cannot be transferred; a
  // PNG of at most maxSide² pixels is small.
  self.postMessage(reply)
}
