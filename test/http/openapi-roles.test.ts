// The shared role walk: every route of /openapi.json, called as the owner, admin, reviewer and author of
// organisation A (each with its key of A) and as a member of organisation B only. Each route's minimum role
// is pinned below (from its `role` in the source); a weaker role gets 403 forbidden_for_role, B's member
// 404 on A's organisation and suggestions, and the allowed roles never 401, 403 or 404. A route the table
// does not list fails the test: a new route must be classified here.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ROLES, type Role, roleAllows } from '../../src/store/contract'
import { join, makeTeam, type Member, memoryMailer, orgKey, type Team } from '../orgs/team'
import { makePng } from '../support/images'
import { type ApiResponse, startTestService, type TestService } from '../support/service'
import { signIn, withSession } from '../support/session'

// The first file of a run may start the PostgreSQL cluster (ALTTEXT_TEST_ENGINE=postgres) in its hook.
setDefaultTimeout(30_000)

/**
 * `public`: no credentials needed (not walked); `any`: any caller, no role (routes not under an
 * organisation or a suggestion); else the weakest role allowed (the route's `role: …`; removeMember's admin
 * is checked by the service unless a member removes itself, see test/orgs/happy.test.ts).
 */
const MIN_ROLE: Record<string, 'public' | 'any' | Role> = {
  getHealth: 'public',
  getReady: 'public',
  getMetrics: 'public',
  register: 'public',
  getRegistration: 'public',
  login: 'public',
  forgotPassword: 'public',
  resetPassword: 'public',
  verifyEmail: 'public',
  signIn: 'public',
  signOut: 'public',
  getSession: 'any',
  endAllSessions: 'any',
  resendVerification: 'any',
  changePassword: 'any',
  deleteAccount: 'any',
  listKeys: 'any',
  createKey: 'any',
  getKey: 'any',
  revokeKey: 'any',
  rotateKey: 'any',
  validateKey: 'public',
  listOrgs: 'any',
  createOrg: 'any',
  getOrg: 'author',
  deleteOrg: 'owner',
  inviteMember: 'admin',
  listInvitations: 'admin',
  revokeInvitation: 'admin',
  acceptInvitation: 'any',
  listMembers: 'author',
  setMemberRole: 'admin',
  removeMember: 'admin',
  listOrgKeys: 'admin',
  revokeOrgKey: 'admin',
  listOrgActivity: 'admin',
  exportOrgActivity: 'admin',
  setOrgWebhook: 'admin',
  getOrgWebhook: 'admin',
  deleteOrgWebhook: 'admin',
  createSuggestion: 'author',
  listSuggestions: 'author',
  acceptSuggestions: 'reviewer',
  getSuggestion: 'author',
  getSuggestionThumbnail: 'author',
  acceptSuggestion: 'reviewer',
  rejectSuggestion: 'reviewer',
  reopenSuggestion: 'reviewer',
  getUsage: 'any',
  getUsageHistory: 'any',
  listHistory: 'any',
  clearHistory: 'admin',
  deleteHistoryItem: 'admin',
  generateAltText: 'any',
  reviewAltText: 'any',
  createBatch: 'any',
  listBatches: 'any',
  getBatch: 'any',
  cancelBatch: 'any',
  getWebhookSecret: 'any',
  createWebhookSecret: 'any',
  listWebhookDeliveries: 'any',
  retryWebhookDelivery: 'any',
}

/** Run after every other route, in this order: they end sessions or delete organisation A. */
const LAST = ['endAllSessions', 'deleteOrg']

type Operation = { method: string; path: string; operationId: string; sessionOnly: boolean; hasBody: boolean }
type Caller = Member & { cookie: string; org: string }
type Call = { path: string; body?: unknown }

const mailer = memoryMailer()
let service: TestService
let team: Team
let outsider: Caller
let callers: Record<Role, Caller>
let operations: Operation[]
let suggestion: string
/** The batch each role of A made in the walk (createBatch comes before getBatch and cancelBatch). */
const batches = new Map<string, string>()

