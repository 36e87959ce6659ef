// Runs gif-worker.ts in a small pool of long-lived Workers (starting one costs ~10-20 ms, more
// than decoding a typical GIF), at most a few at once to bound memory. A worker that timed out,
// was aborted or crashed is terminated, never reused: it may be stuck in a hostile LZW stream.
import type { GifWorkerReply, GifWorkerRequest } from './gif-worker.ts'
import { Slots } from './slots.ts'
import { workerPath } from './worker-path.ts'

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

export const gifWorkerPath = (): string => workerPath('gif-worker')

const slots = new Slots(MAX_CONCURRENT_GIF_DECODES)
const idleWorkers: Worker[] = []

function takeWorker(path: string): Worker {
  const idle = idleWorkers.pop()
  if (idle) return idle
  const worker = new Worker(path)
  // An idle pooled worker must not keep the process alive at shutdown.
  worker.unref()
  return worker
}

/**
 * The first frame of a GIF (on a canvas of the logical screen's size), downscaled to at most
 * `maxSide`, as PNG. Rejects with GifDecodeError for undecodable data or when `timeoutMs` passes,
 * and with `signal.reason` when the signal aborts.
 */
export async function gifFirstFrameAsPng(bytes: Uint8Array, maxSide: number, timeoutMs: number, signal?: AbortSignal): Promise<Uint8Array> {
  const path = gifWorkerPath()
  await slots.acquire(signal)
  const worker = takeWorker(path)
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  // Only a worker that answered (a frame, or "corrupt") goes back to the pool.
  let answered = false
  try {
    return await new Promise<Uint8Array>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason)
        return
      }
      onAbort = () => reject(signal?.reason)
      signal?.addEventListener('abort', onAbort, { once: true })
      timer = setTimeout(() => reject(new GifDecodeError('timeout', `GIF decoding did not finish within ${timeoutMs} ms`)), timeoutMs)
      worker.onmessage = (event: MessageEvent<GifWorkerReply>) => {
        answered = true
        const reply = event.data
        if (reply.ok) resolve(reply.png)
        else reject(new GifDecodeError('corrupt', reply.reason))
      }
      worker.onerror = (event: ErrorEvent) => reject(new Error(`GIF decoder worker failed: ${event.message}`))
      // A transferred copy: cheaper than the structured clone of the caller's bytes, which stay usable.
      const copy = bytes.slice()
      const request: GifWorkerRequest = { bytes: copy, maxSide }
      worker.postMessage(request, [copy.buffer])
    })
  } finally {
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
    worker.onmessage = null
    worker.onerror = null
    if (answered) idleWorkers.push(worker)
    else worker.terminate()
    slots.release()
  }
}
