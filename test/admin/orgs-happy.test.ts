// `alttext admin orgs …` and the --org target of plans and credits, beside a running service on its
// SQLite file: each command does what it says, and each change is in the organisation's activity log as
// the operator's (no actor id, no actor email).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mintKey } from '../../src/modules/keys/material'
import type { ActivityEntry, Store } from '../../src/store/contract'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { type RegisteredAccount, serviceForFile, type TestService } from '../support/service'
import { adminJson, adminOf } from './support'

setDefaultTimeout(60_000)

let service: TestService
serviceForFile({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_FREE_CREDITS: '7' } }, (started) => ({ service } = started))
const admin = (...args: string[]) => adminOf(service, { ALTTEXT_FREE_CREDITS: '7' })(...args)

// A second connection to the service's file, as a sqlite3 shell would have: to read the activity log and
// to make keys of an organisation (its HTTP route belongs to another part).
let store: Store
beforeAll(() => {
  store = createSqliteStore(service.dbPath, { processLock: false })
})
afterAll(async () => {
  await store?.close()
})

const activity = async (publicId: string): Promise<ActivityEntry[]> => {
  const org = await store.orgs.byPublicId(publicId)
  return (await store.orgs.activity(org!.id, 100, null)).reverse()
}
const operatorEntry = (action: string, subject: string | null, detail: Record<string, unknown>) =>
  expect.objectContaining({ action, subject, detail, actorId: null, actorEmail: null })

const createOrg = async (name: string, owner: RegisteredAccount, ...extra: string[]) =>
  (await adminJson(admin, 'orgs', 'create', name, '--owner', owner.email, ...extra)).org

