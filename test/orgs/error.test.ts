// Organisations, the refusals: unknown roles, members invited again, invitations no longer usable, the last
// owner, what an admin may not do, personal organisations, malformed ids and cursors, and races.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { startTestService, type TestService } from '../support/service'
import { signIn, withSession } from '../support/session'
import { join, makeTeam, memoryMailer, orgKey, type Team } from './team'

// The first file of a run may start the PostgreSQL cluster (ALTTEXT_TEST_ENGINE=postgres) in its hook.
setDefaultTimeout(30_000)

let service: TestService
let now = Date.UTC(2026, 11, 1, 12, 0, 0)
const mailer = memoryMailer()
let team: Team

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now, mailer } })
  team = await makeTeam(service, mailer)
})
afterAll(() => service.stop())

const DAY_MS = 86_400_000

const expectError = (res: { status: number; body: any; text: string }, status: number, code: string) => {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code })
}

/** A fresh organisation with only its owner, and that owner's key of it. */
async function soloOrg(name = 'Solo') {
  const owner = await service.api.register()
  const made = await service.api.post('/api/orgs', { name }, owner.apiKey)
  const k = await orgKey(service.api, owner.apiKey, made.body.id)
  return { id: made.body.id as string, owner, key: k.key }
}

describe('roles and invitations', () => {
  test('an unknown role is 400, in an invitation and in a role change', async () => {
    const invited = await service.api.post(`/api/orgs/${team.id}/invitations`, { email: 'x@example.com', role: 'superuser' }, team.owner.orgKey)
    expectError(invited, 400, 'invalid_request')
    const changed = await service.api.patch(`/api/orgs/${team.id}/members/${team.author.accountId}`, { role: 'boss' }, team.owner.orgKey)
    expectError(changed, 400, 'invalid_request')
  })

  test('inviting an existing member is 409 already_member (the address in any case)', async () => {
    const res = await service.api.post(`/api/orgs/${team.id}/invitations`, { email: team.reviewer.email, role: 'author' }, team.admin.orgKey)
    expectError(res, 409, 'already_member')
    const upper = await service.api.post(`/api/orgs/${team.id}/invitations`, { email: team.reviewer.email.toUpperCase(), role: 'author' }, team.admin.orgKey)
    expectError(upper, 409, 'already_member')
  })

  test('an expired invitation is 400 invalid_invitation, and is not listed', async () => {
    const person = await service.api.register()
    await service.api.post(`/api/orgs/${team.id}/invitations`, { email: person.email, role: 'author' }, team.admin.orgKey)
    const token = mailer.tokenFor(person.email)
    const saved = now
    now += 7 * DAY_MS + 1
    try {
      expectError(await service.api.post('/api/invitations/accept', { token }, person.apiKey), 400, 'invalid_invitation')
      const listed = await service.api.get(`/api/orgs/${team.id}/invitations`, team.admin.orgKey)
      expect(listed.body.invitations.map((i: { email: string }) => i.email)).not.toContain(person.email)
    } finally {
      now = saved
    }
  })

  test('a used invitation is 400 invalid_invitation, also for the one who used it after leaving', async () => {
    const { id, key } = await soloOrg('Used')
    const person = await service.api.register()
    await service.api.post(`/api/orgs/${id}/invitations`, { email: person.email, role: 'author' }, key)
    const token = mailer.tokenFor(person.email)
    expect((await service.api.post('/api/invitations/accept', { token }, person.apiKey)).status).toBe(200)
    expectError(await service.api.post('/api/invitations/accept', { token }, person.apiKey), 400, 'invalid_invitation')
  })

  test('a withdrawn invitation, or one replaced by a newer, is 400 invalid_invitation', async () => {
    const person = await service.api.register()
    const first = await service.api.post(`/api/orgs/${team.id}/invitations`, { email: person.email, role: 'author' }, team.admin.orgKey)
    const replaced = mailer.tokenFor(person.email)
    const second = await service.api.post(`/api/orgs/${team.id}/invitations`, { email: person.email, role: 'reviewer' }, team.admin.orgKey)
    expect(second.body.id).not.toBe(first.body.id)
    expectError(await service.api.post('/api/invitations/accept', { token: replaced }, person.apiKey), 400, 'invalid_invitation')
    const withdrawn = await service.api.delete(`/api/orgs/${team.id}/invitations/${second.body.id}`, team.admin.orgKey)
    expect(withdrawn.status).toBe(200)
    expectError(await service.api.post('/api/invitations/accept', { token: mailer.tokenFor(person.email) }, person.apiKey), 400, 'invalid_invitation')
    // Withdrawn twice: there is no unused invitation with that id any more.
    expectError(await service.api.delete(`/api/orgs/${team.id}/invitations/${second.body.id}`, team.admin.orgKey), 404, 'not_found')
  })

  test('an unknown or malformed token', async () => {
    const person = await service.api.register()
    expectError(await service.api.post('/api/invitations/accept', { token: 'ab'.repeat(32) }, person.apiKey), 400, 'invalid_invitation')
    expectError(await service.api.post('/api/invitations/accept', { token: 'not-a-token' }, person.apiKey), 400, 'invalid_request')
    expectError(await service.api.post('/api/invitations/accept', {}, person.apiKey), 400, 'invalid_request')
  })

  test('accepting with another address is 403 invitation_email_mismatch, and the invitation stays usable', async () => {
    const invitee = await service.api.register()
    const other = await service.api.register()
    await service.api.post(`/api/orgs/${team.id}/invitations`, { email: invitee.email, role: 'author' }, team.admin.orgKey)
    const token = mailer.tokenFor(invitee.email)
    expectError(await service.api.post('/api/invitations/accept', { token }, other.apiKey), 403, 'invitation_email_mismatch')
    expect((await service.api.post('/api/invitations/accept', { token }, invitee.apiKey)).status).toBe(200)
    await service.api.delete(`/api/orgs/${team.id}/members/${await memberId(team.id, invitee.email)}`, team.admin.orgKey)
  })
})

