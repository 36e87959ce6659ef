// Organisations, what must never happen: another organisation's anything answers as if it did not exist,
// a removed member stops at once (also on another replica), invitation tokens stay out of logs and the
// database, and the CSV export cannot carry a spreadsheet formula.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join as joinPath } from 'node:path'
import { sha256Hex } from '../../src/shared/crypto'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { postgresUnavailable, sharedPostgres, sqliteOnly } from '../support/postgres'
import { startTestService, type TestService, waitUntil } from '../support/service'
import { signIn, withSession } from '../support/session'
import { join, makeTeam, memoryMailer, orgKey, type Team } from './team'

// The first file of a run may start the PostgreSQL cluster (ALTTEXT_TEST_ENGINE=postgres) in its hook.
setDefaultTimeout(30_000)

let service: TestService
const mailer = memoryMailer()
let team: Team
let stranger: Team

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { mailer } })
  team = await makeTeam(service, mailer, 'Team A')
  stranger = await makeTeam(service, mailer, 'Team B')
})
afterAll(() => service.stop())

type Operation = { method: string; path: string; operationId: string; hasBody: boolean }

async function orgOperations(): Promise<Operation[]> {
  const doc = (await service.api.get('/openapi.json')).body as { paths: Record<string, Record<string, { operationId: string; requestBody?: unknown }>> }
  return Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/orgs/{id}'))
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        hasBody: op.requestBody !== undefined,
      })),
    )
}

/** A body that would pass validation for the routes that take one. */
const BODIES: Record<string, unknown> = {
  inviteMember: { email: 'someone@example.com', role: 'author' },
  setMemberRole: { role: 'reviewer' },
  setOrgWebhook: { url: 'https://hooks.example.com/alttext' },
}

async function filled(op: Operation): Promise<string> {
  const invitation = await service.api.post(
    `/api/orgs/${team.id}/invitations`,
    { email: `pending-${op.operationId}@example.com`, role: 'author' },
    team.owner.orgKey,
  )
  return op.path
    .replace('{id}', team.id)
    .replace('{account_id}', String(team.author.accountId))
    .replace('{invitation_id}', String(invitation.body.id))
    .replace('{prefix}', team.author.orgKeyPrefix)
}

describe("another organisation's anything is 404 org_not_found", () => {
  test('every /api/orgs/{id} route, with a key of another organisation', async () => {
    const ops = await orgOperations()
    expect(ops.length).toBeGreaterThanOrEqual(12)
    for (const op of ops) {
      const path = await filled(op)
      for (const key of [stranger.owner.orgKey, stranger.owner.apiKey, team.author.apiKey]) {
        const res = await service.api.request(op.method, path, { key, body: op.hasBody ? (BODIES[op.operationId] ?? {}) : undefined })
        expect({ op: op.operationId, status: res.status, code: res.body?.error?.code }).toEqual({ op: op.operationId, status: 404, code: 'org_not_found' })
      }
    }
    // Nothing happened to team A.
    const members = await service.api.get(`/api/orgs/${team.id}/members`, team.owner.orgKey)
    expect(members.body.members).toHaveLength(4)
    expect((await service.api.get(`/api/usage`, team.author.orgKey)).status).toBe(200)
  })

  test('every /api/orgs/{id} route, with the session of a non-member (with and without X-Alttext-Org)', async () => {
    const { cookie } = await signIn(service, stranger.owner.email, stranger.owner.password)
    for (const op of await orgOperations()) {
      const path = await filled(op)
      for (const extra of [{}, { 'x-alttext-org': team.id }, { 'x-alttext-org': stranger.id }] as Record<string, string>[]) {
        const res = await withSession(service, cookie, op.method, path, op.hasBody ? (BODIES[op.operationId] ?? {}) : undefined, extra)
        expect({ op: op.operationId, status: res.status, code: res.body?.error?.code }).toEqual({ op: op.operationId, status: 404, code: 'org_not_found' })
      }
    }
    // Its header naming an organisation it is not in: 404 on any route, not its personal organisation.
    const usage = await withSession(service, cookie, 'GET', '/api/usage', undefined, { 'x-alttext-org': team.id })
    expect(usage.status).toBe(404)
    expect(usage.body.error.code).toBe('org_not_found')
    expect(JSON.stringify(usage.body)).not.toContain(team.name)
  })

  test('a key of another organisation cannot be revoked through this one', async () => {
    const res = await service.api.delete(`/api/orgs/${team.id}/keys/${stranger.author.orgKeyPrefix}`, team.owner.orgKey)
    expect(res.status).toBe(404)
    expect((await service.api.get('/api/usage', stranger.author.orgKey)).status).toBe(200)
  })
})

