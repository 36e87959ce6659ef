// What a store rejects with besides a plain Error, in the store's own terms: the HTTP layer decides what
// a client sees (src/http/errors.ts maps these to the contract's error codes).

/** A write could not get the database within its bounded wait (another process holds the lock); nothing was changed. */
export class StoreBusyError extends Error {
  readonly code = 'database_busy'
  constructor(
    /** When a retry may succeed, in whole seconds. */
    readonly retryAfterSeconds: number,
    /** For the operator's log: which database and how long. */
    readonly detail: string,
  ) {
    super('the database is locked by another process (a backup or maintenance); nothing was changed, retry shortly')
    this.name = 'StoreBusyError'
  }
}
