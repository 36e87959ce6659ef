// Organisations, members, invitations and the activity log on bun:sqlite (see contract/orgs.ts). SQLite
// admits one writer at a time, so a check and the change it guards in one immediate transaction are exact.
import type { Database } from 'bun:sqlite'
import type { AcceptRefusal, ActivityAction, Actor, InvitationRecord, Membership, OrgRecord, OrgStore, Role } from '../contract'
import {
  ACTIVITY_COLUMNS,
  INVITATION_COLUMNS,
  MEMBER_COLUMNS,
  ORG_COLUMNS,
  ORG_JOIN_COLUMNS,
  type Row,
  toActivity,
  toInvitation,
  toMember,
  toMembership,
  toOrg,
} from '../shared/rows'
import type { Write } from './connection'

const ACTIVE_KEY = 'k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?1)'

export function createOrgStore(db: Database, write: Write): OrgStore {
  const q = {
    insertOrg: db.query<Row, [string, string, string, number]>(
      `INSERT INTO accounts (email, password_hash, plan, created_at, email_verified_at, kind, org_public_id, org_name)
       VALUES ('org:' || ?1, '', ?3, ?4, ?4, 'organisation', ?1, ?2) RETURNING ${ORG_COLUMNS}`,
    ),
    byPublicId: db.query<Row, [string]>(`SELECT ${ORG_COLUMNS} FROM accounts WHERE org_public_id = ?`),
    byId: db.query<Row, [number]>(`SELECT ${ORG_COLUMNS} FROM accounts WHERE id = ?`),
    overview: db.query<Row, [number]>(
      `SELECT ${ORG_COLUMNS},
         (SELECT count(*) FROM org_members m WHERE m.org_id = accounts.id) AS members,
         (SELECT count(*) FROM api_keys k WHERE k.org_id = accounts.id AND ${ACTIVE_KEY}) AS active_keys
       FROM accounts WHERE kind = 'organisation' ORDER BY id`,
    ),
    memberships: db.query<Row, [number]>(
      `SELECT ${ORG_JOIN_COLUMNS}, m.role, m.joined_at FROM org_members m JOIN accounts o ON o.id = m.org_id
       WHERE m.account_id = ? ORDER BY o.kind = 'organisation', o.org_name COLLATE NOCASE, o.id`,
    ),
    membership: db.query<Row, [number, string]>(
      `SELECT ${ORG_JOIN_COLUMNS}, m.role, m.joined_at FROM org_members m JOIN accounts o ON o.id = m.org_id
       WHERE m.account_id = ? AND o.org_public_id = ?`,
    ),
    members: db.query<Row, [number]>(
      `SELECT ${MEMBER_COLUMNS} FROM org_members m JOIN accounts a ON a.id = m.account_id WHERE m.org_id = ? ORDER BY m.joined_at, m.account_id`,
    ),
    member: db.query<Row, [number, number]>(
      `SELECT ${MEMBER_COLUMNS} FROM org_members m JOIN accounts a ON a.id = m.account_id WHERE m.org_id = ? AND m.account_id = ?`,
    ),
    memberByEmail: db.query<{ one: number }, [number, string]>(
      'SELECT 1 AS one FROM org_members m JOIN accounts a ON a.id = m.account_id WHERE m.org_id = ? AND a.email = ?',
    ),
    insertMember: db.query<null, [number, number, string, number]>(
      'INSERT INTO org_members (org_id, account_id, role, joined_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    setRole: db.query<null, [string, number, number]>('UPDATE org_members SET role = ? WHERE org_id = ? AND account_id = ?'),
    removeMember: db.query<null, [number, number]>('DELETE FROM org_members WHERE org_id = ? AND account_id = ?'),
    owners: db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM org_members WHERE org_id = ? AND role = 'owner'"),
    revokeMemberKeys: db.query<null, [number, number, number]>('UPDATE api_keys SET revoked_at = ? WHERE org_id = ? AND account_id = ? AND revoked_at IS NULL'),
    accountKind: db.query<{ kind: string }, [number]>('SELECT kind FROM accounts WHERE id = ?'),
    deleteOrg: db.query<null, [number]>("DELETE FROM accounts WHERE id = ? AND kind = 'organisation'"),
    replaceInvitations: db.query<null, [number, number, string]>('UPDATE org_invitations SET used_at = ? WHERE org_id = ? AND email = ? AND used_at IS NULL'),
    insertInvitation: db.query<Row, [number, string, string, string, number | null, number, number]>(
      `INSERT INTO org_invitations (org_id, email, role, token_hash, invited_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${INVITATION_COLUMNS}`,
    ),
    invitations: db.query<Row, [number, number]>(
      `SELECT ${INVITATION_COLUMNS} FROM org_invitations WHERE org_id = ? AND used_at IS NULL AND expires_at > ? ORDER BY id DESC`,
    ),
    invited: db.query<{ one: number }, [string, number]>('SELECT 1 AS one FROM org_invitations WHERE email = ? AND used_at IS NULL AND expires_at > ? LIMIT 1'),
    revokeInvitation: db.query<Row, [number, number, number]>(
      `UPDATE org_invitations SET used_at = ? WHERE org_id = ? AND id = ? AND used_at IS NULL RETURNING ${INVITATION_COLUMNS}`,
    ),
    usableInvitation: db.query<Row, [string, number]>(
      `SELECT ${INVITATION_COLUMNS} FROM org_invitations WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
    ),
    useInvitation: db.query<null, [number, number]>('UPDATE org_invitations SET used_at = ? WHERE id = ?'),
    isMember: db.query<{ one: number }, [number, number]>('SELECT 1 AS one FROM org_members WHERE org_id = ? AND account_id = ?'),
    append: db.query<null, [number, number, number | null, string | null, string, string | null, string]>(
      'INSERT INTO org_activity (org_id, at, actor_id, actor_email, action, subject, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    activity: db.query<Row, [number, number, number, number, number]>(
      `SELECT ${ACTIVITY_COLUMNS} FROM org_activity WHERE org_id = ?1 AND seq < ?2 AND at >= ?3 AND at < ?4 ORDER BY seq DESC LIMIT ?5`,
    ),
  }

  const append = (orgId: number, action: ActivityAction, subject: string | null, detail: Record<string, unknown>, actor: Actor) =>
    q.append.run(orgId, actor.now, actor.accountId, actor.email, action, subject, JSON.stringify(detail))

  const create = db.transaction((name: string, publicId: string, plan: string, owner: Actor & { accountId: number }) => {
    const org = toOrg(q.insertOrg.get(publicId, name, plan, owner.now)!)
    q.insertMember.run(org.id, owner.accountId, 'owner', owner.now)
    append(org.id, 'org.created', name, {}, owner)
    return org
  })

  const addMember = db.transaction((orgId: number, accountId: number, role: Role, actor: Actor) => {
    if (q.accountKind.get(orgId)?.kind !== 'organisation' || q.accountKind.get(accountId)?.kind !== 'person') return null
    if (q.isMember.get(orgId, accountId)) return 'exists' as const
    q.insertMember.run(orgId, accountId, role, actor.now)
    const member = toMember(q.member.get(orgId, accountId)!)
    append(orgId, 'member.joined', member.email, { role }, actor)
    return member
  })

  const setRole = db.transaction((orgId: number, accountId: number, role: Role, actor: Actor) => {
    const before = q.member.get(orgId, accountId)
    if (!before) return null
    const from = before.role as Role
    if (from === 'owner' && role !== 'owner' && q.owners.get(orgId)!.n <= 1) return 'last_owner' as const
    if (from === role) return toMember(before)
    q.setRole.run(role, orgId, accountId)
    const member = toMember(q.member.get(orgId, accountId)!)
    append(orgId, 'member.role_changed', member.email, { from, to: role }, actor)
    return member
  })

  const removeMember = db.transaction((orgId: number, accountId: number, actor: Actor) => {
    const before = q.member.get(orgId, accountId)
    if (!before) return null
    if (before.role === 'owner' && q.owners.get(orgId)!.n <= 1) return 'last_owner' as const
    const revokedKeys = q.revokeMemberKeys.run(actor.now, orgId, accountId).changes
    q.removeMember.run(orgId, accountId)
    append(orgId, 'member.removed', before.email as string, { role: before.role, revoked_keys: revokedKeys }, actor)
    return { revokedKeys }
  })

  const invite = db.transaction((orgId: number, email: string, role: Role, tokenHash: string, expiresAt: number, actor: Actor) => {
    if (q.memberByEmail.get(orgId, email)) return 'member' as const
    q.replaceInvitations.run(actor.now, orgId, email)
    const invitation = toInvitation(q.insertInvitation.get(orgId, email, role, tokenHash, actor.accountId, actor.now, expiresAt)!)
    append(orgId, 'member.invited', email, { role }, actor)
    return invitation
  })

  const revokeInvitation = db.transaction((orgId: number, invitationId: number, actor: Actor) => {
    const row = q.revokeInvitation.get(actor.now, orgId, invitationId)
    if (!row) return false
    append(orgId, 'invitation.revoked', row.email as string, { role: row.role }, actor)
    return true
  })

  const accept = db.transaction((tokenHash: string, actor: Actor & { accountId: number; email: string }): Membership | AcceptRefusal => {
    const row = q.usableInvitation.get(tokenHash, actor.now)
    if (!row) return 'invalid'
    const invitation: InvitationRecord = toInvitation(row)
    if (invitation.email.toLowerCase() !== actor.email.toLowerCase()) return 'wrong_email'
    if (q.isMember.get(invitation.orgId, actor.accountId)) return 'member'
    q.useInvitation.run(actor.now, invitation.id)
    q.insertMember.run(invitation.orgId, actor.accountId, invitation.role, actor.now)
    append(invitation.orgId, 'member.joined', actor.email, { role: invitation.role, invited_by: invitation.invitedBy }, actor)
    const org = toOrg(q.byId.get(invitation.orgId)!)
    return { org, role: invitation.role, joinedAt: actor.now }
  })

  const found = (row: Row | null): OrgRecord | null => (row ? toOrg(row) : null)

  return {
    create: (name, publicId, plan, owner) => write(() => create.immediate(name, publicId, plan, owner)),
    byPublicId: async (publicId) => found(q.byPublicId.get(publicId)),
    byId: async (id) => found(q.byId.get(id)),
    overview: async (now) => q.overview.all(now).map((r) => ({ org: toOrg(r), members: Number(r.members), activeKeys: Number(r.active_keys) })),
    memberships: async (accountId) => q.memberships.all(accountId).map(toMembership),
    membership: async (accountId, publicId) => {
      const row = q.membership.get(accountId, publicId)
      return row ? toMembership(row) : null
    },
    members: async (orgId) => q.members.all(orgId).map(toMember),
    addMember: (orgId, accountId, role, actor) => write(() => addMember.immediate(orgId, accountId, role, actor)),
    setRole: (orgId, accountId, role, actor) => write(() => setRole.immediate(orgId, accountId, role, actor)),
    removeMember: (orgId, accountId, actor) => write(() => removeMember.immediate(orgId, accountId, actor)),
    delete: (orgId) => write(() => q.deleteOrg.run(orgId).changes > 0),
    invite: (orgId, email, role, tokenHash, expiresAt, actor) => write(() => invite.immediate(orgId, email, role, tokenHash, expiresAt, actor)),
    invitations: async (orgId, now) => q.invitations.all(orgId, now).map(toInvitation),
    isInvited: async (email, now) => q.invited.get(email, now) !== null,
    revokeInvitation: (orgId, invitationId, actor) => write(() => revokeInvitation.immediate(orgId, invitationId, actor)),
    acceptInvitation: (tokenHash, actor) => write(() => accept.immediate(tokenHash, actor)),
    record: (orgId, action, subject, detail, actor) => write(() => void append(orgId, action, subject, detail, actor)),
    activity: async (orgId, limit, beforeSeq, range = {}) =>
      q.activity.all(orgId, beforeSeq ?? Number.MAX_SAFE_INTEGER, range.since ?? 0, range.until ?? Number.MAX_SAFE_INTEGER, limit).map(toActivity),
  }
}
