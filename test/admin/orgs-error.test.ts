// `alttext admin orgs …` and --org when they cannot do what they were asked: usage errors (a malformed id,
// an unknown role, EMAIL and --org together) exit 2; failures (no such organisation or account, the last
// owner, a member already, a personal organisation) exit 1 with the reason, and change nothing. Also: the
// output never shows a key, a key's hash or an invitation token's hash.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { hashKey, mintKey } from '../../src/modules/keys/material'
import type { Store } from '../../src/store/contract'
import { newOrgPublicId } from '../../src/store/shared/ids'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { readDb } from '../support/session'
import { type RegisteredAccount, serviceForFile, type TestService, uniqueEmail } from '../support/service'
import { type AdminResult, adminJson, adminOf } from './support'

setDefaultTimeout(60_000)

let service: TestService
let owner: RegisteredAccount
let member: RegisteredAccount
let org: { id: string; name: string }
let personalId: string
let store: Store
serviceForFile({ env: { ALTTEXT_RATE_LIMITS: 'off' }, account: true }, (started) => {
  service = started.service
  owner = started.account!
})
const admin = (...args: string[]) => adminOf(service)(...args)

beforeAll(async () => {
  store = createSqliteStore(service.dbPath, { processLock: false })
  member = await service.api.register()
  org = (await adminJson(admin, 'orgs', 'create', 'Errors Inc', '--owner', owner.email)).org
  expect((await admin('orgs', 'add-member', org.id, member.email, '--role', 'author')).code).toBe(0)
  personalId = (await store.orgs.memberships((await store.accounts.findByEmail(owner.email))!.id))[0]!.org.publicId
})
afterAll(async () => {
  await store?.close()
})

/** The organisation as `orgs show --json` has it, with the length of its activity log. */
const state = async () => {
  const shown = await adminJson(admin, 'orgs', 'show', org.id)
  const log = await store.orgs.activity((await store.orgs.byPublicId(org.id))!.id, 1000, null)
  return { shown, entries: log.length }
}

const expectUsageError = (result: AdminResult, message: string) => {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' })
  expect(result.stderr).toContain(message)
  expect(result.stderr).toContain('alttext admin --help')
}

const expectFailure = (result: AdminResult, message: string) => {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' })
  expect(result.stderr).toBe(`alttext admin: ${message}\n`)
}

