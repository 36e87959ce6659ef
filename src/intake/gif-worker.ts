// Worker entry: decodes the first frame of a GIF (gif-frame.ts reduces it while drawing), so a large
// GIF costs a worker thread, not the event loop. The canvas is handed back without a copy (its
// buffer is transferred); prepare.ts resizes and encodes it on sharp's threads, as every format.
//
// A `bun build --compile` binary must list this file as an extra entrypoint (see worker-path.ts).
import { firstGifFrame, type GifCanvas } from './gif-frame.ts'

export type GifWorkerRequest = { bytes: Uint8Array; maxSide: number }
export type GifWorkerReply = { ok: true; frame: GifCanvas } | { ok: false; reason: string }

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
  const reply: GifWorkerReply = { ok: true, frame }
  self.postMessage(reply, [frame.rgba.buffer])
}
