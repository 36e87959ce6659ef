import { raceAbort } from './abort'

/**
 * Starts `work` as the one flight for `key`: identical requests find it in `inflight` and wait for it
 * instead of starting (and paying for) their own. It leaves the map when it settles, so the next
 * request after it, failed or not, starts afresh.
 */
export function startFlight<T>(inflight: Map<string, Promise<T>>, key: string, work: () => Promise<T>): Promise<T> {
  const flight = work()
  inflight.set(key, flight)
  const forget = () => {
    if (inflight.get(key) === flight) inflight.delete(key)
  }
  flight.then(forget, forget)
  return flight
}

/** How a request follows an identical one under way. */
export type Following = {
  /** This request's own client signal: when it aborts, it stops waiting with `gone()`. */
  signal: AbortSignal
  gone: () => unknown
  /**
   * A failure that belongs to the request that led (its client hung up, it had no credit), not to the
   * work: a follower then joins the next flight for the key, or leads it.
   */
  personal: (error: unknown) => boolean
  /** Called each time this request starts waiting for another's flight. */
  onFollow?: () => void
}

/**
 * Joins the flight for `key`, or leads one. A follower gets the flight's outcome, its failure too: while
 * the model fails, identical requests waiting together cost one failed call, not one each. Only a
 * failure `personal` to the leader sends followers on, to one new flight that the first of them leads
 * and the others join. `led` says whether this request ran `work` (and so holds what it paid for).
 */
export async function shareFlight<T>(
  inflight: Map<string, Promise<T>>,
  key: string,
  work: () => Promise<T>,
  following: Following,
): Promise<{ value: T; led: boolean }> {
  for (;;) {
    const shared = inflight.get(key)
    if (!shared) return { value: await startFlight(inflight, key, work), led: true }
    following.onFollow?.()
    try {
      return { value: await raceAbort(shared, following.signal, following.gone), led: false }
    } catch (error) {
      if (following.signal.aborted || !following.personal(error)) throw error
    }
  }
}
