// The OCR reader: one long-lived Worker (ocr-worker.ts) started on the first read, one image at a time
// (inference takes a whole core; the two cores of a small host are shared with the service), the
// others waiting in order. An aborted read stops waiting at once; if its image is already being read,
// the worker finishes it and the answer is dropped (terminating it would throw away the loaded models).
import { workerPath } from '../intake/worker-path.ts'
import type { OcrWorkerReply, OcrWorkerRequest } from './ocr-worker.ts'
import type { ImageText, TextReader } from './types.ts'

export type { ImageText, TextReader } from './types.ts'

/** Where onnxruntime-node has a build (runtime.ts embeds one for each): elsewhere (macOS on Intel) no OCR. */
const OCR_PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-arm64', 'win32-x64']

export function ocrAvailable(platform: string = process.platform, arch: string = process.arch): boolean {
  return OCR_PLATFORMS.includes(`${platform}-${arch}`)
}

/** Why an image could not be read: undecodable bytes, or the engine itself failing (models, runtime). */
export class TextReadError extends Error {
  constructor(
    readonly reason: 'undecodable' | 'engine',
    message: string,
  ) {
    super(message)
  }
}

export type TextReaderOptions = {
  /** A folder with an operator's recognition model (rec.onnx, dict.txt, det.onnx optional): ALTTEXT_OCR_MODELS. */
  modelsDir?: string
}

type Job = { image: Uint8Array; signal: AbortSignal; resolve: (text: ImageText | null) => void; reject: (error: unknown) => void; settled: boolean }

const aborted = (signal: AbortSignal) => signal.reason ?? new DOMException('The OCR read was aborted', 'AbortError')

export function createTextReader(options: TextReaderOptions = {}): TextReader {
  const waiting: Job[] = []
  let worker: Worker | null = null
  let running: Job | null = null
  let closed = false

  const settle = (job: Job, outcome: { text: ImageText | null } | { error: unknown }) => {
    if (job.settled) return
    job.settled = true
    if ('error' in outcome) job.reject(outcome.error)
    else job.resolve(outcome.text)
  }

  const next = () => {
    if (running || closed) return
    let job = waiting.shift()
    while (job?.settled) job = waiting.shift()
    if (!job) return
    running = job
    if (!worker) {
      worker = new Worker(workerPath('ocr-worker'))
    }
    const current = worker
    // A read under way keeps the process alive (a command awaits it); an idle reader does not.
    current.ref()
    const finish = () => {
      current.unref()
      running = null
      next()
    }
    current.onmessage = (event: MessageEvent<OcrWorkerReply>) => {
      const reply = event.data
      if (reply.ok) settle(job, { text: reply.text })
      else settle(job, { error: new TextReadError(reply.undecodable ? 'undecodable' : 'engine', reply.reason) })
      finish()
    }
    current.onerror = (event: ErrorEvent) => {
      settle(job, { error: new TextReadError('engine', `the OCR worker failed: ${event.message}`) })
      current.terminate()
      worker = null
      finish()
    }
    // A transferred copy: the caller's bytes stay usable.
    const copy = job.image.slice()
    const request: OcrWorkerRequest = { image: copy, modelsDir: options.modelsDir }
    current.postMessage(request, [copy.buffer])
  }

  return {
    read(image, signal) {
      if (closed) return Promise.reject(new TextReadError('engine', 'the OCR reader is closed'))
      if (signal.aborted) return Promise.reject(aborted(signal))
      return new Promise<ImageText | null>((resolve, reject) => {
        const job: Job = { image, signal, resolve, reject, settled: false }
        const onAbort = () => settle(job, { error: aborted(signal) })
        signal.addEventListener('abort', onAbort, { once: true })
        const done = () => signal.removeEventListener('abort', onAbort)
        job.resolve = (text) => {
          done()
          resolve(text)
        }
        job.reject = (error) => {
          done()
          reject(error)
        }
        waiting.push(job)
        next()
      })
    },
    async close() {
      closed = true
      for (const job of waiting.splice(0)) settle(job, { error: new TextReadError('engine', 'the OCR reader is closed') })
      if (running) settle(running, { error: new TextReadError('engine', 'the OCR reader is closed') })
      running = null
      worker?.terminate()
      worker = null
    },
  }
}
