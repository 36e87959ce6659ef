// Rows of PostgreSQL as the store's records: bigint columns arrive as strings (see connection.ts).
import type { AccountRecord, KeyRecord, SessionRecord } from '../types'
import { num, numOrNull } from './connection'

type Row = Record<string, unknown>

export const ACCOUNT_COLUMNS = 'id, email, password_hash, plan, monthly_credits, disabled_at, created_at, email_verified_at'

/** The account's columns in a join (`accounts a`), prefixed `a_` so they cannot clash with the other table's. */
export const ACCOUNT_JOIN_COLUMNS =
  'a.id AS a_id, a.email AS a_email, a.password_hash AS a_password_hash, a.plan AS a_plan, a.monthly_credits AS a_monthly_credits, a.disabled_at AS a_disabled_at, a.created_at AS a_created_at, a.email_verified_at AS a_email_verified_at'

/** An account from its row, or from a join's columns prefixed `a_`. */
export const toAccount = (r: Row, prefix = ''): AccountRecord => ({
  id: num(r[`${prefix}id`]),
  email: r[`${prefix}email`] as string,
  passwordHash: r[`${prefix}password_hash`] as string,
  plan: r[`${prefix}plan`] as string,
  monthlyCredits: numOrNull(r[`${prefix}monthly_credits`]),
  disabledAt: numOrNull(r[`${prefix}disabled_at`]),
  createdAt: num(r[`${prefix}created_at`]),
  emailVerifiedAt: numOrNull(r[`${prefix}email_verified_at`]),
})

export const KEY_COLUMNS = 'id, account_id, prefix, label, created_at, expires_at, revoked_at, last_used_at'

export const toKey = (r: Row): KeyRecord => ({
  id: num(r.id),
  accountId: num(r.account_id),
  prefix: r.prefix as string,
  label: r.label as string | null,
  createdAt: num(r.created_at),
  expiresAt: numOrNull(r.expires_at),
  revokedAt: numOrNull(r.revoked_at),
  lastUsedAt: numOrNull(r.last_used_at),
})

export const SESSION_COLUMNS = 'id, account_id, created_at, last_seen_at, expires_at'

export const toSession = (r: Row): SessionRecord => ({
  id: num(r.id),
  accountId: num(r.account_id),
  createdAt: num(r.created_at),
  lastSeenAt: num(r.last_seen_at),
  expiresAt: num(r.expires_at),
})
