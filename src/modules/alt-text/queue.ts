// At most `concurrency` generations run at once; the rest wait in a bounded FIFO. A request is refused
// at once (503 overloaded) when the queue is full or when its expected start leaves no time to finish
// before its deadline — failing fast beats answering 504 after 15 s of waiting.
//
// Background work (batch items) waits in a line of its own, without deadlines or a bound (the batch runner
// bounds it), and yields to interactive requests: a freed slot goes to a waiting interactive request
// first, and while any interactive request waits, background work holds at most `concurrency - 1` slots
// (all of them when no one waits). So a batch runs at the model's full speed when it is alone, and a single
// call made meanwhile waits for at most one slot to come free.
import { ApiError } from '../../shared/errors'

export type GenerationQueue = {
  /**
   * Waits for a slot. `deadline` is the request's end on the monotonic clock (performance.now());
   * `signal` ends the wait early. Every slot must be released, whatever the work in it did.
   */
  acquire(deadline: number, signal: AbortSignal): Promise<QueueSlot>
  /**
   * Waits for a slot for background work: after every interactive request, with no deadline; `signal`
   * ends the wait (rejecting with its reason). Every slot must be released.
   */
  acquireBackground(signal: AbortSignal): Promise<QueueSlot>
  /** `running` counts background slots too (`background` of them); `waiting` counts interactive requests only. */
  stats(): { running: number; waiting: number; averageMs: number; background: number; backgroundWaiting: number }
  /** The capacity may have grown (a model host came back): start what now fits. */
  wake(): void
}

export type QueueSlot = { release(): void }

type Waiter = { start: () => void; fail: (error: unknown) => void; deadline: number }
type BackgroundWaiter = { start: () => void }

export function createGenerationQueue(options: {
  /** Slots; a function when it follows the healthy model hosts. */
  concurrency: number | (() => number)
  maxWaiting?: number
  clock?: () => number
  initialEstimateMs?: number
}): GenerationQueue {
  const capacity = options.concurrency
  const slots = typeof capacity === 'number' ? () => capacity : () => Math.max(1, capacity())
  const maxWaiting = options.maxWaiting ?? slots() * 32
  const clock = options.clock ?? (() => performance.now())
  const waiting: Waiter[] = []
  const backgroundWaiting: BackgroundWaiter[] = []
  let running = 0
  /** Slots held by background work (part of `running`). */
  let background = 0
  // Moving average of how long a slot is held; the first guess (1 s, the spec's fast case) is optimistic:
  // too low admits a few that are refused later, too high would refuse work that could be done.
  let averageMs = options.initialEstimateMs ?? 1000
  let samples = 0

  const overloaded = (reason: string, waitMs: number) =>
    new ApiError('overloaded', `${reason}; retry in a few seconds`, { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) })

  /**
   * Expected ms until a newly queued task starts, given `ahead` tasks waiting before it. `slots()` follows
   * the healthy model hosts; the average is over completions, so a fast host (finishing more often) weighs
   * in by its share of the throughput: slots / average is the pool's rate of completions.
   */
  const expectedWait = (ahead: number) => Math.ceil((ahead + 1) / slots()) * averageMs

  /** Background work may take a free slot: all of them when no interactive request waits, else all but one. */
  const backgroundMayStart = () => running < slots() && (waiting.length === 0 ? true : background < slots() - 1)

  const startBackground = () => {
    while (backgroundWaiting.length > 0 && backgroundMayStart()) {
      running++
      background++
      backgroundWaiting.shift()!.start()
    }
  }

  const release = () => {
    running--
    pump()
  }

  /** Fills free slots: waiting interactive requests first, then background work. */
  const pump = () => {
    while (waiting.length > 0 && running < slots()) {
      const next = waiting.shift()!
      // Starting a generation that cannot finish only wastes the model's time and ends in a 504.
      if (next.deadline - clock() < averageMs) {
        next.fail(overloaded('the generation queue did not reach this request in time to finish before its deadline', expectedWait(waiting.length)))
        continue
      }
      running++
      next.start()
    }
    startBackground()
  }

  /** A running slot; its release feeds the average with how long it was held. */
  const slot = (isBackground = false): QueueSlot => {
    const started = clock()
    let released = false
    return {
      release() {
        if (released) return
        released = true
        const took = clock() - started
        samples++
        averageMs = samples === 1 ? took : averageMs * 0.8 + took * 0.2
        if (isBackground) background--
        release()
      },
    }
  }

  return {
    async acquire(deadline, signal) {
      if (running >= slots()) {
        const wait = expectedWait(waiting.length)
        if (waiting.length >= maxWaiting) throw overloaded(`the generation queue is full (${maxWaiting} waiting)`, wait)
        if (clock() + wait + averageMs > deadline) throw overloaded('the generation queue is too long to finish before the deadline of this request', wait)
        await new Promise<void>((resolve, reject) => {
          const waiter: Waiter = {
            deadline,
            start: () => {
              signal.removeEventListener('abort', onAbort)
              resolve()
            },
            fail: (error) => {
              signal.removeEventListener('abort', onAbort)
              reject(error)
            },
          }
          const onAbort = () => {
            const index = waiting.indexOf(waiter)
            if (index >= 0) waiting.splice(index, 1)
            reject(overloaded('the generation queue did not reach this request before its deadline', expectedWait(waiting.length)))
          }
          if (signal.aborted) return onAbort()
          signal.addEventListener('abort', onAbort, { once: true })
          waiting.push(waiter)
        })
      } else {
        running++
      }
      return slot()
    },
    async acquireBackground(signal) {
      if (signal.aborted) throw signal.reason
      if (backgroundWaiting.length === 0 && backgroundMayStart()) {
        running++
        background++
        return slot(true)
      }
      await new Promise<void>((resolve, reject) => {
        const waiter: BackgroundWaiter = {
          start: () => {
            signal.removeEventListener('abort', onAbort)
            resolve()
          },
        }
        const onAbort = () => {
          const index = backgroundWaiting.indexOf(waiter)
          if (index >= 0) backgroundWaiting.splice(index, 1)
          reject(signal.reason)
        }
        signal.addEventListener('abort', onAbort, { once: true })
        backgroundWaiting.push(waiter)
      })
      return slot(true)
    },
    wake: pump,
    stats: () => ({ running, waiting: waiting.length, averageMs, background, backgroundWaiting: backgroundWaiting.length }),
  }
}
