// Worker entry: the OCR engine, off the event loop. The first request loads ONNX Runtime and the models
// (so a service that reads no image never holds them); each request then decodes one image with sharp
// and reads it. One image at a time: the pool (index.ts) sends the next only after a reply.
//
// A `bun build --compile` binary must list this file as an extra entrypoint (see src/intake/worker-path.ts).
import { openCodec } from '../intake/codec.ts'
import { modelFiles, OcrEngine } from './engine.ts'
import { loadOnnxRuntime } from './runtime.ts'
import type { ImageText } from './types.ts'

export type OcrWorkerRequest = { image: Uint8Array; modelsDir?: string }
/** The text (null: none); or why the image could not be read. */
export type OcrWorkerReply = { ok: true; text: ImageText | null } | { ok: false; reason: string; undecodable: boolean }

declare var self: Worker

/** The largest side read at full resolution: the service's images are 1024 px, and memory stays bounded. */
const MAX_SIDE = 2048

let engine: Promise<OcrEngine> | undefined
const codec = openCodec()

async function read(request: OcrWorkerRequest): Promise<OcrWorkerReply> {
  let pixels: { data: Uint8Array; width: number; height: number }
  try {
    const { data, info } = await codec
      .sharp(request.image, { limitInputPixels: 50_000_000 })
      .rotate()
      .resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true })
    if (info.channels !== 3) throw new Error(`unexpected ${info.channels} channels`)
    pixels = { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height }
  } catch (error) {
    return { ok: false, undecodable: true, reason: `the image could not be decoded: ${error instanceof Error ? error.message : String(error)}` }
  }
  try {
    engine ??= loadOnnxRuntime().then((ort) => OcrEngine.load(ort, modelFiles(request.modelsDir)))
    return { ok: true, text: await (await engine).read(pixels) }
  } catch (error) {
    return { ok: false, undecodable: false, reason: error instanceof Error ? error.message : String(error) }
  }
}

self.onmessage = (event: MessageEvent<OcrWorkerRequest>) => {
  void read(event.data).then((reply) => self.postMessage(reply))
}
