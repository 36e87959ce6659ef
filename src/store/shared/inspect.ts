// What the operator's checks (alttext doctor) read the same way on either engine.

/**
 * The columns holding the times the service writes: the newest of them, later than now, means the clock
 * was set back since.
 */
export const RECORD_TIMES = [
  ['accounts', 'created_at'],
  ['api_keys', 'created_at'],
  ['api_keys', 'last_used_at'],
  ['schema_migrations', 'applied_at'],
] as const
