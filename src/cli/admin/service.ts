// What `alttext admin` does to the database, on the service's own parts: the accounts service creates and
// deletes accounts, the credit ledger computes balances, the admin store changes plans, grants and the
// disabled state. The serving process learns of each change through the account change log (see
// src/modules/accounts/changes.ts). Organisations are billing accounts too: their plans and grants go
// through the same admin store, and each change lands in the organisation's activity log as the operator's
// (actor id and email null). No terminal output here.
import type { Balance, CreditLedger } from '../../credits/service'
import { Email } from '../../modules/accounts/model'
import type { AccountsService } from '../../modules/accounts/service'
import { OrgId } from '../../modules/orgs/ids'
import { summariseKeys } from '../../modules/keys/service'
import { ApiError } from '../../shared/errors'
import { createCalendar, iso } from '../../shared/time'
import type { AccountRecord, Actor, OrgRecord, Role, Store } from '../../store/contract'
import { FREE_PLAN, ROLES } from '../../store/contract'
import { newOrgPublicId } from '../../store/shared/ids'
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

/** An organisation as `orgs list` and `orgs show` print it (and as their --json has it). */
export type OrgView = {
  id: string
  name: string
  personal: boolean
  plan: string
  credits: CreditsView
  members: number
  keys: number
  created_at: string
}

export type MemberView = { email: string; role: Role; joined_at: string }

export type CreditsView = AccountView['credits']

/** The email as the service compares it (trimmed, lower case), or a usage error naming what is wrong. */
export function emailArgument(raw: string): string {
  const parsed = Email.safeParse(raw)
  if (!parsed.success) throw new UsageError(`"${raw}" is not an email address`)
  return parsed.data
}

/** The public organisation id (`org_` and 24 hex digits, as the API takes it), or a usage error. */
export function orgArgument(raw: string): string {
  const id = raw.trim().toLowerCase()
  if (!OrgId.safeParse(id).success) throw new UsageError(`"${raw}" is not an organisation id: those are org_ and 24 hex digits, as \`orgs list\` shows them`)
  return id
}

export function roleArgument(raw: string): Role {
  const role = ROLES.find((r) => r === raw.trim().toLowerCase())
  if (role === undefined) throw new UsageError(`unknown role "${raw}": use ${ROLES.slice(0, -1).join(', ')} or ${ROLES.at(-1)}`)
  return role
}

/** A name as the terminal shows it: one made through the API may hold control characters (escape sequences). */
export const printable = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')

/** The longest organisation name: it has to fit a table row and the console's switcher. */
const ORG_NAME_MAX = 100

export function orgNameArgument(raw: string): string {
  const name = raw.trim()
  if (name.length === 0 || name.length > ORG_NAME_MAX) throw new UsageError(`an organisation name is 1 to ${ORG_NAME_MAX} characters, got ${name.length}`)
  if (printable(name) !== name) throw new UsageError('an organisation name cannot hold control characters (tabs, line breaks)')
  return name
}

/** `flag`: the option that gave it (`--name` of plans set, `--plan` of orgs create). */
export function planNameArgument(raw: string, flag = '--name'): string {
  const name = raw.trim().toLowerCase()
  if (name === FREE_PLAN)
    throw new UsageError(
      `${flag} ${FREE_PLAN} is the plan of ALTTEXT_FREE_CREDITS: ${flag === '--name' ? 'use `plans reset` to go back to it' : 'leave out --credits and --plan for it'}`,
    )
  if (!PLAN_NAME.test(name)) throw new UsageError(`${flag} must be 1 to 32 of a-z, 0-9, _ and -, starting with a letter or digit; got "${raw}"`)
  return name
}