describe('usage errors: exit 2, nothing changed', () => {
  let before: Awaited<ReturnType<typeof state>>
  beforeAll(async () => {
    before = await state()
  })

  const cases: [string, () => string[], string][] = [
    ['an organisation id that is not one', () => ['orgs', 'show', 'acme'], '"acme" is not an organisation id'],
    ['an id too short', () => ['orgs', 'show', 'org_12ab'], '"org_12ab" is not an organisation id'],
    ['orgs show without ORG', () => ['orgs', 'show'], 'usage: alttext admin orgs show ORG'],
    ['orgs create without --owner', () => ['orgs', 'create', 'Acme'], 'orgs create needs --owner EMAIL'],
    ['orgs create with an owner that is no email', () => ['orgs', 'create', 'Acme', '--owner', 'boss'], '"boss" is not an email address'],
    ['orgs create with an empty name', () => ['orgs', 'create', '  ', '--owner', owner.email], 'an organisation name is 1 to 100 characters'],
    ['orgs create with a name too long', () => ['orgs', 'create', 'x'.repeat(101), '--owner', owner.email], 'an organisation name is 1 to 100 characters'],
    ['orgs create with a line break in the name', () => ['orgs', 'create', 'Acme\nEvil', '--owner', owner.email], 'cannot hold control characters'],
    ['orgs create --plan without --credits', () => ['orgs', 'create', 'Acme', '--owner', owner.email, '--plan', 'team'], '--plan NAME goes with --credits N'],
    ['orgs create --plan free', () => ['orgs', 'create', 'Acme', '--owner', owner.email, '--credits', '5', '--plan', 'free'], 'leave out --credits and --plan'],
    [
      'orgs create with a name of two words unquoted',
      () => ['orgs', 'create', 'Acme', 'Docs', '--owner', owner.email],
      'usage: alttext admin orgs create NAME --owner EMAIL',
    ],
    ['orgs add-member without --role', () => ['orgs', 'add-member', org.id, member.email], 'orgs add-member needs --role ROLE'],
    [
      'orgs add-member with an unknown role',
      () => ['orgs', 'add-member', org.id, member.email, '--role', 'boss'],
      'unknown role "boss": use owner, admin, reviewer or author',
    ],
    [
      'orgs set-role with an unknown role',
      () => ['orgs', 'set-role', org.id, member.email, 'editor'],
      'unknown role "editor": use owner, admin, reviewer or author',
    ],
    ['orgs set-role without ROLE', () => ['orgs', 'set-role', org.id, member.email], 'usage: alttext admin orgs set-role ORG EMAIL ROLE'],
    ['orgs remove-member with an email that is not one', () => ['orgs', 'remove-member', org.id, 'nobody'], '"nobody" is not an email address'],
    [
      'orgs set-role with --role (it takes ROLE)',
      () => ['orgs', 'set-role', org.id, member.email, 'admin', '--role', 'admin'],
      '`orgs set-role` takes no --role',
    ],
    ['--org on a command without it', () => ['accounts', 'show', owner.email, '--org', org.id], '`accounts show` takes no --org'],
    ['plans set with EMAIL and --org', () => ['plans', 'set', owner.email, '--org', org.id, '--credits', '5'], 'give EMAIL or --org ORG, not both'],
    ['credits grant with EMAIL and --org', () => ['credits', 'grant', owner.email, '--org', org.id, '5'], 'give EMAIL or --org ORG, not both'],
    ['plans reset with neither', () => ['plans', 'reset'], 'usage: alttext admin plans reset EMAIL|--org ORG'],
    ['credits grant --org without N', () => ['credits', 'grant', '--org', org.id], 'usage: alttext admin credits grant EMAIL|--org ORG N'],
    ['credits grant --org of a malformed id', () => ['credits', 'grant', '--org', 'acme', '5'], '"acme" is not an organisation id'],
    ['credits grant --org of 0', () => ['credits', 'grant', '--org', org.id, '0'], 'N must be between 1 and'],
    ['plans set --org without --credits', () => ['plans', 'set', '--org', org.id], 'plans set needs --credits N'],
    ['an orgs command that does not exist', () => ['orgs', 'delete', org.id], 'unknown command "orgs delete"'],
  ]
  for (const [what, args, message] of cases) {
    test(what, async () => {
      expectUsageError(await admin(...args()), message)
    })
  }

  test('after all of them the organisation is as it was', async () => {
    expect(await state()).toEqual(before)
    expect((await adminJson(admin, 'orgs', 'list')).orgs).toHaveLength(1)
  })

  test('an unknown group names orgs among the groups', async () => {
    expectUsageError(await admin('teams', 'list'), 'use accounts, orgs, plans or credits')
  })
})

describe('failures: exit 1 with the reason, nothing changed', () => {
  let before: Awaited<ReturnType<typeof state>>
  beforeAll(async () => {
    before = await state()
  })

  const unknownOrg = 'org_000000000000000000000000'
  for (const args of [
    ['orgs', 'show', unknownOrg],
    ['orgs', 'add-member', unknownOrg, '@member', '--role', 'author'],
    ['orgs', 'set-role', unknownOrg, '@member', 'admin'],
    ['orgs', 'remove-member', unknownOrg, '@member'],
    ['plans', 'set', '--org', unknownOrg, '--credits', '5'],
    ['plans', 'reset', '--org', unknownOrg],
    ['credits', 'grant', '--org', unknownOrg, '5'],
  ]) {
    test(`${args.slice(0, 2).join(' ')} of an unknown organisation`, async () => {
      expectFailure(await admin(...args.map((a) => (a === '@member' ? member.email : a))), `no organisation has the id ${unknownOrg}`)
    })
  }

  test('an email without an account', async () => {
    const nobody = uniqueEmail('nobody')
    for (const args of [
      ['orgs', 'create', 'Ghost', '--owner', nobody],
      ['orgs', 'add-member', org.id, nobody, '--role', 'author'],
      ['orgs', 'set-role', org.id, nobody, 'admin'],
      ['orgs', 'remove-member', org.id, nobody],
    ])
      expectFailure(await admin(...args), `no account has the email ${nobody}`)
  })

  test('an account that is not a member', async () => {
    const outsider = await service.api.register()
    expectFailure(await admin('orgs', 'set-role', org.id, outsider.email, 'admin'), `${outsider.email} is not a member of Errors Inc (${org.id})`)
    expectFailure(await admin('orgs', 'remove-member', org.id, outsider.email), `${outsider.email} is not a member of Errors Inc (${org.id})`)
  })

  test('a member already', async () => {
    expectFailure(
      await admin('orgs', 'add-member', org.id, member.email, '--role', 'admin'),
      `${member.email} is already a member of Errors Inc (${org.id}), as author: \`alttext admin orgs set-role\` changes a role`,
    )
  })

  test('the last owner can be neither demoted nor removed', async () => {
    const message = `${owner.email} is the last owner of Errors Inc (${org.id}): make another member owner first (alttext admin orgs set-role ${org.id} EMAIL owner)`
    expectFailure(await admin('orgs', 'set-role', org.id, owner.email, 'admin'), message)
    expectFailure(await admin('orgs', 'remove-member', org.id, owner.email), message)
  })

  test('a personal organisation gets no members, and its person keeps it', async () => {
    const message = `${personalId} is the personal organisation of ${owner.email}: it has no other members; make a team organisation with \`alttext admin orgs create\``
    expectFailure(await admin('orgs', 'add-member', personalId, member.email, '--role', 'author'), message)
    expectFailure(await admin('orgs', 'set-role', personalId, owner.email, 'author'), message)
    expectFailure(await admin('orgs', 'remove-member', personalId, owner.email), message)
    expect((await adminJson(admin, 'orgs', 'show', personalId)).members).toEqual([{ email: owner.email, role: 'owner', joined_at: expect.any(String) }])
  })

  test('after all of them the organisation is as it was', async () => {
    expect(await state()).toEqual(before)
  })
})