const image = () => Buffer.from(makePng(48, 32)).toString('base64')
let unique = 0
const fresh = (tag: string) => `${tag}-${process.pid}-${Date.now()}-${++unique}@example.com`

beforeAll(async () => {
  // Every name resolves to loopback, which webhooks may not reach: a queued delivery fails without a packet sent.
  service = await startTestService({
    env: { ALTTEXT_RATE_LIMITS: 'off' },
    overrides: { mailer, resolveHost: async () => [{ address: '127.0.0.1', family: 4 }] },
  })
  team = await makeTeam(service, mailer, 'Org A')
  const b = await makeTeam(service, mailer, 'Org B')
  const withCookie = async (m: Member, org: string): Promise<Caller> => ({ ...m, org, cookie: (await signIn(service, m.email, m.password)).cookie })
  callers = {
    owner: await withCookie(team.owner, team.id),
    admin: await withCookie(team.admin, team.id),
    reviewer: await withCookie(team.reviewer, team.id),
    author: await withCookie(team.author, team.id),
  }
  outsider = await withCookie(b.owner, b.id)
  suggestion = await submit()
  const doc = (await service.api.get('/openapi.json')).body as {
    paths: Record<string, Record<string, { operationId: string; security?: Record<string, unknown>[]; requestBody?: unknown }>>
  }
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      operationId: op.operationId,
      sessionOnly: op.security?.every((s) => 'cookieAuth' in s) === true,
      hasBody: op.requestBody !== undefined,
    })),
  )
  operations.sort((x, y) => LAST.indexOf(x.operationId) - LAST.indexOf(y.operationId))
})
afterAll(() => service.stop())

/** A pending suggestion of A, submitted by its author. */
async function submit(): Promise<string> {
  const made = await service.api.post(
    '/api/suggestions',
    { image_base64: image(), target: { kind: 'file', ref: `page-${++unique}.html:1:1` }, proposed_alt: 'A red kite over a beach.' },
    team.author.orgKey,
  )
  if (made.status !== 201) throw new Error(`suggestion: ${made.status} ${made.text}`)
  return made.body.id as string
}

/** A member of A made for this call (an author), to be changed or removed. */
async function throwawayMember(): Promise<number> {
  const person = await service.api.register(fresh('throwaway'))
  await join(service.api, mailer, team.id, team.owner.orgKey, person, 'author')
  const members = (await service.api.get(`/api/orgs/${team.id}/members`, team.owner.orgKey)).body.members as { account_id: number; email: string }[]
  return members.find((m) => m.email === person.email)!.account_id
}