describe('a removed member stops at once', () => {
  test('its keys of the organisation are 401, its session naming it is 404; its personal key and session go on', async () => {
    const person = await service.api.register()
    await join(service.api, mailer, team.id, team.owner.orgKey, person, 'reviewer')
    const key = (await orgKey(service.api, person.apiKey, team.id)).key
    const { cookie } = await signIn(service, person.email, person.password)
    const inOrg = { 'x-alttext-org': team.id }
    // Warm: the key is in memory, the session has acted in the organisation.
    expect((await service.api.get('/api/usage', key)).status).toBe(200)
    expect((await withSession(service, cookie, 'GET', `/api/orgs/${team.id}/members`)).status).toBe(200)
    expect((await withSession(service, cookie, 'GET', '/api/usage', undefined, inOrg)).status).toBe(200)
    const members = (await service.api.get(`/api/orgs/${team.id}/members`, team.owner.orgKey)).body.members as { account_id: number; email: string }[]
    const id = members.find((m) => m.email === person.email)!.account_id
    const removed = await service.api.delete(`/api/orgs/${team.id}/members/${id}`, team.admin.orgKey)
    expect(removed.body).toEqual({ removed: true, revoked_keys: 1 })

    const byKey = await service.api.get('/api/usage', key)
    expect(byKey.status).toBe(401)
    expect(byKey.body.error.code).toBe('invalid_api_key')
    expect((await withSession(service, cookie, 'GET', `/api/orgs/${team.id}/members`)).body.error.code).toBe('org_not_found')
    expect((await withSession(service, cookie, 'GET', '/api/usage', undefined, inOrg)).status).toBe(404)
    expect((await withSession(service, cookie, 'GET', '/api/usage')).status).toBe(200)
    expect((await service.api.get('/api/usage', person.apiKey)).status).toBe(200)
    // Joining again does not bring the old key back.
    await join(service.api, mailer, team.id, team.owner.orgKey, person, 'author')
    expect((await service.api.get('/api/usage', key)).status).toBe(401)
  })
})

/** Two services on one database: the removal on the first stops the member's key on the second within a second. */
async function removalAcrossReplicas(start: () => Promise<[TestService, TestService]>) {
  const [a, b] = await start()
  try {
    const replicaTeam = await makeTeam(a, mailer, 'Replicated')
    const { author } = replicaTeam
    // The second replica holds the key in memory.
    expect((await b.api.get('/api/usage', author.orgKey)).status).toBe(200)
    expect((await b.api.get('/api/usage', author.orgKey)).status).toBe(200)
    const removed = await a.api.delete(`/api/orgs/${replicaTeam.id}/members/${author.accountId}`, replicaTeam.admin.orgKey)
    expect(removed.status).toBe(200)
    await waitUntil(async () => (await b.api.get('/api/usage', author.orgKey)).status === 401, "the member's key refused on the other replica", 1000)
    // A role change reaches it too: the admin demoted on the first acts as author on the second.
    expect((await b.api.get(`/api/orgs/${replicaTeam.id}/activity`, replicaTeam.admin.orgKey)).status).toBe(200)
    await a.api.patch(`/api/orgs/${replicaTeam.id}/members/${replicaTeam.admin.accountId}`, { role: 'author' }, replicaTeam.owner.orgKey)
    await waitUntil(
      async () => (await b.api.get(`/api/orgs/${replicaTeam.id}/activity`, replicaTeam.admin.orgKey)).status === 403,
      'the demoted role on the other replica',
      1000,
    )
  } finally {
    await Promise.all([a.stop(), b.stop()])
  }
}

describe('two replicas', () => {
  // SQLite has one serving process per file; the other writer is a second connection, as alttext admin is.
  sqliteOnly('a second connection to the SQLite file')('on one SQLite file: a removal by another writer stops the key within a second', async () => {
    const other = createSqliteStore(service.dbPath, { processLock: false })
    try {
      const replicaTeam = await makeTeam(service, mailer, 'Written elsewhere')
      const { author, admin } = replicaTeam
      expect((await service.api.get('/api/usage', author.orgKey)).status).toBe(200)
      expect((await service.api.get(`/api/orgs/${replicaTeam.id}/activity`, admin.orgKey)).status).toBe(200)
      const org = (await other.orgs.byPublicId(replicaTeam.id))!
      const operator = { accountId: null, email: null, now: Date.now() }
      expect(await other.orgs.removeMember(org.id, author.accountId, operator)).toEqual({ revokedKeys: 1 })
      await waitUntil(async () => (await service.api.get('/api/usage', author.orgKey)).status === 401, "the member's key refused", 1000)
      expect(await other.orgs.setRole(org.id, admin.accountId, 'author', operator)).toMatchObject({ role: 'author' })
      await waitUntil(async () => (await service.api.get(`/api/orgs/${replicaTeam.id}/activity`, admin.orgKey)).status === 403, 'the demoted role', 1000)
    } finally {
      await other.close()
    }
  })

  // Runs once the PostgreSQL engine has organisations (src/store/postgres/orgs.ts, another helper's work).
  const pgReady = postgresUnavailable() === null && existsSync(joinPath(import.meta.dir, '../../src/store/postgres/orgs.ts'))
  test.skipIf(!pgReady)('on one PostgreSQL database: the removal stops the key on the other within a second', async () => {
    const cluster = await sharedPostgres()
    const url = await cluster.createDatabase()
    try {
      await removalAcrossReplicas(async () => {
        const env = { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_DATABASE_URL: url }
        const a = await startTestService({ env, overrides: { mailer } })
        return [a, await startTestService({ env, overrides: { mailer } })]
      })
    } finally {
      await cluster.dropDatabase(url)
    }
  })
})