export function createAdminService(deps: { store: Store; accounts: AccountsService; credits: CreditLedger; clock: () => number }) {
  const { store, accounts, credits, clock } = deps

  const find = async (email: string): Promise<AccountRecord> => {
    const account = await store.accounts.findByEmail(email)
    if (!account) throw new AdminError(`no account has the email ${email}`)
    return account
  }

  const creditsOf = (balance: Balance): CreditsView => ({
    total: balance.total,
    used: balance.used,
    remaining: balance.remaining,
    monthly: balance.total - balance.granted,
    granted: balance.granted,
  })

  const view = (account: AccountRecord, balance: Balance, keys: number, lastActiveAt: number | null): AccountView => ({
    email: account.email,
    plan: account.plan,
    status: account.disabledAt === null ? 'active' : 'disabled',
    credits: creditsOf(balance),
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

  /** The operator, as the activity log names it: no account, no email. */
  const operator = (now: number): Actor => ({ accountId: null, email: null, now })

  const findOrg = async (publicId: string): Promise<OrgRecord> => {
    const org = await store.orgs.byPublicId(publicId)
    if (!org) throw new AdminError(`no organisation has the id ${publicId}`)
    return org
  }

  /** "Acme (org_…)", or "the personal organisation of dev@example.org (org_…)". */
  const orgLabel = (org: OrgRecord) =>
    org.personal ? `the personal organisation of ${org.account.email} (${org.publicId})` : `${printable(org.name)} (${org.publicId})`

  const orgView = async (org: OrgRecord, now: number, counts?: { members: number; activeKeys: number }): Promise<OrgView> => {
    const [balance, members, keys] = await Promise.all([
      credits.balance(org.account, now),
      counts ? counts.members : store.orgs.members(org.id).then((m) => m.length),
      counts ? counts.activeKeys : store.keys.listActiveInOrg(org.id, now).then((k) => k.length),
    ])
    return {
      id: org.publicId,
      name: org.name,
      personal: org.personal,
      plan: org.account.plan,
      credits: creditsOf(balance),
      members,
      keys,
      created_at: iso(org.createdAt),
    }
  }

  /** The organisation as it is now, with its members and the period its credits belong to. */
  const orgNow = async (orgId: number, now: number) => {
    credits.forget(orgId)
    const org = await store.orgs.byId(orgId)
    if (!org) throw new AdminError('the organisation was deleted meanwhile')
    const members = await store.orgs.members(org.id)
    return {
      ...periodFields(now),
      org: await orgView(org, now),
      members: members.map((m): MemberView => ({ email: m.email, role: m.role, joined_at: iso(m.joinedAt) })),
      label: orgLabel(org),
    }
  }

  /** Members are added to, and changed in, team organisations only: a personal one is its person alone. */
  const teamOrg = async (publicId: string): Promise<OrgRecord> => {
    const org = await findOrg(publicId)
    if (org.personal)
      throw new AdminError(
        `${publicId} is the personal organisation of ${org.account.email}: it has no other members; make a team organisation with \`alttext admin orgs create\``,
      )
    return org
  }

  const lastOwner = (email: string, org: OrgRecord) =>
    new AdminError(`${email} is the last owner of ${orgLabel(org)}: make another member owner first (alttext admin orgs set-role ${org.publicId} EMAIL owner)`)

  const notMember = (email: string, org: OrgRecord) => new AdminError(`${email} is not a member of ${orgLabel(org)}`)

  const changePlan = async (account: AccountRecord, plan: { name: string; credits: number } | null, now: number) => {
    const name = plan?.name ?? FREE_PLAN
    const after = await store.admin.setPlan(account.id, name, plan?.credits ?? null)
    if (!after) return null
    // The account's id is its (personal or team) organisation's: the plan is the organisation's.
    await store.orgs.record(account.id, 'org.plan_changed', name, { from: account.plan, to: name, monthly_credits: plan?.credits ?? null }, operator(now))
    return after
  }

  const grantTo = async (account: AccountRecord, amount: number, now: number) => {
    const period = periodOf(now).id
    if ((await store.admin.grant(account.id, period, amount)) === null) return false
    await store.orgs.record(account.id, 'org.credits_granted', null, { credits: amount, period }, operator(now))
    return true
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
      const after = await changePlan(account, plan, now)
      if (!after) throw new AdminError(`no account has the email ${email}`)
      return current(after, now)
    },

    async grant(email: string, amount: number, now = clock()) {
      const account = await find(email)
      if (!(await grantTo(account, amount, now))) throw new AdminError(`no account has the email ${email}`)
      return current(account, now)
    },

    /** Every team organisation (personal ones are the accounts of `list`), oldest first. */
    async listOrgs(now = clock()) {
      const rows = await store.orgs.overview(now)
      return { ...periodFields(now), orgs: await Promise.all(rows.map((row) => orgView(row.org, now, row))) }
    },

    async showOrg(publicId: string, now = clock()) {
      return orgNow((await findOrg(publicId)).id, now)
    },

    /** A team organisation owned by `ownerEmail`, on the free plan or on `plan`. */
    async createOrg(name: string, ownerEmail: string, plan: { name: string; credits: number } | null, now = clock()) {
      const owner = await find(ownerEmail)
      // The contract's create takes its owner as the actor of `org.created`.
      const org = await store.orgs.create(name, newOrgPublicId(), FREE_PLAN, { accountId: owner.id, email: owner.email, now })
      if (plan !== null && !(await changePlan(org.account, plan, now))) throw new AdminError('the organisation was deleted meanwhile')
      return orgNow(org.id, now)
    },

    async addMember(publicId: string, email: string, role: Role, now = clock()) {
      const org = await teamOrg(publicId)
      const account = await find(email)
      const added = await store.orgs.addMember(org.id, account.id, role, operator(now))
      if (added === 'exists') {
        const member = (await store.orgs.members(org.id)).find((m) => m.accountId === account.id)
        throw new AdminError(
          `${email} is already a member of ${orgLabel(org)}${member ? `, as ${member.role}` : ''}: \`alttext admin orgs set-role\` changes a role`,
        )
      }
      if (added === null) throw new AdminError(`${orgLabel(org)} or ${email} was deleted meanwhile`)
      return { label: orgLabel(org), member: added }
    },

    async setRole(publicId: string, email: string, role: Role, now = clock()) {
      const org = await teamOrg(publicId)
      const account = await find(email)
      const before = (await store.orgs.members(org.id)).find((m) => m.accountId === account.id)
      if (!before) throw notMember(email, org)
      const after = await store.orgs.setRole(org.id, account.id, role, operator(now))
      if (after === 'last_owner') throw lastOwner(email, org)
      if (after === null) throw notMember(email, org)
      return { label: orgLabel(org), from: before.role, member: after }
    },

    async removeMember(publicId: string, email: string, now = clock()) {
      const org = await teamOrg(publicId)
      const account = await find(email)
      const removed = await store.orgs.removeMember(org.id, account.id, operator(now))
      if (removed === 'last_owner') throw lastOwner(email, org)
      if (removed === null) throw notMember(email, org)
      return { label: orgLabel(org), revokedKeys: removed.revokedKeys }
    },

    async setOrgPlan(publicId: string, plan: { name: string; credits: number } | null, now = clock()) {
      const org = await findOrg(publicId)
      if (!(await changePlan(org.account, plan, now))) throw new AdminError(`no organisation has the id ${publicId}`)
      return orgNow(org.id, now)
    },

    async grantOrg(publicId: string, amount: number, now = clock()) {
      const org = await findOrg(publicId)
      if (!(await grantTo(org.account, amount, now))) throw new AdminError(`no organisation has the id ${publicId}`)
      return orgNow(org.id, now)
    },
  }
}

export type AdminService = ReturnType<typeof createAdminService>
