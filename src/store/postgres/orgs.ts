// Organisations, members, invitations and the activity log on PostgreSQL (see OrgStore). Each change that
// checks and then writes locks what it checks first: a role change or a removal locks every member row of
// the organisation, so two demotions of its last two owners count one after the other; an invitation is
// used by one UPDATE that a second accept waits on, then finds used. Every change appends its activity entry
// in its own transaction. Role changes and removals notify the member's account ('keys') by trigger.
import type { SQL } from 'bun'
import type { AcceptRefusal, ActivityAction, Actor, Membership, OrgStore, Role } from '../contract'
import { type Db, first, lockAccount } from './connection'
import {
  ACTIVITY_COLUMNS,
  INVITATION_COLUMNS,
  MEMBER_COLUMNS,
  num,
  numOrNull,
  ORG_COLUMNS,
  ORG_JOIN_COLUMNS,
  type Row,
  toActivity,
  toInvitation,
  toMember,
  toMembership,
  toOrg,
} from '../shared/rows'

/** Appends one entry of the organisation's log, in the caller's transaction. */
export async function appendActivity(
  tx: SQL,
  orgId: number,
  action: ActivityAction,
  subject: string | null,
  detail: Record<string, unknown>,
  actor: Actor,
): Promise<void> {
  await tx.unsafe('INSERT INTO org_activity (org_id, at, actor_id, actor_email, action, subject, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    orgId,
    actor.now,
    actor.accountId,
    actor.email,
    action,
    subject,
    JSON.stringify(detail),
  ])
}

const MEMBERSHIP_SELECT = `SELECT ${ORG_JOIN_COLUMNS}, m.role, m.joined_at FROM org_members m JOIN accounts o ON o.id = m.org_id`

/**
 * Locks every member row of the organisation (in one order, so two such transactions cannot deadlock) and
 * returns them: after a wait, the rows as the transaction before left them.
 */
async function lockMembers(tx: SQL, orgId: number): Promise<Row[]> {
  return (await tx.unsafe(
    `SELECT m.account_id, a.email, m.role, m.joined_at FROM org_members m JOIN accounts a ON a.id = m.account_id
     WHERE m.org_id = $1 ORDER BY m.account_id FOR UPDATE OF m`,
    [orgId],
  )) as Row[]
}

const owners = (rows: Row[]) => rows.filter((r) => r.role === 'owner').length