/** The path and a valid body of one call of `op` by `caller`; fresh objects where the call would use one up. */
async function prepare(op: Operation, caller: Caller): Promise<Call> {
  const fill = (params: Record<string, string | number>) =>
    op.path.replace(/\{(\w+)\}/gu, (_, name: string) => {
      if (!(name in params)) throw new Error(`${op.operationId}: no value for {${name}}`)
      return String(params[name])
    })
  const org = { id: team.id }
  switch (op.operationId) {
    case 'revokeInvitation': {
      const made = await service.api.post(`/api/orgs/${team.id}/invitations`, { email: fresh('pending'), role: 'author' }, team.owner.orgKey)
      return { path: fill({ ...org, invitation_id: made.body.id }) }
    }
    case 'setMemberRole':
      return { path: fill({ ...org, account_id: await throwawayMember() }), body: { role: 'reviewer' } }
    case 'removeMember':
      return { path: fill({ ...org, account_id: await throwawayMember() }) }
    case 'revokeOrgKey':
      return { path: fill({ ...org, prefix: (await orgKey(service.api, team.author.apiKey, team.id)).prefix }) }
    case 'inviteMember':
      return { path: fill(org), body: { email: fresh('invited'), role: 'author' } }
    case 'setOrgWebhook':
      return { path: fill(org), body: { url: 'https://hooks.alttext.test/decided' } }
    case 'getOrgWebhook':
    case 'deleteOrgWebhook':
      // Each needs a webhook to find: the owner sets one first.
      await service.api.request('PUT', `/api/orgs/${team.id}/webhook`, { body: { url: 'https://hooks.alttext.test/decided' }, key: team.owner.orgKey })
      return { path: fill(org) }
    case 'acceptInvitation':
      return { path: op.path, body: { token: 'ab'.repeat(32) } }
    case 'getKey':
      return { path: fill({ prefix: caller.orgKeyPrefix }) }
    case 'revokeKey':
      return { path: op.path, body: { key_prefix: (await orgKey(service.api, caller.apiKey, caller.org)).prefix } }
    case 'rotateKey':
      return { path: op.path, body: { key_prefix: (await orgKey(service.api, caller.apiKey, caller.org)).prefix } }
    case 'createKey':
      return { path: op.path, body: { label: 'walk', org_id: caller.org } }
    case 'createOrg':
      return { path: op.path, body: { name: 'Walked' } }
    case 'changePassword':
      // Invalid on purpose: a real change would end the walk's other sessions.
      return { path: op.path, body: {} }
    case 'deleteAccount':
      // Invalid on purpose (no password): the account stays.
      return { path: op.path, body: {} }
    case 'createSuggestion':
      return { path: op.path, body: { image_base64: image(), target: { kind: 'file', ref: 'walk.md:1:1' }, proposed_alt: 'A kite.' } }
    case 'acceptSuggestions':
      return { path: op.path, body: { ids: [await submit()] } }
    case 'acceptSuggestion':
      return { path: fill({ id: await submit() }), body: { alt_text: 'A red kite.' } }
    case 'rejectSuggestion':
      return { path: fill({ id: await submit() }), body: { reason: 'Not this one.' } }
    case 'reopenSuggestion': {
      const id = await submit()
      await service.api.post(`/api/suggestions/${id}/reject`, {}, team.owner.orgKey)
      return { path: fill({ id }) }
    }
    case 'generateAltText':
    case 'reviewAltText':
      return { path: op.path, body: { image_base64: image(), ...(op.operationId === 'reviewAltText' ? { alt_text: 'A kite.' } : {}) } }
    case 'getBatch':
    case 'cancelBatch':
      return { path: fill({ id: batches.get(caller.email) ?? 'no-such-batch' }) }
    case 'createBatch':
      return { path: op.path, body: { items: [{ image_base64: image() }] } }
    default:
      break
  }
  if (op.path.startsWith('/api/orgs/{id}')) return { path: fill(org), body: op.hasBody ? {} : undefined }
  if (op.path.startsWith('/api/suggestions/{id}')) return { path: fill({ id: suggestion }) }
  // The caller's own objects of routes outside organisations: ids of none (their 404 is their own, not a role's).
  return { path: fill({ id: 'no-such-object', prefix: caller.orgKeyPrefix }), body: op.hasBody ? {} : undefined }
}

const send = (op: Operation, caller: Caller, call: Call): Promise<ApiResponse> =>
  op.sessionOnly
    ? withSession(service, caller.cookie, op.method, call.path, call.body, { 'x-alttext-org': caller.org })
    : service.api.request(op.method, call.path, { key: caller.orgKey, body: call.body })

const inOrgA = (op: Operation) => op.path.startsWith('/api/orgs/{id}') || op.path.startsWith('/api/suggestions/{id}')

/** What the answer of a call shows, for a message that names the route. */
const seen = (op: Operation, who: string, res: ApiResponse) => ({ op: op.operationId, who, status: res.status, code: res.body?.error?.code ?? null })

