// Organisations: making and deleting them, members and their roles, mailed invitations, the activity log
// and its export. Who may do what is checked by the role macro before these run; what depends on the
// target (touching an owner needs an owner) is checked here. No HTTP here.
import type { CreditLedger } from '../../credits/service'
import { sha256Hex, randomHex } from '../../shared/crypto'
import { ApiError } from '../../shared/errors'
import type { Logger } from '../../shared/logger'
import { iso } from '../../shared/time'
import {
  type AccountRecord,
  type ActivityEntry,
  type Actor,
  FREE_PLAN,
  type MemberRecord,
  type OrgRecord,
  type Role,
  roleAllows,
  type Store,
} from '../../store/contract'
import { newOrgPublicId } from '../../store/shared/ids'
import type { Mailer } from '../accounts/mailer'
import type { AuthService, Caller } from '../auth/service'
import { forbiddenForRole, orgNotFound } from '../auth/service'

export const INVITATION_TTL_DAYS = 7
const INVITATION_TTL_MS = INVITATION_TTL_DAYS * 86_400_000

const personalOrg = (what: string) =>
  new ApiError(
    'personal_org',
    `a personal organisation has one member and stays with its account: it cannot ${what}; create an organisation (POST /api/orgs) for a team`,
  )

const lastOwner = () => new ApiError('last_owner', 'an organisation keeps at least one owner: make another member an owner first')

const notMember = () => new ApiError('not_found', 'no member of this organisation has that account id')

export const actorOf = (caller: Pick<Caller, 'account'>, now: number): Actor => ({ accountId: caller.account.id, email: caller.account.email, now })

const memberView = (m: MemberRecord) => ({ account_id: m.accountId, email: m.email, role: m.role, joined_at: iso(m.joinedAt) })

export const activityView = (e: ActivityEntry) => ({
  seq: e.seq,
  at: iso(e.at),
  actor: e.actorEmail,
  action: e.action,
  subject: e.subject,
  detail: e.detail,
})

const CSV_COLUMNS = ['seq', 'at', 'actor', 'action', 'subject', 'detail'] as const

