// Runs gif-worker.ts in a small pool of long-lived Workers (starting one costs more than decoding a
// typical GIF), a few at once. A worker that timed out, was aborted or crashed is terminated, never
// reused; close() terminates them all.
import { Capacity, type Release } from './capacity.ts'
import type { GifFrame } from './gif-frame.ts'
import type { GifWorkerReply, GifWorkerRequest } from './gif-worker.ts'
import { capacityError, closedError } from './refusals.ts'
import { workerPath } from './worker-path.ts'

/** Why a decode failed; the caller maps both to refusals. */
export class GifDecodeError extends Error {
  constructor(
    readonly reason: 'corrupt' | 'timeout',
    message: string,
  ) {
    super(message)
  }
}

const GIF_WORKERS = 2

export class GifDecoders {
  private readonly workers: Capacity
  private readonly idle: Worker[] = []
  /** Each busy worker and how to fail the decode it runs. */
  private readonly busy = new Map<Worker, (error: Error) => void>()
  private closed = false

  constructor(onChange?: () => void) {
    this.workers = new Capacity(GIF_WORKERS, onChange)
  }

  get waiting(): number {
    return this.workers.waiting
  }

  /**
   * The first frame of a GIF as gifFrameForModel(…, maxSide) gives it: as PNG when it is within
   * maxSide, else as pixels to resize. Rejects with GifDecodeError for undecodable data or when `timeoutMs`
   * passes, and with capacityError() when `signal` aborts first (the worker is terminated then).
   */
  async firstFrame(bytes: Uint8Array, maxSide: number, timeoutMs: number, signal?: AbortSignal): Promise<GifFrame> {
    const path = workerPath('gif-worker')
    const release = await this.workers.acquire(1, signal, capacityError)
    let worker: Worker
    try {
      worker = this.take(path)
    } catch (error) {
      release()
      throw error
    }
    return this.run(worker, release, bytes, maxSide, timeoutMs, signal)
  }

  private take(path: string): Worker {
    if (this.closed) throw closedError()
    const worker = this.idle.pop() ?? new Worker(path)
    // An idle pooled worker must not keep the process alive at shutdown.
    worker.unref()
    this.busy.set(worker, () => {})
    return worker
  }

  private async run(worker: Worker, release: Release, bytes: Uint8Array, maxSide: number, timeoutMs: number, signal?: AbortSignal): Promise<GifFrame> {
    let timer: ReturnType<typeof setTimeout> | undefined
    let onAbort: (() => void) | undefined
    // Only a worker that answered (a frame, or "corrupt") goes back to the pool.
    let answered = false
    try {
      return await new Promise<GifFrame>((resolve, reject) => {
        if (signal?.aborted) {
          reject(capacityError())
          return
        }
        onAbort = () => reject(capacityError())
        signal?.addEventListener('abort', onAbort, { once: true })
        timer = setTimeout(() => reject(new GifDecodeError('timeout', `GIF decoding did not finish within ${timeoutMs} ms`)), timeoutMs)
        worker.onmessage = (event: MessageEvent<GifWorkerReply>) => {
          answered = true
          const reply = event.data
          if (reply.ok) resolve(reply)
          else reject(new GifDecodeError('corrupt', reply.reason))
        }
        worker.onerror = (event: ErrorEvent) => reject(new Error(`GIF decoder worker failed: ${event.message}`))
        this.busy.set(worker, reject)
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
      this.busy.delete(worker)
      if (answered && !this.closed) this.idle.push(worker)
      else worker.terminate()
      release()
    }
  }

  /** Terminates every worker, busy or idle; decodes under way reject, waiting ones are refused. */
  close(): void {
    this.closed = true
    this.workers.close(closedError())
    for (const worker of this.idle.splice(0)) worker.terminate()
    for (const [worker, fail] of this.busy) {
      fail(closedError())
      worker.terminate()
    }
    this.busy.clear()
  }
}