describe('security: the output never shows a key, a key hash or a token', () => {
  test('orgs list, show and create, in text and JSON, and the member changes', async () => {
    const memberAccount = (await store.accounts.findByEmail(member.email))!
    const orgId = (await store.orgs.byPublicId(org.id))!.id
    const minted = mintKey('member key', null)
    expect(await store.keys.create(memberAccount.id, minted.record, Date.now(), 100, orgId)).toMatchObject({ prefix: minted.record.prefix })
    const tokenHash = hashKey(`invitation-${Date.now()}`)
    expect(
      await store.orgs.invite(orgId, uniqueEmail('invited'), 'reviewer', tokenHash, Date.now() + 86_400_000, { accountId: null, email: null, now: Date.now() }),
    ).not.toBe('member')
    const secrets = readDb(service, (db) =>
      db
        .query<{ secret: string }, [number]>(
          `SELECT key_hash AS secret FROM api_keys WHERE org_id = ?1 OR account_id IN (SELECT account_id FROM org_members WHERE org_id = ?1)
           UNION ALL SELECT password_hash FROM accounts WHERE id IN (SELECT account_id FROM org_members WHERE org_id = ?1)`,
        )
        .all(orgId)
        .map((row) => row.secret),
    )
    expect(secrets.length).toBeGreaterThanOrEqual(4)
    const outputs: AdminResult[] = []
    for (const args of [
      ['orgs', 'list'],
      ['orgs', 'list', '--json'],
      ['orgs', 'show', org.id],
      ['orgs', 'show', org.id, '--json'],
      ['orgs', 'show', personalId, '--json'],
      ['orgs', 'create', 'Secretive', '--owner', member.email, '--json'],
      ['orgs', 'set-role', org.id, member.email, 'reviewer'],
      ['orgs', 'remove-member', org.id, member.email],
      ['orgs', 'add-member', org.id, member.email, '--role', 'author'],
    ])
      outputs.push(await admin(...args))
    for (const result of outputs) {
      expect(result.code).toBe(0)
      const output = result.stdout + result.stderr
      for (const secret of [...secrets, tokenHash, minted.apiKey, owner.apiKey, member.apiKey]) expect(output).not.toContain(secret)
      expect(output).not.toMatch(/alt_[0-9a-f]{64}|\$argon2|[0-9a-f]{64}/)
    }
  })

  test('a name made elsewhere with an escape sequence is printed without it', async () => {
    const ownerId = (await store.accounts.findByEmail(owner.email))!.id
    const made = await store.orgs.create('Evil\u001b[2J\u001b]0;pwned\u0007 Ltd', newOrgPublicId(), 'free', {
      accountId: ownerId,
      email: owner.email,
      now: Date.now(),
    })
    for (const args of [
      ['orgs', 'list'],
      ['orgs', 'show', made.publicId],
      ['credits', 'grant', '--org', made.publicId, '1'],
    ]) {
      const result = await admin(...args)
      expect(result.code).toBe(0)
      expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
      expect(result.stdout).toContain('Evil?[2J?]0;pwned? Ltd')
    }
  })
})