/** A CSV field: quoted when it must be, and a leading = + - @ made inert for spreadsheets. */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/u.test(value) ? `'${value}` : value
  return /[",\r\n]/u.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

export function createOrgsService(deps: {
  store: Store
  credits: CreditLedger
  auth: AuthService
  mailer: Mailer
  logger: Logger
  publicUrl: string
  clock: () => number
}) {
  const { store, credits, auth, mailer, logger, clock } = deps

  const view = async (org: OrgRecord, role: Role, now: number) => {
    const balance = await credits.balance(org.account, now)
    return {
      id: org.publicId,
      name: org.name,
      personal: org.personal,
      plan: org.account.plan,
      credits: { total: balance.total, used: balance.used, remaining: balance.remaining },
      role,
      created_at: iso(org.createdAt),
    }
  }

  /** Touching an owner, or making one, needs an owner. */
  const requireOwnerFor = (caller: Caller, ...roles: Role[]) => {
    if (roles.includes('owner') && caller.role !== 'owner') throw forbiddenForRole(caller.role, 'owner')
  }

  const member = async (org: OrgRecord, accountId: number) => {
    const found = (await store.orgs.members(org.id)).find((m) => m.accountId === accountId)
    if (!found) throw notMember()
    return found
  }

  /** Every page of the log, oldest pages last, in one pass (the export). */
  async function* entries(org: OrgRecord, range: { since?: number; until?: number }) {
    let before: number | null = null
    for (;;) {
      const page = await store.orgs.activity(org.id, 500, before, range)
      yield* page
      if (page.length < 500) return
      before = page.at(-1)!.seq
    }
  }

  return {
    async list(account: AccountRecord) {
      const memberships = await store.orgs.memberships(account.id)
      return {
        orgs: memberships.map((m) => ({
          id: m.org.publicId,
          name: m.org.name,
          personal: m.org.personal,
          role: m.role,
          plan: m.org.account.plan,
          joined_at: iso(m.joinedAt),
        })),
      }
    },

    /** A new organisation on the free plan, with the caller as its owner. */
    async create(account: AccountRecord, name: string, now = clock()) {
      const org = await store.orgs.create(name, newOrgPublicId(), FREE_PLAN, { accountId: account.id, email: account.email, now })
      logger.info('organisation created', { org_id: org.publicId, account_id: account.id })
      return view(org, 'owner', now)
    },

    get: (caller: Caller, now = clock()) => view(caller.org, caller.role, now),

    async delete(caller: Caller) {
      const { org } = caller
      if (org.personal) throw personalOrg('be deleted (delete the account instead)')
      const revoked = (await store.keys.listActiveInOrg(org.id, clock())).length
      if (!(await store.orgs.delete(org.id))) throw orgNotFound()
      // Its keys went with it: drop what memory keeps of them and of its credits at once.
      auth.forget(org.id)
      credits.forget(org.id)
      logger.info('organisation deleted', { org_id: org.publicId, account_id: caller.account.id, revoked_keys: revoked })
      return { deleted: true as const, revoked_keys: revoked }
    },

    async invite(caller: Caller, email: string, role: Role, now = clock()) {
      const { org } = caller
      if (org.personal) throw personalOrg('have other members')
      requireOwnerFor(caller, role)
      const token = randomHex(32)
      const made = await store.orgs.invite(org.id, email, role, sha256Hex(token), now + INVITATION_TTL_MS, actorOf(caller, now))
      if (made === 'member') throw new ApiError('already_member', `${email} is a member of this organisation already`)
      const link = `${deps.publicUrl}/console/#/invitation?token=${token}`
      try {
        await mailer.send(invitationMail(deps.publicUrl, org.name, caller.account.email, role, link), { org_id: org.publicId, invitation_link: link })
      } catch (error) {
        // The invitation stands (an admin may send it again); the mail's failure is the operator's to fix.
        logger.warn('invitation mail not sent', { org_id: org.publicId, error: String(error) })
      }
      return { id: made.id, email: made.email, role: made.role, created_at: iso(made.createdAt), expires_at: iso(made.expiresAt) }

      function invitationMail(publicUrl: string, orgName: string, inviter: string, invitedRole: Role, url: string) {
        return {
          to: email,
          subject: `You are invited to ${orgName} on alttext`,
          text: [
            `${inviter} invites you to the organisation "${orgName}" on the alttext service at ${publicUrl}, as ${invitedRole}.`,
            '',
            `Open this link within ${INVITATION_TTL_DAYS} days to join (sign in, or create an account with this email address first):`,
            url,
            '',
            'If you did not expect this, ignore this mail: nothing happens without the link.',
          ].join('\n'),
        }
      }
    },

    async invitations(caller: Caller, now = clock()) {
      const list = await store.orgs.invitations(caller.org.id, now)
      return { invitations: list.map((i) => ({ id: i.id, email: i.email, role: i.role, created_at: iso(i.createdAt), expires_at: iso(i.expiresAt) })) }
    },

    async revokeInvitation(caller: Caller, invitationId: number, now = clock()) {
      if (!(await store.orgs.revokeInvitation(caller.org.id, invitationId, actorOf(caller, now))))
        throw new ApiError('not_found', 'this organisation has no unused invitation with that id')
      return { revoked: true as const }
    },

    async accept(caller: Caller, token: string, now = clock()) {
      const result = await store.orgs.acceptInvitation(sha256Hex(token), { accountId: caller.account.id, email: caller.account.email, now })
      if (result === 'invalid')
        throw new ApiError('invalid_invitation', 'the invitation is unknown, used, withdrawn, replaced by a newer one, or older than 7 days')
      if (result === 'wrong_email')
        throw new ApiError('invitation_email_mismatch', 'the invitation is for another email address: sign in with the invited address and open the link again')
      if (result === 'member') throw new ApiError('already_member', 'you are a member of this organisation already')
      logger.info('invitation accepted', { org_id: result.org.publicId, account_id: caller.account.id })
      return { org: { id: result.org.publicId, name: result.org.name, role: result.role } }
    },

    async members(caller: Caller) {
      return { members: (await store.orgs.members(caller.org.id)).map(memberView) }
    },

    async setRole(caller: Caller, accountId: number, role: Role, now = clock()) {
      const target = await member(caller.org, accountId)
      requireOwnerFor(caller, role, target.role)
      const changed = await store.orgs.setRole(caller.org.id, accountId, role, actorOf(caller, now))
      if (changed === null) throw notMember()
      if (changed === 'last_owner') throw lastOwner()
      auth.forget(accountId)
      return memberView(changed)
    },

    /** An admin removes a member, or a member leaves (any role may leave). Its keys of the organisation are revoked. */
    async removeMember(caller: Caller, accountId: number, now = clock()) {
      if (caller.org.personal) throw personalOrg('be left')
      const leaving = accountId === caller.account.id
      if (!leaving && !roleAllows(caller.role, 'admin')) throw forbiddenForRole(caller.role, 'admin')
      const target = await member(caller.org, accountId)
      if (!leaving) requireOwnerFor(caller, target.role)
      const removed = await store.orgs.removeMember(caller.org.id, accountId, actorOf(caller, now))
      if (removed === null) throw notMember()
      if (removed === 'last_owner') throw lastOwner()
      auth.forget(accountId)
      logger.info('member removed', { org_id: caller.org.publicId, account_id: accountId, revoked_keys: removed.revokedKeys })
      return { removed: true as const, revoked_keys: removed.revokedKeys }
    },

    async activity(caller: Caller, query: { cursor?: string; limit?: number; since?: string; until?: string }) {
      const limit = query.limit ?? 50
      const range = { since: query.since ? Date.parse(query.since) : undefined, until: query.until ? Date.parse(query.until) : undefined }
      const page = await store.orgs.activity(caller.org.id, limit + 1, query.cursor ? Number(query.cursor) : null, range)
      const shown = page.slice(0, limit)
      return { entries: shown.map(activityView), next_cursor: page.length > limit ? String(shown.at(-1)!.seq) : null }
    },

    /** The whole log (or a range), newest first, as CSV or JSON lines of a JSON array, streamed. */
    exportActivity(caller: Caller, format: 'csv' | 'json', query: { since?: string; until?: string }): ReadableStream<Uint8Array> {
      const range = { since: query.since ? Date.parse(query.since) : undefined, until: query.until ? Date.parse(query.until) : undefined }
      const source = entries(caller.org, range)
      const encoder = new TextEncoder()
      let first = true
      return new ReadableStream({
        async pull(controller) {
          if (first) controller.enqueue(encoder.encode(format === 'csv' ? `${CSV_COLUMNS.join(',')}\r\n` : '['))
          const next = await source.next()
          if (next.done) {
            if (format === 'json') controller.enqueue(encoder.encode(first ? ']' : '\n]\n'))
            controller.close()
            return
          }
          const entry = activityView(next.value)
          const text =
            format === 'csv'
              ? `${[String(entry.seq), entry.at, entry.actor ?? '', entry.action, entry.subject ?? '', JSON.stringify(entry.detail)].map(csvField).join(',')}\r\n`
              : `${first ? '\n' : ',\n'}${JSON.stringify(entry)}`
          first = false
          controller.enqueue(encoder.encode(text))
        },
      })
    },
  }
}

export type OrgsService = ReturnType<typeof createOrgsService>