describe('invitation tokens', () => {
  test('the log mailer logs the link in its one documented line; nothing else logs a token', async () => {
    const logged = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
    try {
      const owner = await logged.api.register()
      const org = await logged.api.post('/api/orgs', { name: 'Logged' }, owner.apiKey)
      const key = (await orgKey(logged.api, owner.apiKey, org.body.id)).key
      const invitee = await logged.api.register()
      expect((await logged.api.post(`/api/orgs/${org.body.id}/invitations`, { email: invitee.email, role: 'author' }, key)).status).toBe(201)
      const mailLine = logged.logs.find((l) => String(l.msg).startsWith('mail not sent') && l.to === invitee.email)
      const token = /token=([0-9a-f]{64})/u.exec(String(mailLine?.invitation_link))?.[1]
      expect(token).toMatch(/^[0-9a-f]{64}$/u)
      expect((await logged.api.post('/api/invitations/accept', { token }, invitee.apiKey)).status).toBe(200)
      // Accepted, then tried again (refused): neither writes the token.
      expect((await logged.api.post('/api/invitations/accept', { token }, invitee.apiKey)).status).toBe(400)
      const withToken = logged
        .logText()
        .split('\n')
        .filter((l) => l.includes(token!))
      expect(withToken).toHaveLength(1)
      expect(JSON.parse(withToken[0]!).msg).toBe(mailLine!.msg)
    } finally {
      await logged.stop()
    }
  })

  test('with a mail relay no log line holds a token, and the database holds only its hash', async () => {
    const person = await service.api.register()
    await service.api.post(`/api/orgs/${team.id}/invitations`, { email: person.email, role: 'author' }, team.owner.orgKey)
    const token = mailer.tokenFor(person.email)
    expect(service.logText()).not.toContain(token)
    const rows = await service.query<Record<string, unknown>>('SELECT * FROM org_invitations WHERE email = ?', person.email)
    expect(rows).toHaveLength(1)
    expect(rows[0]!.token_hash).toBe(sha256Hex(token))
    expect(JSON.stringify(rows)).not.toContain(token)
    // Nor anywhere on disk: the file and its write-ahead log.
    for (const file of [service.dbPath, `${service.dbPath}-wal`].filter(existsSync)) expect(readFileSync(file).includes(token)).toBe(false)
    expect((await service.api.post('/api/invitations/accept', { token: sha256Hex(token) }, person.apiKey)).body.error.code).toBe('invalid_invitation')
  })
})

describe('the CSV export', () => {
  test('a name, email or label that starts a formula is made inert', async () => {
    const owner = await service.api.register(`+cmd-${Date.now()}@example.com`)
    const org = await service.api.post('/api/orgs', { name: '=HYPERLINK("https://evil.example","x")' }, owner.apiKey)
    expect(org.status).toBe(201)
    const made = await service.api.post('/api/keys', { org_id: org.body.id, label: '@SUM(1+1)' }, owner.apiKey)
    await service.api.post(`/api/orgs/${org.body.id}/invitations`, { email: `-2-3-${Date.now()}@example.com`, role: 'author' }, made.body.api_key)
    const res = await fetch(`${service.url}/api/orgs/${org.body.id}/activity/export?format=csv`, { headers: { 'x-api-key': made.body.api_key } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; /u)
    const text = await res.text()
    const rows = parseCsv(text)
    expect(rows[0]).toEqual(['seq', 'at', 'actor', 'action', 'subject', 'detail'])
    expect(rows.length).toBe(4)
    for (const row of rows.slice(1)) for (const field of row) expect({ field, dangerous: /^[=+\-@\t\r]/u.test(field) }).toEqual({ field, dangerous: false })
    expect(text).toContain(`'=HYPERLINK(""https://evil.example"",""x"")`)
    expect(text).toContain(`'${owner.email}`)
    // The JSON export keeps the values as they are.
    const exported = await fetch(`${service.url}/api/orgs/${org.body.id}/activity/export?format=json`, { headers: { 'x-api-key': made.body.api_key } })
    const json = (await exported.json()) as Record<string, unknown>[]
    expect(json.at(-1)).toMatchObject({ action: 'org.created', subject: '=HYPERLINK("https://evil.example","x")', actor: owner.email })
  })
})

/** RFC 4180 as the export writes it (CRLF rows, double quotes doubled). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"'
      i++
    } else if (quoted) {
      if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(field)
      field = ''
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      i++
    } else field += c
  }
  return rows
}
