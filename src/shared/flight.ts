/**
 * Starts `work` as the one flight for `key`: identical requests find it in `inflight` and wait for it
 * instead of starting (and paying for) their own. It leaves the map when it settles.
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
