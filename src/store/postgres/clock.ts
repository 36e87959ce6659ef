// Whose clock judges the leases of claims and the expiry of credit holds on PostgreSQL. Replicas' clocks
// drift apart; one that runs ahead would take over live claims and count live holds as lapsed. So the
// database's clock judges: a lease or a hold lasts its duration (`until - now` of the caller) from the
// database's now, and is compared with the database's now. A test that moves time passes 'caller': its
// `now` stands in for the database's in the same statements.
export type StoreClock = 'database' | 'caller'

/**
 * SQL for "now" in Unix ms: the caller's `now` when the parameter carries it ('caller'), else the
 * database's clock at the start of the statement (stable within it, fresh in each).
 */
export const nowMs = (param: string) => `coalesce(${param}::bigint, floor(extract(epoch from statement_timestamp()) * 1000)::bigint)`

/** The value of nowMs's parameter: the caller's `now` when it judges, else null (the database's clock). */
export const judgedNow = (clock: StoreClock, now: number): number | null => (clock === 'caller' ? now : null)
