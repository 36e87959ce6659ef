// Worker entry: decodes the first frame of a GIF to RGBA with omggif (pure JS), so a large
// or hostile GIF costs a worker thread, not the event loop. The parent terminates it on a
// deadline, which also ends a decoder stuck in a malformed LZW stream.
//
// A `bun build --compile` binary must list this file as an extra entrypoint (see
// gif-decode.ts for how the parent finds it there).
import { GifReader } from 'omggif'

export type GifWorkerRequest = { bytes: Uint8Array }
export type GifWorkerReply =
  | { ok: true; width: number; height: number; rgba: Uint8Array }
  | { ok: false; reason: string }

declare var self: Worker

// omggif reports a short LZW stream only through console.log; catch it as a corrupt image.
const decoderWarnings: string[] = []
console.log = (...parts: unknown[]): void => {
  decoderWarnings.push(parts.map(String).join(' '))
}

function decodeFirstFrame(bytes: Uint8Array): GifWorkerReply {
  const reader = new GifReader(bytes)
  if (reader.numFrames() < 1) return { ok: false, reason: 'GIF has no frame' }
  const rgba = new Uint8Array(reader.width * reader.height * 4)
  decoderWarnings.length = 0
  reader.decodeAndBlitFrameRGBA(0, rgba)
  const shortStream = decoderWarnings.find((warning) => /shorter than expected/.test(warning))
  if (shortStream !== undefined) return { ok: false, reason: 'GIF image data ends early' }
  return { ok: true, width: reader.width, height: reader.height, rgba }
}

self.onmessage = (event: MessageEvent<GifWorkerRequest>) => {
  let reply: GifWorkerReply
  try {
    reply = decodeFirstFrame(event.data.bytes)
  } catch (error) {
    reply = { ok: false, reason: error instanceof Error ? error.message : String(error) }
  }
  if (reply.ok) self.postMessage(reply, [reply.rgba.buffer as ArrayBuffer])
  else self.postMessage(reply)
}
