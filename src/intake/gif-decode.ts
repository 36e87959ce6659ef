// Runs gif-worker.ts in a Worker per GIF (one-shot: terminated afterwards, on abort and on
// a time budget), with at most a few at once to bound memory.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { GifWorkerReply, GifWorkerRequest } from './gif-worker.ts'

export type DecodedFrame = { width: number; height: number; rgba: Uint8Array }

/** Why a decode failed; the caller maps `corrupt` and `timeout` to refusals. */
export class GifDecodeError extends Error {
  constructor(
    readonly reason: 'corrupt' | 'timeout',
    message: string,
  ) {
    super(message)
  }
}

const MAX_CONCURRENT_GIF_DECODES = 2

// From source (bun run, bun test) the worker file sits beside this module. In a
// `bun build --compile` binary every module is bundled into one file at /$bunfs/root/<binary>,
// and each extra entrypoint is embedded at its path relative to the entrypoints' common
// folder: `bun build src/main.ts src/intake/gif-worker.ts` puts it at intake/gif-worker.js.
const COMPILED_WORKER_CANDIDATES = ['./intake/gif-worker.js', './gif-worker.js', './src/intake/gif-worker.js']

let workerPath: string | undefined

export function gifWorkerPath(): string {
  if (workerPath !== undefined) return workerPath
  const candidates = [new URL('./gif-worker.ts', import.meta.url), ...COMPILED_WORKER_CANDIDATES.map((path) => new URL(path, import.meta.url))]
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate)
    if (existsSync(path)) {
      workerPath = path
      return path
    }
  }
  throw new Error(
    'the GIF decoder worker is missing from this build: add src/intake/gif-worker.ts as an entrypoint of `bun build --compile`',
  )
}

class Slots {
  private free: number
  private readonly waiting: Array<() => void> = []
  constructor(count: number) {
    this.free = count
  }
  async acquire(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted()
    if (this.free > 0) {
      this.free--
      return
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        const index = this.waiting.indexOf(grant)
        if (index !== -1) this.waiting.splice(index, 1)
        reject(signal?.reason)
      }
      this.waiting.push(grant)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }
  release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.free++
  }
}

const slots = new Slots(MAX_CONCURRENT_GIF_DECODES)

/**
 * The first frame of a GIF as RGBA on a canvas of the logical screen's size. Rejects with
 * GifDecodeError for undecodable data or when `timeoutMs` passes, and with `signal.reason`
 * when the signal aborts.
 */
export async function decodeGifFirstFrame(bytes: Uint8Array, timeoutMs: number, signal?: AbortSignal): Promise<DecodedFrame> {
  const path = gifWorkerPath()
  await slots.acquire(signal)
  const worker = new Worker(path)
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  try {
    return await new Promise<DecodedFrame>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason)
        return
      }
      onAbort = () => reject(signal?.reason)
      signal?.addEventListener('abort', onAbort, { once: true })
      timer = setTimeout(() => reject(new GifDecodeError('timeout', `GIF decoding did not finish within ${timeoutMs} ms`)), timeoutMs)
      worker.onmessage = (event: MessageEvent<GifWorkerReply>) => {
        const reply = event.data
        if (reply.ok) resolve({ width: reply.width, height: reply.height, rgba: reply.rgba })
        else reject(new GifDecodeError('corrupt', reply.reason))
      }
      worker.onerror = (event: ErrorEvent) => reject(new Error(`GIF decoder worker failed: ${event.message}`))
      const request: GifWorkerRequest = { bytes }
      worker.postMessage(request)
    })
  } finally {
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
    worker.terminate()
    slots.release()
  }
}
