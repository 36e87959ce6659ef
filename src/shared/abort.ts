/** Settles with `work`, or rejects with `abortError()` as soon as `signal` aborts (also if it already has). */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal, abortError: () => unknown): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError())
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError())
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