export function createPostgresOrgStore({ transaction, accountTransaction, run }: Db): OrgStore {
  const orgById = async (s: SQL, id: number) => {
    const row = await first(s, `SELECT ${ORG_COLUMNS} FROM accounts WHERE id = $1`, [id])
    return row ? toOrg(row) : null
  }

  return {
    create: (name, publicId, plan, owner) =>
      transaction(async (tx) => {
        // Its id comes from the accounts' sequence: an organisation is a billing account.
        const org = toOrg(
          (await first(
            tx,
            `INSERT INTO accounts (email, password_hash, plan, created_at, email_verified_at, kind, org_public_id, org_name)
             VALUES ('org:' || $1, '', $2, $3, $3, 'organisation', $1, $4) RETURNING ${ORG_COLUMNS}`,
            [publicId, plan, owner.now, name],
          ))!,
        )
        await tx.unsafe(`INSERT INTO org_members (org_id, account_id, role, joined_at) VALUES ($1, $2, 'owner', $3)`, [org.id, owner.accountId, owner.now])
        await appendActivity(tx, org.id, 'org.created', name, {}, owner)
        return org
      }),
    byPublicId: (publicId) =>
      run(async (s) => {
        const row = await first(s, `SELECT ${ORG_COLUMNS} FROM accounts WHERE org_public_id = $1`, [publicId])
        return row ? toOrg(row) : null
      }),
    byId: (id) => run((s) => orgById(s, id)),
    overview: (now) =>
      run(async (s) =>
        (
          (await s.unsafe(
            `SELECT ${ORG_JOIN_COLUMNS},
               (SELECT count(*) FROM org_members m WHERE m.org_id = o.id) AS members,
               (SELECT count(*) FROM api_keys k WHERE k.org_id = o.id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $1)) AS active_keys
             FROM accounts o WHERE o.kind = 'organisation' ORDER BY o.id`,
            [now],
          )) as Row[]
        ).map((r) => ({ org: toOrg(r, 'o_'), members: num(r.members), activeKeys: num(r.active_keys) })),
      ),
    memberships: (accountId) =>
      run(async (s) =>
        ((await s.unsafe(`${MEMBERSHIP_SELECT} WHERE m.account_id = $1 ORDER BY o.kind = 'organisation', lower(o.org_name), o.id`, [accountId])) as Row[]).map(
          toMembership,
        ),
      ),
    membership: (accountId, publicId) =>
      run(async (s) => {
        const row = await first(s, `${MEMBERSHIP_SELECT} WHERE m.account_id = $1 AND o.org_public_id = $2`, [accountId, publicId])
        return row ? toMembership(row) : null
      }),
    members: (orgId) =>
      run(async (s) =>
        (
          (await s.unsafe(
            `SELECT ${MEMBER_COLUMNS} FROM org_members m JOIN accounts a ON a.id = m.account_id WHERE m.org_id = $1 ORDER BY m.joined_at, m.account_id`,
            [orgId],
          )) as Row[]
        ).map(toMember),
      ),
    addMember: (orgId, accountId, role, actor) =>
      transaction(async (tx) => {
        // Share-locked: neither can be deleted before the membership commits. Only a person joins, only a team organisation.
        const found = (await tx.unsafe('SELECT id, email, kind FROM accounts WHERE id IN ($1, $2) ORDER BY id FOR KEY SHARE', [orgId, accountId])) as Row[]
        const member = found.find((r) => num(r.id) === accountId && r.kind === 'person')
        if (!member || !found.some((r) => num(r.id) === orgId && r.kind === 'organisation')) return null
        const row = await first(
          tx,
          `INSERT INTO org_members (org_id, account_id, role, joined_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (org_id, account_id) DO NOTHING RETURNING account_id, role, joined_at`,
          [orgId, accountId, role, actor.now],
        )
        if (!row) return 'exists' as const
        await appendActivity(tx, orgId, 'member.joined', member.email as string, { role }, actor)
        return toMember({ ...row, email: member.email })
      }),
    setRole: (orgId, accountId, role, actor) =>
      transaction(async (tx) => {
        const rows = await lockMembers(tx, orgId)
        const target = rows.find((r) => num(r.account_id) === accountId)
        if (!target) return null
        const from = target.role as Role
        if (from === role) return toMember(target)
        if (from === 'owner' && owners(rows) <= 1) return 'last_owner' as const
        await tx.unsafe('UPDATE org_members SET role = $1 WHERE org_id = $2 AND account_id = $3', [role, orgId, accountId])
        await appendActivity(tx, orgId, 'member.role_changed', target.email as string, { from, to: role }, actor)
        return toMember({ ...target, role })
      }),
    removeMember: (orgId, accountId, actor) =>
      transaction(async (tx) => {
        const rows = await lockMembers(tx, orgId)
        const target = rows.find((r) => num(r.account_id) === accountId)
        if (!target) return null
        if (target.role === 'owner' && owners(rows) <= 1) return 'last_owner' as const
        // Its keys of this organisation stop with its membership; those of its other organisations stay.
        const revoked = await tx.unsafe(`UPDATE api_keys SET revoked_at = $1 WHERE org_id = $2 AND account_id = $3 AND revoked_at IS NULL`, [
          actor.now,
          orgId,
          accountId,
        ])
        const revokedKeys = (revoked as { count: number | null }).count ?? 0
        await tx.unsafe('DELETE FROM org_members WHERE org_id = $1 AND account_id = $2', [orgId, accountId])
        await appendActivity(tx, orgId, 'member.removed', target.email as string, { role: target.role, revoked_keys: revokedKeys }, actor)
        return { revokedKeys }
      }),
    delete: (orgId) =>
      transaction(async (tx) => {
        // Its batches first, while the account is there: their image triggers update its byte count, which a
        // cascade that already dropped that row would insert again (a foreign key error with two batches).
        if (!(await first(tx, `SELECT id FROM accounts WHERE id = $1 AND kind = 'organisation' FOR UPDATE`, [orgId]))) return false
        await tx.unsafe('DELETE FROM batches WHERE account_id = $1', [orgId])
        // Keys, suggestions, invitations, memberships and the log go with it (ON DELETE CASCADE).
        await tx.unsafe('DELETE FROM accounts WHERE id = $1', [orgId])
        return true
      }),
    invite: (orgId, email, role, tokenHash, expiresAt, actor) =>
      accountTransaction(orgId, async (tx) => {
        // The organisation's row lock: two invitations of one email at once leave one.
        await lockAccount(tx, orgId)
        const member = await first(tx, 'SELECT 1 AS one FROM org_members m JOIN accounts a ON a.id = m.account_id WHERE m.org_id = $1 AND a.email = $2', [
          orgId,
          email,
        ])
        if (member) return 'member' as const
        // The older one is ended as used, so its token is refused like any used one.
        await tx.unsafe('UPDATE org_invitations SET used_at = $1 WHERE org_id = $2 AND email = $3 AND used_at IS NULL', [actor.now, orgId, email])
        const row = await first(
          tx,
          `INSERT INTO org_invitations (org_id, email, role, token_hash, invited_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
           RETURNING ${INVITATION_COLUMNS}`,
          [orgId, email, role, tokenHash, actor.accountId, actor.now, expiresAt],
        )
        await appendActivity(tx, orgId, 'member.invited', email, { role }, actor)
        return toInvitation(row!)
      }),
    invitations: (orgId, now) =>
      run(async (s) =>
        (
          (await s.unsafe(
            `SELECT ${INVITATION_COLUMNS} FROM org_invitations WHERE org_id = $1 AND used_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id DESC`,
            [orgId, now],
          )) as Row[]
        ).map(toInvitation),
      ),
    isInvited: (email, now) =>
      run(
        async (s) =>
          (await first(s, 'SELECT 1 AS one FROM org_invitations WHERE email = $1 AND used_at IS NULL AND expires_at > $2 LIMIT 1', [email, now])) !== null,
      ),
    revokeInvitation: (orgId, invitationId, actor) =>
      transaction(async (tx) => {
        const row = await first(tx, 'UPDATE org_invitations SET used_at = $1 WHERE org_id = $2 AND id = $3 AND used_at IS NULL RETURNING email, role', [
          actor.now,
          orgId,
          invitationId,
        ])
        if (!row) return false
        await appendActivity(tx, orgId, 'invitation.revoked', row.email as string, { role: row.role }, actor)
        return true
      }),
    acceptInvitation: (tokenHash, actor) =>
      transaction(async (tx): Promise<Membership | AcceptRefusal> => {
        // One statement checks and uses it: a second accept waits on the row, then finds it used.
        const used = await first(
          tx,
          `UPDATE org_invitations i SET used_at = $2
           WHERE i.token_hash = $1 AND i.used_at IS NULL AND i.expires_at > $2 AND lower(i.email) = lower($3)
             AND NOT EXISTS (SELECT 1 FROM org_members m WHERE m.org_id = i.org_id AND m.account_id = $4)
           RETURNING i.org_id, i.role, i.invited_by`,
          [tokenHash, actor.now, actor.email, actor.accountId],
        )
        if (!used) {
          const seen = await first(tx, 'SELECT org_id, email FROM org_invitations WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2', [
            tokenHash,
            actor.now,
          ])
          if (!seen) return 'invalid'
          if ((seen.email as string).toLowerCase() !== actor.email.toLowerCase()) return 'wrong_email'
          return 'member'
        }
        const orgId = num(used.org_id)
        const role = used.role as Role
        const joined = await first(
          tx,
          `INSERT INTO org_members (org_id, account_id, role, joined_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (org_id, account_id) DO NOTHING RETURNING joined_at`,
          [orgId, actor.accountId, role, actor.now],
        )
        // Made a member meanwhile by another way (alttext admin): the invitation stays unused.
        if (!joined) {
          await tx.unsafe('UPDATE org_invitations SET used_at = NULL WHERE token_hash = $1', [tokenHash])
          return 'member'
        }
        await appendActivity(tx, orgId, 'member.joined', actor.email, { role, invited_by: numOrNull(used.invited_by) }, actor)
        return { org: (await orgById(tx, orgId))!, role, joinedAt: actor.now }
      }),
    record: (orgId, action, subject, detail, actor) => transaction((tx) => appendActivity(tx, orgId, action, subject, detail, actor)),
    activity: (orgId, limit, beforeSeq, range = {}) =>
      run(async (s) =>
        (
          (await s.unsafe(
            `SELECT ${ACTIVITY_COLUMNS} FROM org_activity
             WHERE org_id = $1 AND ($2::bigint IS NULL OR seq < $2) AND ($3::bigint IS NULL OR at >= $3) AND ($4::bigint IS NULL OR at < $4)
             ORDER BY seq DESC LIMIT $5`,
            [orgId, beforeSeq, range.since ?? null, range.until ?? null, limit],
          )) as Row[]
        ).map(toActivity),
      ),
  }
}
