// The time background work waits on: flushes, polls, lease renewals, retry pauses. Modules take a Scheduler
// in their deps instead of calling the global timers, so a test can run them by moving a manual one
// (test/support/scheduler.ts) rather than waiting for real time to pass.

/** An opaque timer handle: only the scheduler that made it can clear it. */
export type TimerHandle = { readonly timer: unknown }

export type Scheduler = {
  /** Milliseconds on the scheduler's clock (the system's: Unix ms). */
  now(): number
  /** Runs `fn` once after `ms`. Never keeps the process alive on its own (the server does). */
  setTimeout(fn: () => void, ms: number): TimerHandle
  /** Runs `fn` every `ms`. Never keeps the process alive on its own. */
  setInterval(fn: () => void, ms: number): TimerHandle
  /** Stops a timeout or an interval; a handle already run or cleared is ignored. */
  clear(handle: TimerHandle | null | undefined): void
}

/** The real timers, built once by the composition root. */
export function createSystemScheduler(): Scheduler {
  return {
    now: Date.now,
    setTimeout(fn, ms) {
      const timer = setTimeout(fn, ms)
      timer.unref()
      return { timer }
    },
    setInterval(fn, ms) {
      const timer = setInterval(fn, ms)
      timer.unref()
      return { timer }
    },
    clear(handle) {
      // clearTimeout clears intervals too (both are the same kind of timer in Bun and Node).
      if (handle) clearTimeout(handle.timer as ReturnType<typeof setTimeout>)
    },
  }
}

/** Waits `ms` on the scheduler, or less when `signal` aborts (then it resolves, never rejects). */
export function pause(scheduler: Scheduler, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      scheduler.clear(handle)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const handle = scheduler.setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
