// What `alttext admin` does to the database, on the service's own parts: the accounts service creates and
// deletes accounts, the credit ledger computes balances, the admin store changes plans, grants and the
// disabled state. The serving process learns of each change through the account change log (see
// src/modules/accounts/changes.ts). No terminal output here.
import type { Balance, CreditLedger } from '../../credits/service'
import { Email } from '../../modules/accounts/model'
import type { AccountsService } from '../../modules/accounts/service'
import { summariseKeys } from '../../modules/keys/service'
import { ApiError } from '../../shared/errors'
import { createCalendar, iso } from '../../shared/time'
import type { AccountRecord, Store } from '../../store/contract'
import { FREE_PLAN } from '../../store/contract'
import { UsageError } from '../shared/args'

/** A failure the operator can act on (no such account, email taken): exit 1 with the message. */
export class AdminError extends Error {}

/** Plan names: short, lower case, readable in a table and in API answers. */
const PLAN_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/
export const DEFAULT_PLAN_NAME = 'custom'

/** An account as `accounts list` and `accounts show` print it (and as their --json has it). */
export type AccountView = {
  email: string
  plan: string
  status: 'active' | 'disabled'
  credits: { total: number; used: number; remaining: number; monthly: number; granted: number }
  keys: number
  created_at: string
  last_active_at: string | null
  disabled_at: string | null
}

/** The email as the service compares it (trimmed, lower case), or a usage error naming what is wrong. */
export function emailArgument(raw: string): string {
  const parsed = Email.safeParse(raw)
  if (!parsed.success) throw new UsageError(`"${raw}" is not an email address`)
  return parsed.data
}

export function planNameArgument(raw: string): string {
  const name = raw.trim().toLowerCase()
  if (name === FREE_PLAN) throw new UsageError(`--name ${FREE_PLAN} is the plan of ALTTEXT_FREE_CREDITS: use \`plans reset\` to go back to it`)
  if (!PLAN_NAME.test(name)) throw new UsageError(`--name must be 1 to 32 of a-z, 0-9, _ and -, starting with a letter or digit; got "${raw}"`)
  return name
}

export function createAdminService(deps: { store: Store; accounts: AccountsService; credits: CreditLedger; clock: () => number }) {
  const { store, accounts, credits, clock } = deps

  const find = async (email: string): Promise<AccountRecord> => {
    const account = await store.accounts.findByEmail(email)
    if (!account) throw new AdminError(`no account has the email ${email}`)
    return account
  }

  const view = (account: AccountRecord, balance: Balance, keys: number, lastActiveAt: number | null): AccountView => ({
    email: account.email,
    plan: account.plan,
    status: account.disabledAt === null ? 'active' : 'disabled',
    credits: {
      total: balance.total,
      used: balance.used,
      remaining: balance.remaining,
      monthly: balance.total - balance.granted,
      granted: balance.granted,
    },
    keys,
    created_at: iso(account.createdAt),
    last_active_at: iso(lastActiveAt),
    disabled_at: iso(account.disabledAt),
  })

  const overviews = async (now: number, accountId?: number) => {
    const rows = await store.admin.overview(now, accountId)
    return Promise.all(rows.map(async (row) => view(row.account, await credits.balance(row.account, now), row.activeKeys, row.lastActiveAt)))
  }

  const { periodOf } = createCalendar()
  const periodFields = (now: number) => {
    const period = periodOf(now)
    return { period_start: period.startIso, period_end: period.endIso }
  }

  /** The account as it is now, with the period its credits belong to. */
  const current = async (account: AccountRecord, now = clock()) => {
    // Read afresh: this command may just have changed the counts.
    credits.forget(account.id)
    const [shown] = await overviews(now, account.id)
    return { ...periodFields(now), account: shown! }
  }

  return {
    async list(now = clock()) {
      return { ...periodFields(now), accounts: await overviews(now) }
    },

    async show(email: string, now = clock()) {
      const account = await find(email)
      const keys = await store.keys.listActive(account.id, now)
      return { ...(await current(account, now)), active_keys: await summariseKeys(store.orgs, account.id, keys) }
    },

    async create(email: string, options: { mailLink: boolean }) {
      try {
        return await accounts.createByOperator(email, options)
      } catch (error) {
        if (error instanceof ApiError && error.code === 'email_taken') throw new AdminError(`an account with the email ${email} already exists`)
        throw error
      }
    },

    async setDisabled(email: string, disabled: boolean, now = clock()) {
      const before = await find(email)
      const after = await store.admin.setDisabled(before.id, disabled ? now : null)
      if (!after) throw new AdminError(`no account has the email ${email}`)
      return { changed: (before.disabledAt === null) === disabled, ...(await current(after, now)) }
    },

    async remove(email: string) {
      return accounts.removeAccount(await find(email))
    },

    /** `credits` per period under the plan `name`; null credits: back to the free plan. */
    async setPlan(email: string, plan: { name: string; credits: number } | null, now = clock()) {
      const account = await find(email)
      const after = await store.admin.setPlan(account.id, plan?.name ?? FREE_PLAN, plan?.credits ?? null)
      if (!after) throw new AdminError(`no account has the email ${email}`)
      return current(after, now)
    },

    async grant(email: string, amount: number, now = clock()) {
      const account = await find(email)
      if ((await store.admin.grant(account.id, periodOf(now).id, amount)) === null) throw new AdminError(`no account has the email ${email}`)
      return current(account, now)
    },
  }
}

export type AdminService = ReturnType<typeof createAdminService>
