// Worker entry: decodes the first frame of a GIF (gif-frame.ts), so a large GIF costs a worker thread,
// not the event loop. A frame within maxSide comes back as PNG; a larger one as pixels for prepare.ts
// to resize with sharp, as every format. Either is handed back without a copy (its buffer is transferred).
//
// A `bun build --compile` binary must list this file as an extra entrypoint (see worker-path.ts).
import { type GifFrame, gifFrameForModel } from './gif-frame.ts'

export type GifWorkerRequest = { bytes: Uint8Array; maxSide: number }
/** The frame; or why it could not be decoded. */
export type GifWorkerReply = ({ ok: true } & GifFrame) | { ok: false; reason: string }

declare var self: Worker

self.onmessage = (event: MessageEvent<GifWorkerRequest>) => {
  let frame: GifFrame
  try {
    frame = gifFrameForModel(event.data.bytes, event.data.maxSide)
  } catch (error) {
    const reply: GifWorkerReply = { ok: false, reason: error instanceof Error ? error.message : String(error) }
    self.postMessage(reply)
    return
  }
  const reply: GifWorkerReply = { ok: true, ...frame }
  self.postMessage(reply, ['png' in frame ? frame.png.buffer : frame.pixels.buffer])
}
