// An account's row and its columns when joined to a key or a session: one mapping for every query that
// hands out an AccountRecord.
import type { AccountRecord } from './types'

export type AccountRow = {
  id: number
  email: string
  password_hash: string
  plan: string
  monthly_credits: number | null
  disabled_at: number | null
  created_at: number
  email_verified_at: number | null
}

export const toAccount = (r: AccountRow): AccountRecord => ({
  id: r.id,
  email: r.email,
  passwordHash: r.password_hash,
  plan: r.plan,
  monthlyCredits: r.monthly_credits,
  disabledAt: r.disabled_at,
  createdAt: r.created_at,
  emailVerifiedAt: r.email_verified_at,
})

/** The account's columns in a join (`accounts a`), prefixed `a_` so they cannot clash with the other table's. */
export const ACCOUNT_JOIN_COLUMNS =
  'a.email AS a_email, a.password_hash AS a_password_hash, a.plan AS a_plan, a.monthly_credits AS a_monthly_credits, a.disabled_at AS a_disabled_at, a.created_at AS a_created_at, a.email_verified_at AS a_email_verified_at'

export type AccountJoinRow = {
  a_email: string
  a_password_hash: string
  a_plan: string
  a_monthly_credits: number | null
  a_disabled_at: number | null
  a_created_at: number
  a_email_verified_at: number | null
}

export const joinedAccount = (id: number, r: AccountJoinRow): AccountRecord => ({
  id,
  email: r.a_email,
  passwordHash: r.a_password_hash,
  plan: r.a_plan,
  monthlyCredits: r.a_monthly_credits,
  disabledAt: r.a_disabled_at,
  createdAt: r.a_created_at,
  emailVerifiedAt: r.a_email_verified_at,
})
