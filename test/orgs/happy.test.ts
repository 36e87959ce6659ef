// Organisations, the paths that succeed: create, invite by mail, accept, roles, keys of the organisation,
// the activity log and its export, leaving and deleting.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { startSmtpCapture, type SmtpCapture } from '../support/smtp'
import { adminJson, adminOf } from '../admin/support'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { type ApiResponse, startTestService, type TestService, waitUntil } from '../support/service'
import { signIn, withSession } from '../support/session'
import { join, makeTeam, memoryMailer, orgKey, type Team } from './team'

// The first file of a run may start the PostgreSQL cluster (ALTTEXT_TEST_ENGINE=postgres) in its hook.
setDefaultTimeout(30_000)

let service: TestService
let smtp: SmtpCapture

beforeAll(async () => {
  smtp = await startSmtpCapture()
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test' } })
})
afterAll(async () => {
  await service.stop()
  await smtp.stop()
})

const tokenOf = (text: string) => /token=([0-9a-f]{64})/u.exec(text)?.[1] ?? ''

describe('an organisation, end to end', () => {
  test('create, invite, accept, change a role, make a key, read the log', async () => {
    const owner = await service.api.register()
    const made = await service.api.post('/api/orgs', { name: 'Docs team' }, owner.apiKey)
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({ name: 'Docs team', personal: false, plan: 'free', role: 'owner' })
    const orgId = made.body.id as string
    expect(orgId).toMatch(/^org_[0-9a-f]{24}$/u)

    const listed = await service.api.get('/api/orgs', owner.apiKey)
    expect(listed.body.orgs.map((o: { name: string; role: string }) => [o.name, o.role])).toEqual([
      ['Personal', 'owner'],
      ['Docs team', 'owner'],
    ])

    // A key acts in its own organisation: the owner makes one for the new organisation.
    const ownerKey = await service.api.post('/api/keys', { org_id: orgId }, owner.apiKey)
    expect((await service.api.get(`/api/orgs/${orgId}/members`, owner.apiKey)).status).toBe(404)
    const editor = await service.api.register()
    const invited = await service.api.post(`/api/orgs/${orgId}/invitations`, { email: editor.email, role: 'reviewer' }, ownerKey.body.api_key)
    expect(invited.status).toBe(201)
    const mail = await smtp.waitForMail((m) => m.to.includes(editor.email))
    const accepted = await service.api.post('/api/invitations/accept', { token: tokenOf(mail.text) }, editor.apiKey)
    expect(accepted.status).toBe(200)
    expect(accepted.body).toEqual({ org: { id: orgId, name: 'Docs team', role: 'reviewer' } })

    const members = await service.api.get(`/api/orgs/${orgId}/members`, editor.apiKey)
    expect(members.status).toBe(404) // editor's key is of its personal organisation
    const orgKey = await service.api.post('/api/keys', { label: 'docs', org_id: orgId }, editor.apiKey)
    expect(orgKey.status).toBe(201)
    expect(orgKey.body.org_id).toBe(orgId)
    const inOrg = await service.api.get(`/api/orgs/${orgId}/members`, orgKey.body.api_key)
    expect(inOrg.body.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [owner.email, 'owner'],
      [editor.email, 'reviewer'],
    ])
    const usage = await service.api.get('/api/usage', orgKey.body.api_key)
    expect(usage.status).toBe(200)

    const forbidden = await service.api.get(`/api/orgs/${orgId}/activity`, orgKey.body.api_key)
    expect(forbidden.status).toBe(403)
    expect(forbidden.body.error.code).toBe('forbidden_for_role')

    const editorId = inOrg.body.members[1].account_id
    const promoted = await service.api.patch(`/api/orgs/${orgId}/members/${editorId}`, { role: 'admin' }, ownerKey.body.api_key)
    expect(promoted.status).toBe(200)
    expect(promoted.body.role).toBe('admin')
    const log = await service.api.get(`/api/orgs/${orgId}/activity`, orgKey.body.api_key)
    expect(log.status).toBe(200)
    expect(log.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'member.role_changed',
      'key.created',
      'member.joined',
      'member.invited',
      'key.created',
      'org.created',
    ])
    const csv = await fetch(`${service.url}/api/orgs/${orgId}/activity/export?format=csv`, { headers: { 'x-api-key': ownerKey.body.api_key } })
    expect(csv.headers.get('content-type')).toContain('text/csv')
    const lines = (await csv.text()).trim().split('\r\n')
    expect(lines[0]).toBe('seq,at,actor,action,subject,detail')
    expect(lines).toHaveLength(7)

    const removed = await service.api.delete(`/api/orgs/${orgId}/members/${editorId}`, ownerKey.body.api_key)
    expect(removed.body).toEqual({ removed: true, revoked_keys: 1 })
    expect((await service.api.get('/api/usage', orgKey.body.api_key)).status).toBe(401)
    const gone = await service.api.delete(`/api/orgs/${orgId}`, ownerKey.body.api_key)
    expect(gone.body).toEqual({ deleted: true, revoked_keys: 1 })
  })
})