describe('the role walk over /openapi.json', () => {
  test('every route is classified', () => {
    const unlisted = operations.map((o) => o.operationId).filter((id) => !(id in MIN_ROLE))
    expect(unlisted).toEqual([])
    // A route gone from the document is gone from the table too.
    const listed = new Set(operations.map((o) => o.operationId))
    expect(Object.keys(MIN_ROLE).filter((id) => !listed.has(id))).toEqual([])
  })

  test('each role gets exactly what its route allows; a member of another organisation gets 404', async () => {
    const weakestFirst = [...ROLES].reverse()
    let calls = 0
    for (const op of operations) {
      const min = MIN_ROLE[op.operationId]
      if (min === undefined || min === 'public') continue
      // The outsider first: a destructive call by it must change nothing of A's.
      const theirs = await send(op, outsider, await prepare(op, outsider))
      calls++
      if (inOrgA(op)) {
        const code = op.path.startsWith('/api/orgs/') ? 'org_not_found' : 'suggestion_not_found'
        expect(seen(op, 'member of B', theirs)).toEqual({ ...seen(op, 'member of B', theirs), status: 404, code })
      } else expect([401, 403]).not.toContain(theirs.status)
      for (const role of weakestFirst) {
        const res = await send(op, callers[role], await prepare(op, callers[role]))
        calls++
        const got = seen(op, role, res)
        if (op.operationId === 'createBatch' && res.status === 202) batches.set(callers[role].email, res.body.id)
        if (min !== 'any' && !roleAllows(role, min)) expect(got).toEqual({ ...got, status: 403, code: 'forbidden_for_role' })
        else {
          expect({ ...got, refused: [401, 403].includes(res.status) }).toEqual({ ...got, refused: false })
          // Organisation A's routes were given real ids: a 404 there is a refusal. Elsewhere only the object's own 404.
          if (res.status === 404)
            expect({ ...got, inA: inOrgA(op) || ['org_not_found', 'suggestion_not_found'].includes(got.code) }).toEqual({ ...got, inA: false })
          // They were given valid bodies too: the call does what it says.
          if (inOrgA(op)) expect({ ...got, ok: res.status < 300 }).toEqual({ ...got, ok: true })
        }
      }
    }
    expect(calls).toBe(5 * operations.filter((op) => MIN_ROLE[op.operationId] !== 'public').length)
  })
})

describe('the role check comes before the body', () => {
  test('a forbidden role with an invalid body gets 403, not 400; no credentials 401', async () => {
    // Organisation A was deleted by the walk's last call: a new one with the same roles.
    const again = await makeTeam(service, mailer, 'Org A again')
    const checked = operations.filter((op) => op.hasBody && MIN_ROLE[op.operationId] !== 'any' && MIN_ROLE[op.operationId] !== 'public')
    for (const id of ['inviteMember', 'setMemberRole', 'acceptSuggestion', 'acceptSuggestions']) expect(checked.map((op) => op.operationId)).toContain(id)
    const weakest = (min: Role) => [...ROLES].reverse().find((role) => !roleAllows(role, min))
    const id = (
      await service.api.post(
        '/api/suggestions',
        { image_base64: image(), target: { kind: 'file', ref: 'body.md:1:1' }, proposed_alt: 'A kite.' },
        again.author.orgKey,
      )
    ).body.id as string
    for (const op of checked) {
      const role = weakest(MIN_ROLE[op.operationId] as Role)
      if (role === undefined) continue
      const path = op.path.replace('{id}', op.path.startsWith('/api/orgs/') ? again.id : id).replace('{account_id}', String(again.author.accountId))
      const key = again[role].orgKey
      for (const rawBody of ['{"role": 42, "email": [], "ids": "x", "alt_text": {}}', '{}']) {
        const res = await service.api.request(op.method, path, { key, rawBody, headers: { 'content-type': 'application/json' } })
        const got = seen(op, role, res)
        expect(got).toEqual({ ...got, status: 403, code: 'forbidden_for_role' })
        // And a stranger learns nothing about the body either.
        const stranger = await service.api.request(op.method, path, { rawBody, headers: { 'content-type': 'application/json' } })
        expect(seen(op, 'nobody', stranger)).toEqual({ ...seen(op, 'nobody', stranger), status: 401, code: 'missing_api_key' })
      }
    }
  })
})