describe('orgs create, list and show', () => {
  test('create: a team organisation on the free plan, owned by the account; list and show find it', async () => {
    const owner = await service.api.register()
    const made = await adminJson(admin, 'orgs', 'create', '  Acme Docs ', '--owner', owner.email.toUpperCase())
    expect(made.org).toEqual({
      id: expect.stringMatching(/^org_[0-9a-f]{24}$/),
      name: 'Acme Docs',
      personal: false,
      plan: 'free',
      credits: { total: 7, used: 0, remaining: 7, monthly: 7, granted: 0 },
      members: 1,
      keys: 0,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    expect(made.members).toEqual([{ email: owner.email, role: 'owner', joined_at: expect.any(String) }])
    expect(made.period_start).toMatch(/^\d{4}-\d\d-01T00:00:00/)

    const listed = await adminJson(admin, 'orgs', 'list')
    expect(listed.orgs).toContainEqual(made.org)
    // Personal organisations are the accounts of `accounts list`.
    expect(listed.orgs.every((o: any) => o.personal === false)).toBe(true)
    const text = await admin('orgs', 'list')
    expect(text.code).toBe(0)
    expect(text.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+PLAN\s+CREDITS LEFT\s+MEMBERS\s+KEYS\s+CREATED$/)
    expect(text.stdout).toMatch(new RegExp(`${made.org.id}\\s+Acme Docs\\s+free\\s+7 of 7\\s+1\\s+0\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d`))

    expect(await adminJson(admin, 'orgs', 'show', made.org.id.toUpperCase())).toEqual(made)
    const shown = await admin('orgs', 'show', made.org.id)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`id:           ${made.org.id}`)
    expect(shown.stdout).toContain('name:         Acme Docs')
    expect(shown.stdout).toContain('kind:         team')
    // Credits worded as `accounts show` words them.
    expect(shown.stdout).toContain('credits left: 7 of 7 (7 a month); 0 used')
    expect(shown.stdout).toMatch(new RegExp(`^ {2}owner {2}${owner.email.replaceAll('.', '\\.')} {2}joined \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d$`, 'm'))

    // The contract's create names the owner as the actor of `org.created`.
    expect(await activity(made.org.id)).toEqual([expect.objectContaining({ action: 'org.created', subject: 'Acme Docs', actorEmail: owner.email })])
  })

  test('create in text: prints the id, the owner and the plan', async () => {
    const owner = await service.api.register()
    const made = await admin('orgs', 'create', 'Plain', '--owner', owner.email)
    expect(made.code).toBe(0)
    expect(made.stdout).toMatch(
      new RegExp(`^created Plain \\(org_[0-9a-f]{24}\\), owned by ${owner.email.replaceAll('.', '\\.')}, on plan free; this period credits left: 7 of 7`),
    )
  })

  test('create --credits N --plan NAME: on a plan of its own, recorded as the operator changing it', async () => {
    const owner = await service.api.register()
    const org = await createOrg('Newsroom', owner, '--credits', '500', '--plan', 'newsroom')
    expect(org).toMatchObject({ plan: 'newsroom', credits: { total: 500, monthly: 500, remaining: 500 } })
    expect((await createOrg('Custom', owner, '--credits', '20')).plan).toBe('custom')
    expect((await activity(org.id)).map((e) => e.action)).toEqual(['org.created', 'org.plan_changed'])
    expect((await activity(org.id))[1]).toEqual(operatorEntry('org.plan_changed', 'newsroom', { from: 'free', to: 'newsroom', monthly_credits: 500 }))
  })

  test('show of a personal organisation: its person, as the owner', async () => {
    const person = await service.api.register()
    const account = await store.accounts.findByEmail(person.email)
    const personal = (await store.orgs.memberships(account!.id))[0]!.org
    const shown = await adminJson(admin, 'orgs', 'show', personal.publicId)
    expect(shown.org).toMatchObject({ id: personal.publicId, name: 'Personal', personal: true, plan: 'free', members: 1, keys: 1 })
    expect(shown.members).toEqual([{ email: person.email, role: 'owner', joined_at: expect.any(String) }])
    expect((await admin('orgs', 'show', personal.publicId)).stdout).toContain('kind:         personal')
  })
})

describe('members', () => {
  test('add-member, set-role, remove-member: each recorded as the operator; removal revokes the keys made for the organisation', async () => {
    const owner = await service.api.register()
    const member = await service.api.register()
    const org = await createOrg('Reviewers', owner)

    const added = await admin('orgs', 'add-member', org.id, member.email.toUpperCase(), '--role', 'Reviewer')
    expect(added).toEqual({ code: 0, stdout: `added ${member.email} to Reviewers (${org.id}) as reviewer\n`, stderr: '' })
    let shown = await adminJson(admin, 'orgs', 'show', org.id)
    expect(shown.org.members).toBe(2)
    expect(shown.members).toEqual([
      { email: owner.email, role: 'owner', joined_at: expect.any(String) },
      { email: member.email, role: 'reviewer', joined_at: expect.any(String) },
    ])

    const promoted = await admin('orgs', 'set-role', org.id, member.email, 'admin')
    expect(promoted.code).toBe(0)
    expect(promoted.stdout).toContain(`${member.email} is now admin in Reviewers (${org.id}) (was reviewer)`)
    const again = await admin('orgs', 'set-role', org.id, member.email, 'admin')
    expect(again.stdout).toBe(`${member.email} was already admin in Reviewers (${org.id})\n`)

    // Two keys of the member in the organisation, one in its personal one (which stays).
    const memberAccount = (await store.accounts.findByEmail(member.email))!
    const orgId = (await store.orgs.byPublicId(org.id))!.id
    for (const label of ['one', 'two']) await store.keys.create(memberAccount.id, mintKey(label, null).record, Date.now(), 100, orgId)
    expect((await adminJson(admin, 'orgs', 'show', org.id)).org.keys).toBe(2)

    const removed = await admin('orgs', 'remove-member', org.id, member.email)
    expect(removed.code).toBe(0)
    expect(removed.stdout).toBe(`removed ${member.email} from Reviewers (${org.id}) and revoked 2 API keys it made there; its own account stays\n`)
    shown = await adminJson(admin, 'orgs', 'show', org.id)
    expect(shown.org).toMatchObject({ members: 1, keys: 0 })
    expect((await service.api.get('/api/usage', member.apiKey)).status).toBe(200)

    expect((await activity(org.id)).slice(1)).toEqual([
      operatorEntry('member.joined', member.email, { role: 'reviewer' }),
      operatorEntry('member.role_changed', member.email, { from: 'reviewer', to: 'admin' }),
      operatorEntry('member.removed', member.email, { role: 'admin', revoked_keys: 2 }),
    ])
  })

  test('a second owner makes the first one removable; every role can be given', async () => {
    const owner = await service.api.register()
    const other = await service.api.register()
    const org = await createOrg('Two owners', owner)
    expect((await admin('orgs', 'add-member', org.id, other.email, '--role', 'owner')).code).toBe(0)
    for (const role of ['admin', 'reviewer', 'author']) {
      expect((await admin('orgs', 'set-role', org.id, owner.email, role)).code).toBe(0)
      expect((await adminJson(admin, 'orgs', 'show', org.id)).members.find((m: any) => m.email === owner.email).role).toBe(role)
    }
    expect((await admin('orgs', 'remove-member', org.id, owner.email)).code).toBe(0)
    expect((await adminJson(admin, 'orgs', 'show', org.id)).members).toEqual([{ email: other.email, role: 'owner', joined_at: expect.any(String) }])
  })
})

describe('plans and credits of an organisation: --org instead of EMAIL', () => {
  test('plans set --org, credits grant --org, plans reset --org: the organisation changes, its owner does not', async () => {
    const owner = await service.api.register()
    const org = await createOrg('Billing', owner)

    const set = await admin('plans', 'set', '--org', org.id, '--credits', '300', '--name', 'team')
    expect(set.code).toBe(0)
    expect(set.stdout).toBe(`Billing (${org.id}): plan team; this period credits left: 300 of 300 (300 a month); 0 used\n`)
    const grant = await admin('credits', 'grant', '--org', org.id, '25')
    expect(grant.code).toBe(0)
    expect(grant.stdout).toContain(`granted 25 credits to Billing (${org.id}) until `)
    expect(grant.stdout).toContain('this period credits left: 325 of 325 (300 a month + 25 granted); 0 used')
    expect((await adminJson(admin, 'orgs', 'show', org.id)).org).toMatchObject({ plan: 'team', credits: { total: 325, monthly: 300, granted: 25 } })
    // The owner's own account (its personal organisation) is another billing account.
    expect((await adminJson(admin, 'accounts', 'show', owner.email)).account).toMatchObject({ plan: 'free', credits: { total: 7, granted: 0 } })

    const reset = await admin('plans', 'reset', '--org', org.id)
    expect(reset.stdout).toBe(`Billing (${org.id}): plan free; this period credits left: 32 of 32 (7 a month + 25 granted); 0 used\n`)

    const period = new Date().toISOString().slice(0, 7)
    expect((await activity(org.id)).slice(1)).toEqual([
      operatorEntry('org.plan_changed', 'team', { from: 'free', to: 'team', monthly_credits: 300 }),
      operatorEntry('org.credits_granted', null, { credits: 25, period }),
      operatorEntry('org.plan_changed', 'free', { from: 'team', to: 'free', monthly_credits: null }),
    ])
  })

  test('--org of a personal organisation is its person: the same billing account as EMAIL', async () => {
    const person = await service.api.register()
    const account = (await store.accounts.findByEmail(person.email))!
    const personal = (await store.orgs.memberships(account.id))[0]!.org
    expect((await admin('credits', 'grant', '--org', personal.publicId, '3')).stdout).toContain(
      `to the personal organisation of ${person.email} (${personal.publicId})`,
    )
    expect((await adminJson(admin, 'accounts', 'show', person.email)).account.credits).toMatchObject({ total: 10, granted: 3 })
    // And a change by EMAIL is in the personal organisation's log too.
    expect((await admin('plans', 'set', person.email, '--credits', '40')).code).toBe(0)
    expect((await activity(personal.publicId)).map((e) => [e.action, e.actorId])).toEqual([
      ['org.credits_granted', null],
      ['org.plan_changed', null],
    ])
  })
})

describe('--help', () => {
  for (const command of [
    ['orgs'],
    ['orgs', 'list'],
    ['orgs', 'show'],
    ['orgs', 'create'],
    ['orgs', 'add-member'],
    ['orgs', 'set-role'],
    ['orgs', 'remove-member'],
  ]) {
    test(`alttext admin ${[...command, '--help'].join(' ')}`, async () => {
      const result = await admin(...command, '--help')
      expect(result.code).toBe(0)
      expect(result.stdout).toStartWith(`Usage: alttext admin ${command.join(' ')}`)
      expect(result.stderr).toBe('')
    })
  }

  test('the admin help lists the organisation commands and the --org target', async () => {
    const { stdout } = await admin('--help')
    for (const line of [
      'orgs list',
      'orgs create NAME --owner EMAIL',
      'orgs set-role ORG EMAIL ROLE',
      'plans set EMAIL|--org ORG',
      'credits grant EMAIL|--org ORG N',
    ])
      expect(stdout).toContain(line)
    expect((await admin('plans', 'set', '--help')).stdout).toContain('--org ORG')
  })
})