async function memberId(orgId: string, email: string): Promise<number> {
  const { owner } = team
  const list = await service.api.get(`/api/orgs/${orgId}/members`, orgId === team.id ? owner.orgKey : '')
  return list.body.members.find((m: { email: string }) => m.email === email).account_id
}

describe('owners', () => {
  test('demoting or removing the last owner is 409 last_owner, also by itself', async () => {
    const { id, owner, key } = await soloOrg('One owner')
    const ownerId = (await service.api.get(`/api/orgs/${id}/members`, key)).body.members[0].account_id
    expectError(await service.api.patch(`/api/orgs/${id}/members/${ownerId}`, { role: 'admin' }, key), 409, 'last_owner')
    expectError(await service.api.delete(`/api/orgs/${id}/members/${ownerId}`, key), 409, 'last_owner')
    const members = await service.api.get(`/api/orgs/${id}/members`, key)
    expect(members.body.members).toEqual([expect.objectContaining({ email: owner.email, role: 'owner' })])
  })

  test('an admin may not make an owner, touch an owner, or invite one: 403 forbidden_for_role', async () => {
    const { admin, owner, author } = team
    expectError(await service.api.patch(`/api/orgs/${team.id}/members/${author.accountId}`, { role: 'owner' }, admin.orgKey), 403, 'forbidden_for_role')
    expectError(await service.api.patch(`/api/orgs/${team.id}/members/${owner.accountId}`, { role: 'author' }, admin.orgKey), 403, 'forbidden_for_role')
    expectError(await service.api.delete(`/api/orgs/${team.id}/members/${owner.accountId}`, admin.orgKey), 403, 'forbidden_for_role')
    expectError(
      await service.api.post(`/api/orgs/${team.id}/invitations`, { email: 'boss@example.com', role: 'owner' }, admin.orgKey),
      403,
      'forbidden_for_role',
    )
    const roles = (await service.api.get(`/api/orgs/${team.id}/members`, owner.orgKey)).body.members.map((m: { role: string }) => m.role)
    expect(roles.filter((r: string) => r === 'owner')).toHaveLength(1)
  })

  test('a reviewer may not remove another member, but is told so (403), not 404', async () => {
    expectError(await service.api.delete(`/api/orgs/${team.id}/members/${team.author.accountId}`, team.reviewer.orgKey), 403, 'forbidden_for_role')
  })

  test('changing a role of an account that is no member is 404 not_found', async () => {
    const stranger = await service.api.register()
    const { rows } = { rows: await service.query<{ id: number }>('SELECT id FROM accounts WHERE email = ?', stranger.email) }
    expectError(await service.api.patch(`/api/orgs/${team.id}/members/${rows[0]!.id}`, { role: 'author' }, team.owner.orgKey), 404, 'not_found')
    expectError(await service.api.delete(`/api/orgs/${team.id}/members/${rows[0]!.id}`, team.owner.orgKey), 404, 'not_found')
  })
})

