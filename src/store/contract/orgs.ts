// Organisations, their members and invitations, and the activity log auditors read.
// An organisation is a billing account, as on GitHub: a row of `accounts` of kind `organisation`, with no
// password and no mailbox, so plans, credits, holds, grants and the change feed work on it unchanged. A
// person's own account is its personal organisation (same id), of which it is the one owner.
import type { AccountRecord } from './accounts'

/** Roles, strongest first; each may do everything the ones after it may. */
export const ROLES = ['owner', 'admin', 'reviewer', 'author'] as const
export type Role = (typeof ROLES)[number]

/** How strong a role is: 0 for owner; a role may do what any role of a higher number may. */
export const roleRank = (role: Role): number => ROLES.indexOf(role)

/** Does `role` include `needed`? */
export const roleAllows = (role: Role, needed: Role): boolean => roleRank(role) <= roleRank(needed)

export type OrgRecord = {
  /** The organisation's billing account's id: credits and plans are kept under it. */
  id: number
  /** The opaque id the API shows (`org_…`). */
  publicId: string
  /** Its name; `Personal` for a personal organisation. */
  name: string
  /** A person's own organisation: it cannot be deleted, left, or given other members. */
  personal: boolean
  /** The billing account (plan, credits per period, disabled): the person's own for a personal organisation. */
  account: AccountRecord
  createdAt: number
}

export type Membership = { org: OrgRecord; role: Role; joinedAt: number }

export type MemberRecord = { accountId: number; email: string; role: Role; joinedAt: number }

export type InvitationRecord = {
  id: number
  orgId: number
  email: string
  role: Role
  invitedBy: number | null
  createdAt: number
  expiresAt: number
  acceptedAt: number | null
}

/** What the activity log records (one vocabulary for both engines and every export). */
export const ACTIVITY_ACTIONS = [
  'org.created',
  'org.renamed',
  'org.plan_changed',
  'org.credits_granted',
  'org.webhook_set',
  'member.invited',
  'invitation.revoked',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'key.created',
  'key.revoked',
  'suggestion.created',
  'suggestion.accepted',
  'suggestion.edited',
  'suggestion.rejected',
  'suggestion.reopened',
] as const
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number]

/** One entry of an organisation's activity log. `actorId` null: the operator (alttext admin) or the service. */
export type ActivityEntry = {
  seq: number
  orgId: number
  at: number
  actorId: number | null
  /** The actor's email when the entry was written (kept when the account goes). */
  actorEmail: string | null
  action: ActivityAction
  /** What it was done to: an email, a key prefix, a suggestion id. */
  subject: string | null
  /** Small facts of the change (old and new role, the final alt text); JSON-safe. */
  detail: Record<string, unknown>
}

/** Who does a change and when: every mutating call below appends its activity entry in its own transaction. */
export type Actor = { accountId: number | null; email: string | null; now: number }

export type OrgOverview = { org: OrgRecord; members: number; activeKeys: number }

/**
 * `invalid`: no unused, unexpired invitation with that token; `wrong_email`: it names another address;
 * `member`: the account is a member already (the invitation stays unused).
 */
export type AcceptRefusal = 'invalid' | 'wrong_email' | 'member'

export interface OrgStore {
  /**
   * In one transaction: a new organisation (its billing account of kind `organisation`, on `plan`), the
   * actor as its owner, and its `org.created` entry.
   */
  create(name: string, publicId: string, plan: string, owner: Actor & { accountId: number }): Promise<OrgRecord>
  byPublicId(publicId: string): Promise<OrgRecord | null>
  byId(id: number): Promise<OrgRecord | null>
  /** Every organisation (admin), oldest first, with member and active-key counts at `now`. */
  overview(now: number): Promise<OrgOverview[]>
  /** The organisations the account belongs to, its personal one first, then by name. */
  memberships(accountId: number): Promise<Membership[]>
  /** The account's membership of the organisation with this public id; null when it is none of its. */
  membership(accountId: number, publicId: string): Promise<Membership | null>
  members(orgId: number): Promise<MemberRecord[]>
  /** Adds a member (alttext admin); `exists` when the account is one already, null when either is gone. */
  addMember(orgId: number, accountId: number, role: Role, actor: Actor): Promise<MemberRecord | 'exists' | null>
  /**
   * Changes a member's role; `last_owner` when that would leave the organisation without an owner (checked
   * in the same transaction, so two demotions at once cannot both pass). Null when it is no member.
   */
  setRole(orgId: number, accountId: number, role: Role, actor: Actor): Promise<MemberRecord | 'last_owner' | null>
  /**
   * Removes a member and revokes every key it made for the organisation, in one transaction; `last_owner`
   * as for setRole. Null when it is no member.
   */
  removeMember(orgId: number, accountId: number, actor: Actor): Promise<{ revokedKeys: number } | 'last_owner' | null>
  /** Deletes an organisation that is not personal, with its keys, suggestions and log; false when there is none. */
  delete(orgId: number): Promise<boolean>
  /**
   * Stores an invitation (only its token's hash); `member` when the email is a member's already. An older
   * unused invitation of the same email to the same organisation is replaced.
   */
  invite(orgId: number, email: string, role: Role, tokenHash: string, expiresAt: number, actor: Actor): Promise<InvitationRecord | 'member'>
  /** Unused, unexpired invitations of the organisation, newest first. */
  invitations(orgId: number, now: number): Promise<InvitationRecord[]>
  /** Is there an unused, unexpired invitation of this email to any organisation? (It lets the email sign up where sign-up is closed.) */
  isInvited(email: string, now: number): Promise<boolean>
  /** Withdraws an unused invitation; false when there is none with that id in the organisation. */
  revokeInvitation(orgId: number, invitationId: number, actor: Actor): Promise<boolean>
  /**
   * In one transaction: checks the invitation is unused, unexpired and names the actor's email, marks it
   * used and makes the membership. Two accepts at once: one membership, the other `invalid`.
   */
  acceptInvitation(tokenHash: string, actor: Actor & { accountId: number; email: string }): Promise<Membership | AcceptRefusal>
  /** Appends an entry of something the store does not do itself (a plan changed by the operator, a key made). */
  record(orgId: number, action: ActivityAction, subject: string | null, detail: Record<string, unknown>, actor: Actor): Promise<void>
  /** The organisation's activity, newest first, before the cursor `beforeSeq` (null: from the newest), within [since, until). */
  activity(orgId: number, limit: number, beforeSeq: number | null, range?: { since?: number; until?: number }): Promise<ActivityEntry[]>
}
