// Worker entry: turns a GIF into the PNG the model gets — first frame decoded to RGBA with omggif
// (pure JS), downscaled and encoded with @napi-rs/image's synchronous calls — so a large or hostile
// GIF costs a worker thread, not the event loop. Encoding here rather than on @napi-rs/image's
// thread pool saves a hand-off between threads (~0.5 ms of a 2 ms encode, measured) and the copy of
// the decoded frame back to the parent. The parent terminates the worker on a deadline, which also
// ends a decoder stuck in a malformed LZW stream.
//
// A `bun build --compile` binary must list this file as an extra entrypoint (see
// gif-decode.ts for how the parent finds it there).
import { Transformer } from '@napi-rs/image'
import { GifReader } from 'omggif'
import { fitWithin } from './downscale.ts'

export type GifWorkerRequest = { bytes: Uint8Array; maxSide: number }
export type GifWorkerReply = { ok: true; png: Uint8Array } | { ok: false; reason: string }

declare var self: Worker

// omggif reports a short LZW stream only through console.log; catch it as a corrupt image.
const decoderWarnings: string[] = []
console.log = (...parts: unknown[]): void => {
  decoderWarnings.push(parts.map(String).join(' '))
}

function gifToPng(bytes: Uint8Array, maxSide: number): GifWorkerReply {
  const reader = new GifReader(bytes)
  if (reader.numFrames() < 1) return { ok: false, reason: 'GIF has no frame' }
  const { width, height } = reader
  const rgba = new Uint8Array(width * height * 4)
  decoderWarnings.length = 0
  reader.decodeAndBlitFrameRGBA(0, rgba)
  const shortStream = decoderWarnings.find((warning) => /shorter than expected/.test(warning))
  if (shortStream !== undefined) return { ok: false, reason: 'GIF image data ends early' }
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
  // Copied, not transferred: the addon's buffers are external memory, which cannot be transferred, and
  // a PNG of at most maxSide² pixels is small next to the frame that is no longer sent.
  self.postMessage(reply)
}