describe('personal organisations', () => {
  test('cannot be deleted, left, or invited into: 409 personal_org', async () => {
    const person = await service.api.register()
    const personalId = (await service.api.get('/api/orgs', person.apiKey)).body.orgs[0].id
    const accountId = (await service.api.get(`/api/orgs/${personalId}/members`, person.apiKey)).body.members[0].account_id
    expectError(await service.api.delete(`/api/orgs/${personalId}`, person.apiKey), 409, 'personal_org')
    expectError(
      await service.api.post(`/api/orgs/${personalId}/invitations`, { email: 'friend@example.com', role: 'author' }, person.apiKey),
      409,
      'personal_org',
    )
    expectError(await service.api.delete(`/api/orgs/${personalId}/members/${accountId}`, person.apiKey), 409, 'personal_org')
    // The key still works in its organisation afterwards.
    expect((await service.api.get(`/api/orgs/${personalId}`, person.apiKey)).body.personal).toBe(true)
  })
})

describe('malformed ids and cursors', () => {
  test('a malformed organisation id is 400 invalid_request', async () => {
    for (const bad of ['org_123', 'org_ZZZZZZZZZZZZZZZZZZZZZZZZ', '1', 'org_5f0c3e9a1b2d4c6e8f0a1b2c0']) {
      expectError(await service.api.get(`/api/orgs/${bad}`, team.owner.orgKey), 400, 'invalid_request')
      expectError(await service.api.get(`/api/orgs/${bad}/members`, team.owner.orgKey), 400, 'invalid_request')
    }
    // Without credentials it is 401 first; with a session, 400 as with a key.
    expectError(await service.api.get('/api/orgs/org_123/members'), 401, 'missing_api_key')
    const { cookie } = await signIn(service, team.author.email, team.author.password)
    expectError(await withSession(service, cookie, 'GET', '/api/orgs/org_123/members', undefined, { 'x-alttext-org': team.id }), 400, 'invalid_request')
    // A well-formed id of no organisation is 404.
    expectError(await service.api.get('/api/orgs/org_000000000000000000000000', team.owner.orgKey), 404, 'org_not_found')
    expectError(await service.api.post('/api/keys', { org_id: 'org_1' }, team.owner.apiKey), 400, 'invalid_request')
    expectError(await service.api.post('/api/keys', { org_id: 'org_000000000000000000000000' }, team.owner.apiKey), 404, 'org_not_found')
  })

  test('malformed member, invitation ids and cursors are 400', async () => {
    expectError(await service.api.patch(`/api/orgs/${team.id}/members/abc`, { role: 'author' }, team.owner.orgKey), 400, 'invalid_request')
    expectError(await service.api.delete(`/api/orgs/${team.id}/members/-1`, team.owner.orgKey), 400, 'invalid_request')
    expectError(await service.api.delete(`/api/orgs/${team.id}/invitations/0`, team.owner.orgKey), 400, 'invalid_request')
    for (const cursor of ['abc', '0', '-5', '1.5', '99999999999999999999', "1' OR 1=1"]) {
      const res = await service.api.get(`/api/orgs/${team.id}/activity?cursor=${encodeURIComponent(cursor)}`, team.owner.orgKey)
      expectError(res, 400, 'invalid_request')
    }
    for (const query of ['limit=0', 'limit=201', 'limit=x', 'since=yesterday', 'until=2026-13-01T00:00:00Z']) {
      expectError(await service.api.get(`/api/orgs/${team.id}/activity?${query}`, team.owner.orgKey), 400, 'invalid_request')
    }
    expectError(await service.api.get(`/api/orgs/${team.id}/activity/export?format=xlsx`, team.owner.orgKey), 400, 'invalid_request')
  })

  test("a cursor of another organisation's log shows none of that organisation's entries", async () => {
    const other = await soloOrg('Other log')
    const otherLog = await service.api.get(`/api/orgs/${other.id}/activity`, other.key)
    const otherSeqs = new Set<number>(otherLog.body.entries.map((e: { seq: number }) => e.seq))
    const cursor = Math.max(...otherSeqs) + 1
    const res = await service.api.get(`/api/orgs/${team.id}/activity?cursor=${cursor}&limit=200`, team.owner.orgKey)
    expect(res.status).toBe(200)
    for (const e of res.body.entries) expect(otherSeqs.has(e.seq)).toBe(false)
    const teamLog = await service.api.get(`/api/orgs/${team.id}/activity?limit=200`, team.owner.orgKey)
    const teamSeqs = new Set(teamLog.body.entries.map((e: { seq: number }) => e.seq))
    for (const e of res.body.entries) expect(teamSeqs.has(e.seq)).toBe(true)
  })
})

