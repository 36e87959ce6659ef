// What a store rejects with besides a plain Error, in the store's own terms: the HTTP layer decides what
// a client sees (src/http/errors.ts maps these to the contract's error codes).

/**
 * The database cannot take the operation now, and a retry shortly may succeed: a write could not get
 * SQLite's lock within its bounded wait (nothing was changed), or PostgreSQL could not be reached.
 */
export class StoreBusyError extends Error {
  readonly code = 'database_busy'
  constructor(
    /** When a retry may succeed, in whole seconds. */
    readonly retryAfterSeconds: number,
    /** For the operator's log: which database and what happened. */
    readonly detail: string,
    /** For the client: what happened, without naming the database. */
    message = 'the database is locked by another process (a backup or maintenance); nothing was changed, retry shortly',
  ) {
    super(message)
    this.name = 'StoreBusyError'
  }
}
