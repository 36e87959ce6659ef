// An organisation with one member of each role, made over HTTP as people would (invite, mailed token,
// accept), for the organisation tests. Mail is kept in memory: the tests read the tokens from it.
import type { Mail, Mailer } from '../../src/modules/accounts/mailer'
import type { Role } from '../../src/store/contract'
import type { Api, RegisteredAccount, TestService } from '../support/service'

/** A mailer that keeps what it is given, newest last. */
export function memoryMailer(): Mailer & { mails: Mail[]; tokenFor(email: string): string } {
  const mails: Mail[] = []
  return {
    kind: 'smtp',
    mails,
    async send(mail) {
      mails.push(mail)
    },
    close() {},
    /** The token of the newest invitation mailed to `email`. */
    tokenFor(email) {
      const mail = mails.findLast((m) => m.to === email && m.subject.includes('invited'))
      const token = mail && /token=([0-9a-f]{64})/u.exec(mail.text)?.[1]
      if (!token) throw new Error(`no invitation mailed to ${email}`)
      return token
    },
  }
}

export type Member = RegisteredAccount & { accountId: number; orgKey: string; orgKeyPrefix: string; role: Role }
export type Team = { id: string; name: string; owner: Member; admin: Member; reviewer: Member; author: Member }

/** POST /api/keys for the organisation; the key's secret. */
export async function orgKey(api: Api, personalKey: string, orgId: string) {
  const made = await api.post('/api/keys', { org_id: orgId }, personalKey)
  if (made.status !== 201) throw new Error(`key for ${orgId}: ${made.status} ${made.text}`)
  return { key: made.body.api_key as string, prefix: made.body.prefix as string }
}

/** Invites `account` with `role` (by `inviterKey`, a key of the org) and accepts with the account's personal key. */
export async function join(api: Api, mailer: ReturnType<typeof memoryMailer>, orgId: string, inviterKey: string, account: RegisteredAccount, role: Role) {
  const invited = await api.post(`/api/orgs/${orgId}/invitations`, { email: account.email, role }, inviterKey)
  if (invited.status !== 201) throw new Error(`invite ${account.email}: ${invited.status} ${invited.text}`)
  const accepted = await api.post('/api/invitations/accept', { token: mailer.tokenFor(account.email) }, account.apiKey)
  if (accepted.status !== 200) throw new Error(`accept ${account.email}: ${accepted.status} ${accepted.text}`)
}

export async function accountIdOf(service: TestService, email: string): Promise<number> {
  const rows = await service.query<{ id: number }>('SELECT id FROM accounts WHERE email = ?', email)
  return Number(rows[0]!.id)
}

export async function makeTeam(service: TestService, mailer: ReturnType<typeof memoryMailer>, name = 'Docs team'): Promise<Team> {
  const { api } = service
  const ownerAccount = await api.register()
  const made = await api.post('/api/orgs', { name }, ownerAccount.apiKey)
  if (made.status !== 201) throw new Error(`create org: ${made.status} ${made.text}`)
  const id = made.body.id as string
  const member = async (account: RegisteredAccount, role: Role): Promise<Member> => {
    const k = await orgKey(api, account.apiKey, id)
    return { ...account, accountId: await accountIdOf(service, account.email), orgKey: k.key, orgKeyPrefix: k.prefix, role }
  }
  const owner = await member(ownerAccount, 'owner')
  const others: Partial<Record<Role, Member>> = {}
  for (const role of ['admin', 'reviewer', 'author'] as const) {
    const account = await api.register()
    await join(api, mailer, id, owner.orgKey, account, role)
    others[role] = await member(account, role)
  }
  return { id, name, owner, admin: others.admin!, reviewer: others.reviewer!, author: others.author! }
}
