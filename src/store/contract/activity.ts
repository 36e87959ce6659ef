// Authenticated calls per account and day, and each key's last use, written in batches.

export type ActivityBatch = {
  /** account id → day (YYYY-MM-DD, UTC) → number of authenticated calls */
  calls: Map<number, Map<string, number>>
  /** key id → last use time */
  lastUsed: Map<number, number>
}

export interface ActivityStore {
  /** Applies a batch of call counts and last-used times in one transaction. */
  apply(batch: ActivityBatch): Promise<void>
  callsOn(accountId: number, day: string): Promise<number>
}
