// A value at once when it is in memory, a promise only when it must be read from the store.
// The hot paths (every authenticated request) check for a promise instead of awaiting: an await,
// even of a plain value, costs a turn of the microtask queue, and an async function a promise of its
// own (the benchmark's HTTP-stack figures show what that is worth).
export type MaybePromise<T> = T | Promise<T>

/** `next(value)`, at once for a value, after it resolves for a promise. */
export function andThen<T, R>(value: MaybePromise<T>, next: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value)
}
