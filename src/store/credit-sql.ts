// The statements that charge a credit and end its hold, shared by the credit store and the batch store
// (which charges in the same transaction that records a batch item's answer). No row comes back for an
// account deleted while its request ran: nothing to charge, no foreign-key failure.
export const CHARGE_CREDIT_SQL =
  'INSERT INTO credit_usage (account_id, period, used) SELECT ?1, ?2, 1 WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?1) ON CONFLICT(account_id, period) DO UPDATE SET used = used + 1 RETURNING used'
/** A hold ends with the charge it held the credit for, in the same transaction. */
export const DELETE_HOLD_SQL = 'DELETE FROM credit_holds WHERE id = ?'
