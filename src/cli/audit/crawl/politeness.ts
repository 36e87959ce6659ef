// Per-host politeness: at most a few requests to one host at once, and their starts spaced by a delay
// (the host's robots.txt Crawl-delay when it gives one, capped). Time comes from outside (`Timer`), so a
// test can prove the spacing with a clock it moves itself instead of waiting real seconds.

/** Requests in flight to one host at most. */
export const FETCHES_PER_HOST = 2
/** The least time between the starts of two requests to one host when robots.txt asks for none: 100 a second at most. */
export const DEFAULT_DELAY_MS = 10
/** A Crawl-delay above this is held to it: a site asking for minutes between pages would make an audit of hours. */
export const MAX_CRAWL_DELAY_MS = 30_000

export type Timer = {
  now(): number
  /** Resolves after `ms` (early when `signal` aborts). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

export const realTimer: Timer = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve()
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal?.addEventListener('abort', done, { once: true })
    }),
}

type HostState = { active: number; nextStartAt: number; delayMs: number; concurrency: number; waiting: (() => void)[] }

export type HostScheduler = {
  /** Runs `task` when `host` has a free slot and its delay since the last start has passed. */
  run<T>(host: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T>
  /** A Crawl-delay (seconds, from robots.txt): starts spaced by it (capped) and one request at a time, as the directive means. */
  setCrawlDelay(host: string, seconds: number): number
}

export function createHostScheduler(timer: Timer, options: { perHost?: number; delayMs?: number } = {}): HostScheduler {
  const hosts = new Map<string, HostState>()
  const stateOf = (host: string) => {
    let state = hosts.get(host)
    if (!state) {
      state = { active: 0, nextStartAt: 0, delayMs: options.delayMs ?? DEFAULT_DELAY_MS, concurrency: options.perHost ?? FETCHES_PER_HOST, waiting: [] }
      hosts.set(host, state)
    }
    return state
  }
  return {
    setCrawlDelay(host, seconds) {
      const state = stateOf(host)
      const ms = Math.min(Math.max(0, seconds * 1000), MAX_CRAWL_DELAY_MS)
      state.delayMs = Math.max(ms, state.delayMs)
      state.concurrency = 1
      return ms
    },
    async run(host, task, signal) {
      const state = stateOf(host)
      while (state.active >= state.concurrency) await new Promise<void>((resolve) => state.waiting.push(resolve))
      state.active++
      try {
        // The start is booked before sleeping, so requests waiting together are spaced, not bunched.
        const now = timer.now()
        const start = Math.max(now, state.nextStartAt)
        state.nextStartAt = start + state.delayMs
        if (start > now) await timer.sleep(start - now, signal)
        return await task()
      } finally {
        state.active--
        state.waiting.shift()?.()
      }
    },
  }
}
