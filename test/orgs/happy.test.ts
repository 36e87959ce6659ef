// Organisations, the paths that succeed: create, invite by mail, accept, roles, keys of the organisation,
// the activity log and its export, leaving and deleting.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startSmtpCapture, type SmtpCapture } from '../support/smtp'
import { startTestService, type TestService } from '../support/service'

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
