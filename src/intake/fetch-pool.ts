// Where each download (one hop) runs. A hop while no other is under way runs in this thread: the two
// thread hand-offs of a worker would cost a good part of a small download, and one download at a time
// (hashed in bounded turns, see hop.ts) leaves the event loop free. Hops that overlap run in a small
// pool of long-lived workers (fetch-worker.ts), so a burst of large images does not load this thread;
// where the worker is missing from a build, in this thread too.
import type { FetchWorkerReply, FetchWorkerRequest } from './fetch-worker.ts'
import { HashTurns, requestOnce, type CheckedAddress, type HopLimits, type HopOutcome } from './hop.ts'
import { closedError, deadlineError, invalidImageUrl } from './refusals.ts'
import { workerPath } from './worker-path.ts'

const FETCH_WORKERS = 2

type PendingHop = { worker: Worker; resolve: (outcome: HopOutcome) => void; reject: (error: unknown) => void }

export type FetchPoolOptions = HopLimits & {
  /** Whether a hop while no other is under way runs in this thread; tests say 'never' to reach the workers. */
  placement: 'when-alone' | 'never'
}

export class FetchPool {
  private readonly limits: HopLimits
  private readonly turns = new HashTurns()
  private hopsInThread = 0
  private readonly pending = new Map<number, PendingHop>()
  private workers: Worker[] | null = null
  /** The workers that hold the CA list already (it is posted once per worker). */
  private readonly haveCa = new WeakSet<Worker>()
  private nextWorker = 0
  private nextHopId = 0
  private closed = false
  /** Ends the downloads running in this thread when the pool closes. */
  private readonly closing = new AbortController()

  constructor(private readonly options: FetchPoolOptions) {
    this.limits = { ca: options.ca, maxBytes: options.maxBytes, connectTimeoutMs: options.connectTimeoutMs }
  }

  hop(url: URL, addresses: CheckedAddress[], signal: AbortSignal): Promise<HopOutcome> {
    if (this.closed) return Promise.reject(closedError())
    if (this.options.placement === 'when-alone' && this.hopsInThread === 0 && this.pending.size === 0) return this.hopInThread(url, addresses, signal)
    const worker = this.pickWorker()
    if (worker === null) return this.hopInThread(url, addresses, signal)
    if (signal.aborted) return Promise.reject(deadlineError())
    return this.hopInWorker(worker, url, addresses, signal)
  }

  /** Terminates the workers and ends the downloads in this thread; hops under way reject. */
  async close(): Promise<void> {
    this.closed = true
    this.closing.abort()
    for (const [id, pending] of this.pending) {
      this.pending.delete(id)
      pending.reject(closedError())
    }
    for (const worker of this.workers ?? []) worker.terminate()
    this.workers = []
  }

  private async hopInThread(url: URL, addresses: CheckedAddress[], signal: AbortSignal): Promise<HopOutcome> {
    this.hopsInThread++
    try {
      return await requestOnce(url, addresses, this.limits, AbortSignal.any([signal, this.closing.signal]), this.turns)
    } catch (error) {
      if (this.closing.signal.aborted && !signal.aborted) throw closedError()
      throw error
    } finally {
      this.hopsInThread--
    }
  }

  private hopInWorker(worker: Worker, url: URL, addresses: CheckedAddress[], signal: AbortSignal): Promise<HopOutcome> {
    const id = ++this.nextHopId
    return new Promise<HopOutcome>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.forget(id)) return
        worker.postMessage({ type: 'abort', id } satisfies FetchWorkerRequest)
        reject(deadlineError())
      }
      signal.addEventListener('abort', onAbort, { once: true })
      const done = () => signal.removeEventListener('abort', onAbort)
      this.pending.set(id, {
        worker,
        resolve: (outcome) => {
          done()
          resolve(outcome)
        },
        reject: (error) => {
          done()
          reject(error)
        },
      })
      const customCa = this.limits.ca !== undefined
      const postCa = customCa && !this.haveCa.has(worker)
      if (postCa) this.haveCa.add(worker)
      // Keeps the process alive while a hop is under way; idle workers are unref'd again.
      worker.ref()
      const message: FetchWorkerRequest = {
        type: 'hop',
        id,
        url: url.href,
        addresses,
        limits: { maxBytes: this.limits.maxBytes, connectTimeoutMs: this.limits.connectTimeoutMs, customCa },
      }
      worker.postMessage(postCa ? { ...message, ca: this.limits.ca } : message)
    })
  }

  /** Drops a pending hop; false when it had settled already. */
  private forget(id: number): boolean {
    if (!this.pending.delete(id)) return false
    if (this.pending.size === 0) for (const worker of this.workers ?? []) worker.unref()
    return true
  }

  private pickWorker(): Worker | null {
    if (this.workers === null) {
      try {
        const path = workerPath('fetch-worker')
        this.workers = Array.from({ length: FETCH_WORKERS }, () => this.startWorker(path))
      } catch {
        this.workers = []
      }
    }
    if (this.workers.length === 0) return null
    return this.workers[this.nextWorker++ % this.workers.length]!
  }

  private startWorker(path: string): Worker {
    const worker = new Worker(path)
    worker.unref()
    worker.onmessage = (event: MessageEvent<FetchWorkerReply>) => {
      const reply = event.data
      const pending = this.pending.get(reply.id)
      if (!pending) return // aborted meanwhile
      this.forget(reply.id)
      if (reply.ok) pending.resolve(reply.outcome)
      else pending.reject(reply.refusal ? invalidImageUrl(reply.message, reply.detail) : new Error(reply.message))
    }
    worker.onerror = (event: ErrorEvent) => {
      // A crashed worker fails its own hops and is replaced; the others carry on.
      for (const [id, pending] of this.pending) {
        if (pending.worker !== worker) continue
        this.forget(id)
        pending.reject(new Error(`image fetch worker failed: ${event.message}`))
      }
      worker.terminate()
      const index = this.workers?.indexOf(worker) ?? -1
      if (this.workers && index >= 0 && !this.closed) this.workers[index] = this.startWorker(path)
    }
    return worker
  }
}
