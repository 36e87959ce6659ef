// A Scheduler whose time moves only when a test says so: advance(ms) runs the timers that fall due, in
// order of their due time, each at its own moment of the clock, and lets the work they start settle.
// Its now() starts at the real time, so it can be the service's clock as well (overrides.clock).
import type { Scheduler, TimerHandle } from '../../src/shared/scheduler'

type Timer = { handle: TimerHandle; fn: () => void; due: number; every: number | null; order: number }

export type ManualScheduler = Scheduler & {
  /** Moves the clock `ms` forward, running every timer due meanwhile (intervals as often as they fall due). */
  advance(ms: number): Promise<void>
  /** Lets the work already started run on (promise chains, a few event-loop turns) without moving the clock. */
  settle(): Promise<void>
  /** Timers waiting to run (timeouts and intervals). */
  pending(): number
}

/** A few turns of the event loop: enough for chains of promises and in-memory work to run on. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

export function createManualScheduler(start = Date.now()): ManualScheduler {
  let now = start
  let order = 0
  const timers = new Map<TimerHandle, Timer>()

  const add = (fn: () => void, ms: number, every: number | null): TimerHandle => {
    const handle: TimerHandle = { timer: ++order }
    // As with real timers, a wait under 1 ms is 1 ms: an interval of 0 cannot run forever in one advance.
    const wait = Math.max(1, Number.isFinite(ms) ? ms : 1)
    timers.set(handle, { handle, fn, due: now + wait, every: every === null ? null : wait, order })
    return handle
  }

  const nextDue = (until: number): Timer | undefined => {
    let next: Timer | undefined
    for (const timer of timers.values()) {
      if (timer.due > until) continue
      if (next === undefined || timer.due < next.due || (timer.due === next.due && timer.order < next.order)) next = timer
    }
    return next
  }

  return {
    now: () => now,
    setTimeout: (fn, ms) => add(fn, ms, null),
    setInterval: (fn, ms) => add(fn, ms, ms),
    clear(handle) {
      if (handle) timers.delete(handle)
    },
    async advance(ms) {
      const until = now + ms
      for (let timer = nextDue(until); timer !== undefined; timer = nextDue(until)) {
        now = Math.max(now, timer.due)
        if (timer.every === null) timers.delete(timer.handle)
        else {
          timer.due += timer.every
          timer.order = ++order
        }
        timer.fn()
        await turns()
      }
      now = until
      await turns()
    },
    settle: () => turns(),
    pending: () => timers.size,
  }
}

/**
 * Moves the scheduler `stepMs` at a time until `condition` holds: for work that waits on the scheduler and
 * on real I/O (a store, a socket) in turn. Fails after `timeoutMs` of real time.
 */
export async function advanceUntil(
  scheduler: ManualScheduler,
  condition: () => boolean | Promise<boolean>,
  what: string,
  { stepMs = 100, timeoutMs = 10_000 }: { stepMs?: number; timeoutMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await scheduler.advance(stepMs)
    // The I/O the timers started needs real time; this also keeps the loop from spinning.
    await Bun.sleep(2)
  }
}