describe('races', () => {
  test('one invitation accepted twice at once: one 200, one membership', async () => {
    const { id, key } = await soloOrg('Race')
    const person = await service.api.register()
    await service.api.post(`/api/orgs/${id}/invitations`, { email: person.email, role: 'author' }, key)
    const token = mailer.tokenFor(person.email)
    const results = await Promise.all(Array.from({ length: 4 }, () => service.api.post('/api/invitations/accept', { token }, person.apiKey)))
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    for (const r of results.filter((r) => r.status !== 200)) expect(['invalid_invitation', 'already_member']).toContain(r.body.error.code)
    const members = await service.api.get(`/api/orgs/${id}/members`, key)
    expect(members.body.members.filter((m: { email: string }) => m.email === person.email)).toHaveLength(1)
  })

  test('two owners demoting each other at once: at most one passes, the other is 409 last_owner', async () => {
    const { id, owner, key } = await soloOrg('Two owners')
    const second = await service.api.register()
    await join(service.api, mailer, id, key, second, 'owner')
    const secondKey = (await orgKey(service.api, second.apiKey, id)).key
    const members = (await service.api.get(`/api/orgs/${id}/members`, key)).body.members as { account_id: number; email: string }[]
    const firstId = members.find((m) => m.email === owner.email)!.account_id
    const secondId = members.find((m) => m.email === second.email)!.account_id
    const [a, b] = await Promise.all([
      service.api.patch(`/api/orgs/${id}/members/${secondId}`, { role: 'admin' }, key),
      service.api.patch(`/api/orgs/${id}/members/${firstId}`, { role: 'admin' }, secondKey),
    ])
    const statuses = [a.status, b.status].sort()
    // The loser may also have lost its owner role first (403): never both demoted.
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    for (const r of [a, b].filter((r) => r.status !== 200)) expect(['last_owner', 'forbidden_for_role']).toContain(r.body.error.code)
    const after = (await service.api.get(`/api/orgs/${id}/members`, key)).body.members as { role: string }[]
    expect(after.filter((m) => m.role === 'owner')).toHaveLength(1)
  })
})