describe('in an organisation, day to day', () => {
  let day: TestService
  const mailer = memoryMailer()
  // The real time until the log's test moves it: `alttext admin credits grant` grants for the real period.
  let now = Date.now()
  let team: Team
  beforeAll(async () => {
    day = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_FREE_CREDITS: '9' }, overrides: { mailer, clock: () => now } })
    team = await makeTeam(day, mailer)
  })
  afterAll(() => day.stop())

  test('a session acts where X-Alttext-Org says, as the console does; absent, in its personal organisation', async () => {
    const { cookie } = await signIn(day, team.admin.email, team.admin.password)
    const orgs = await withSession(day, cookie, 'GET', '/api/orgs')
    expect(orgs.body.orgs.map((o: { id: string; role: string }) => [o.id, o.role])).toEqual([
      [expect.stringMatching(/^org_/u), 'owner'],
      [team.id, 'admin'],
    ])
    const inTeam = { 'x-alttext-org': team.id }
    const personal = await withSession(day, cookie, 'GET', '/api/usage')
    expect(personal.status).toBe(200)
    const usage = await withSession(day, cookie, 'GET', '/api/usage', undefined, inTeam)
    expect(usage.status).toBe(200)
    // Routes of the organisation need no header: the path names it.
    const members = await withSession(day, cookie, 'GET', `/api/orgs/${team.id}/members`)
    expect(members.body.members).toHaveLength(4)
    const invited = await withSession(day, cookie, 'POST', `/api/orgs/${team.id}/invitations`, { email: 'console@example.com', role: 'author' })
    expect(invited.status).toBe(201)
    const pending = await withSession(day, cookie, 'GET', `/api/orgs/${team.id}/invitations`)
    expect(pending.body.invitations.map((i: { email: string }) => i.email)).toContain('console@example.com')
    // The author's session is refused what its role does not allow, in the organisation only.
    const author = await signIn(day, team.author.email, team.author.password)
    expect((await withSession(day, author.cookie, 'GET', `/api/orgs/${team.id}/activity`)).status).toBe(403)
    const own = (await withSession(day, author.cookie, 'GET', '/api/orgs')).body.orgs[0].id
    expect((await withSession(day, author.cookie, 'GET', `/api/orgs/${own}/activity`)).status).toBe(200)
    const mine = await withSession(day, author.cookie, 'POST', '/api/keys', { label: 'from the console', org_id: team.id }, inTeam)
    expect(mine.status).toBe(201)
    expect(mine.body.org_id).toBe(team.id)
  })

  test('an invitation to an address with no account: register with it, accept, and join', async () => {
    const email = `newcomer-${Date.now()}@example.com`
    expect((await day.api.post(`/api/orgs/${team.id}/invitations`, { email, role: 'reviewer' }, team.admin.orgKey)).status).toBe(201)
    const newcomer = await day.api.register(email)
    const accepted = await day.api.post('/api/invitations/accept', { token: mailer.tokenFor(email) }, newcomer.apiKey)
    expect(accepted.body).toEqual({ org: { id: team.id, name: team.name, role: 'reviewer' } })
    const members = await day.api.get(`/api/orgs/${team.id}/members`, team.author.orgKey)
    expect(members.body.members.at(-1)).toMatchObject({ email, role: 'reviewer' })
    // Signed in instead of by key works as well, for the next one.
    const second = `newcomer-2-${Date.now()}@example.com`
    await day.api.post(`/api/orgs/${team.id}/invitations`, { email: second, role: 'author' }, team.admin.orgKey)
    const account = await day.api.register(second)
    const { cookie } = await signIn(day, second, account.password)
    const bySession = await withSession(day, cookie, 'POST', '/api/invitations/accept', { token: mailer.tokenFor(second) })
    expect(bySession.status).toBe(200)
  })

  test("a key of the organisation spends the organisation's credits, not its maker's", async () => {
    // The operator grants the organisation credits: they differ from its members' own.
    const granted = await adminOf(day)('credits', 'grant', '--org', team.id, '5')
    expect(granted).toMatchObject({ code: 0 })
    // The service hears of the operator's grant through the change feed.
    const usage = () => day.api.get('/api/usage', team.author.orgKey)
    await waitUntil(async () => (await usage()).body.credits.total === 14, "the organisation's grant")
    expect((await usage()).body.credits).toEqual({ total: 14, used: 0, remaining: 14 })
    const byPersonalKey = await day.api.get('/api/usage', team.author.apiKey)
    expect(byPersonalKey.body.credits).toEqual({ total: 9, used: 0, remaining: 9 })
    const shown = await day.api.get(`/api/orgs/${team.id}`, team.author.orgKey)
    expect(shown.body).toMatchObject({ id: team.id, personal: false, role: 'author', credits: { total: 14, used: 0, remaining: 14 } })
    const validated = await day.api.post('/api/validate-key', { api_key: team.reviewer.orgKey })
    expect(validated.body).toMatchObject({ valid: true, credits_total: 14 })
  })

  test('a key keeps working when its maker changes role, with the new role at once', async () => {
    const { owner, reviewer } = team
    expect((await day.api.get(`/api/orgs/${team.id}/invitations`, reviewer.orgKey)).status).toBe(403)
    expect((await day.api.patch(`/api/orgs/${team.id}/members/${reviewer.accountId}`, { role: 'admin' }, owner.orgKey)).body.role).toBe('admin')
    expect((await day.api.get(`/api/orgs/${team.id}/invitations`, reviewer.orgKey)).status).toBe(200)
    expect((await day.api.patch(`/api/orgs/${team.id}/members/${reviewer.accountId}`, { role: 'reviewer' }, owner.orgKey)).body.role).toBe('reviewer')
    const after = await day.api.get(`/api/orgs/${team.id}/invitations`, reviewer.orgKey)
    expect(after.body.error.code).toBe('forbidden_for_role')
    expect((await day.api.get(`/api/orgs/${team.id}`, reviewer.orgKey)).body.role).toBe('reviewer')
  })

  test("an admin lists every key of the organisation and revokes another member's", async () => {
    const extra = await orgKey(day.api, team.author.apiKey, team.id)
    const listed = await day.api.get(`/api/orgs/${team.id}/keys`, team.admin.orgKey)
    expect(listed.status).toBe(200)
    const prefixes = listed.body.keys.map((k: { prefix: string }) => k.prefix)
    for (const p of [team.owner.orgKeyPrefix, team.admin.orgKeyPrefix, team.reviewer.orgKeyPrefix, team.author.orgKeyPrefix, extra.prefix])
      expect(prefixes).toContain(p)
    expect(listed.body.keys.find((k: { prefix: string }) => k.prefix === extra.prefix)).toMatchObject({ org_id: team.id, made_by: team.author.email })
    // Personal keys of members are not the organisation's.
    expect(prefixes).not.toContain(team.author.prefix)
    const revoked = await day.api.delete(`/api/orgs/${team.id}/keys/${extra.prefix}`, team.admin.orgKey)
    expect(revoked.body).toEqual({ prefix: extra.prefix, revoked: true })
    expect((await day.api.get('/api/usage', extra.key)).status).toBe(401)
    expect((await day.api.get(`/api/orgs/${team.id}/keys`, team.admin.orgKey)).body.keys.map((k: { prefix: string }) => k.prefix)).not.toContain(extra.prefix)
    const log = await day.api.get(`/api/orgs/${team.id}/activity?limit=1`, team.admin.orgKey)
    expect(log.body.entries[0]).toMatchObject({ action: 'key.revoked', subject: extra.prefix, actor: team.admin.email })
  })

  test('a member leaves by itself: its keys of the organisation go, it is no longer listed', async () => {
    const leaver = await day.api.register()
    await join(day.api, mailer, team.id, team.admin.orgKey, leaver, 'author')
    const key = await orgKey(day.api, leaver.apiKey, team.id)
    const id = (await day.api.get(`/api/orgs/${team.id}/members`, key.key)).body.members.find((m: { email: string }) => m.email === leaver.email).account_id
    const left = await day.api.delete(`/api/orgs/${team.id}/members/${id}`, key.key)
    expect(left.body).toEqual({ removed: true, revoked_keys: 1 })
    expect((await day.api.get('/api/usage', key.key)).status).toBe(401)
    expect((await day.api.get('/api/orgs', leaver.apiKey)).body.orgs.map((o: { id: string }) => o.id)).not.toContain(team.id)
    const members = await day.api.get(`/api/orgs/${team.id}/members`, team.owner.orgKey)
    expect(members.body.members.map((m: { email: string }) => m.email)).not.toContain(leaver.email)
    const log = await day.api.get(`/api/orgs/${team.id}/activity?limit=1`, team.admin.orgKey)
    expect(log.body.entries[0]).toMatchObject({ action: 'member.removed', subject: leaver.email, actor: leaver.email })
  })

  test('the activity log: pages by cursor, since/until, and the JSON export', async () => {
    const base = Date.UTC(2031, 0, 1, 10, 0, 0)
    now = base
    const { id, owner } = await soloOrg(day)
    const times: number[] = []
    for (let i = 0; i < 7; i++) {
      now = base + (i + 1) * 60_000
      times.push(now)
      expect((await day.api.post(`/api/orgs/${id}/invitations`, { email: `log-${i}@example.com`, role: 'author' }, owner)).status).toBe(201)
    }
    const all = await day.api.get(`/api/orgs/${id}/activity?limit=200`, owner)
    // Newest first: seven invitations, the owner's key, the organisation.
    expect(all.body.entries.map((e: { action: string }) => e.action)).toEqual([...Array(7).fill('member.invited'), 'key.created', 'org.created'])
    expect(all.body.next_cursor).toBeNull()
    const paged: unknown[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: ApiResponse = await day.api.get(`/api/orgs/${id}/activity?limit=2${cursor ? `&cursor=${cursor}` : ''}`, owner)
      expect(page.status).toBe(200)
      expect(page.body.entries.length).toBeLessThanOrEqual(2)
      paged.push(...page.body.entries)
      cursor = page.body.next_cursor
      pages++
    } while (cursor !== null)
    expect(paged).toEqual(all.body.entries)
    expect(pages).toBe(5)
    // [since, until): the third to the fifth invitation.
    const since = new Date(times[2]!).toISOString()
    const until = new Date(times[5]!).toISOString()
    const ranged = await day.api.get(`/api/orgs/${id}/activity?since=${since}&until=${until}`, owner)
    expect(ranged.body.entries.map((e: { subject: string }) => e.subject)).toEqual(['log-4@example.com', 'log-3@example.com', 'log-2@example.com'])
    expect(ranged.body.entries[2].at).toBe(since)
    const res = await fetch(`${day.url}/api/orgs/${id}/activity/export?format=json&since=${since}&until=${until}`, { headers: { 'x-api-key': owner } })
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="alttext-activity-${id}.json"`)
    expect(await res.json()).toEqual(ranged.body.entries)
    const whole = await (await fetch(`${day.url}/api/orgs/${id}/activity/export?format=json`, { headers: { 'x-api-key': owner } })).json()
    expect(whole).toEqual(all.body.entries)
    const entry = (whole as { actor: string; detail: unknown }[])[0]!
    expect(entry).toMatchObject({ actor: expect.stringContaining('@'), detail: { role: 'author' } })
    // An empty range is an empty array, still valid JSON.
    const none = await fetch(`${day.url}/api/orgs/${id}/activity/export?format=json&since=2040-01-01T00:00:00Z`, { headers: { 'x-api-key': owner } })
    expect(await none.json()).toEqual([])
  })
})

describe('deleting an organisation', () => {
  let svc: TestService
  beforeAll(async () => {
    svc = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  })
  afterAll(() => svc.stop())

  test('with batches whose images wait (nothing reads the model here), as an owner: all of it goes', async () => {
    const { id, owner } = await soloOrg(svc)
    for (const width of [41, 42])
      expect((await svc.api.post('/api/batches', { items: [{ image_base64: Buffer.from(makePng(width, 30)).toString('base64') }] }, owner)).status).toBe(202)
    const deleted = await svc.api.delete(`/api/orgs/${id}`, owner)
    expect(deleted.body).toEqual({ deleted: true, revoked_keys: 1 })
    expect((await svc.api.get('/api/usage', owner)).status).toBe(401)
    expect(await svc.query('SELECT id FROM accounts WHERE org_public_id = ?', id)).toEqual([])
  })
})

/** An organisation of a new account, with its owner's key of it. */
async function soloOrg(svc: TestService) {
  const person = await svc.api.register()
  const made = await svc.api.post('/api/orgs', { name: 'Logged' }, person.apiKey)
  return { id: made.body.id as string, owner: (await orgKey(svc.api, person.apiKey, made.body.id)).key }
}

describe('registration closed', () => {
  let closed: TestService
  const mailer = memoryMailer()
  beforeAll(async () => {
    closed = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'closed' }, overrides: { mailer } })
  })
  afterAll(() => closed.stop())

  test('only an invited address may sign up, and then join', async () => {
    const refused = await closed.api.post('/api/register', { email: 'walk-in@example.com', password: 'correct horse battery' })
    expect(refused.status).toBe(403)
    // The operator makes the first account and its organisation.
    const admin = adminOf(closed)
    const boss = await adminJson(admin, 'accounts', 'create', 'boss@example.com', '--print-key')
    const bossKey = boss.api_key as string
    expect(bossKey).toMatch(/^alt_/u)
    const org = { publicId: (await adminJson(admin, 'orgs', 'create', 'Closed shop', '--owner', 'boss@example.com')).org.id as string }
    const made = await closed.api.post('/api/keys', { org_id: org.publicId }, bossKey)
    expect(made.status).toBe(201)
    expect((await closed.api.post(`/api/orgs/${org.publicId}/invitations`, { email: 'Invited@Example.com', role: 'author' }, made.body.api_key)).status).toBe(
      201,
    )
    const invitedAccount = await closed.api.register('invited@example.com')
    const accepted = await closed.api.post('/api/invitations/accept', { token: mailer.tokenFor('invited@example.com') }, invitedAccount.apiKey)
    expect(accepted.body.org).toEqual({ id: org.publicId, name: 'Closed shop', role: 'author' })
    // An invitation opens sign-up for its own address only, and only while it stands.
    const again = await closed.api.post('/api/register', { email: 'walk-in@example.com', password: 'correct horse battery' })
    expect(again.status).toBe(403)
    const late = await closed.api.post(`/api/orgs/${org.publicId}/invitations`, { email: 'late@example.com', role: 'author' }, made.body.api_key)
    expect((await closed.api.delete(`/api/orgs/${org.publicId}/invitations/${late.body.id}`, made.body.api_key)).status).toBe(200)
    expect((await closed.api.post('/api/register', { email: 'late@example.com', password: 'correct horse battery' })).status).toBe(403)
  })
})

describe('generation in an organisation', () => {
  let env: AltTextEnv
  beforeAll(async () => {
    env = await startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: '3' } })
  })
  afterAll(() => env.stop())

  test("a key of the organisation spends the organisation's credits; the maker's personal key its own", async () => {
    const { api } = env.service
    const person = await api.register()
    const org = await api.post('/api/orgs', { name: 'Spenders' }, person.apiKey)
    const key = (await orgKey(api, person.apiKey, org.body.id)).key
    const byOrg = await env.generate({ image_url: env.serve(makePng(301, 20)) }, key)
    expect(byOrg.status).toBe(200)
    expect(byOrg.body.credits_remaining).toBe(2)
    expect((await api.get('/api/usage', key)).body.credits).toEqual({ total: 3, used: 1, remaining: 2 })
    expect((await api.get('/api/usage', person.apiKey)).body.credits).toEqual({ total: 3, used: 0, remaining: 3 })
    const byPerson = await env.generate({ image_url: env.serve(makePng(302, 20)) }, person.apiKey)
    expect(byPerson.body.credits_remaining).toBe(2)
    expect((await api.get(`/api/orgs/${org.body.id}`, key)).body.credits).toEqual({ total: 3, used: 1, remaining: 2 })
  })
})
