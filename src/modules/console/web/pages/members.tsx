// Members of the organisation the console acts in: inviting by email with a role, the pending invitations
// (withdraw), each member's role (admins change it) and removing a member or leaving, each asked first.
// A personal organisation has only its person: the page offers to make a new one instead.
import { useEffect, useState } from 'preact/hooks'
import { api, atLeast, type Invitation, type Member, type Role, ROLES } from '../api'
import { type Confirmation, ConfirmDialog, ErrorMessage, Field, Page, SelectField, Status, useAction, useApp } from '../components'
import { formatDate, formatDateTime } from '../format'
import { NewOrgForm, orgLabel, roleName } from '../org-switcher'
import { navigate } from '../router'

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner: everything, also the plan and deleting the organisation',
  admin: 'Admin: members, invitations, keys, webhook',
  reviewer: 'Reviewer: decides suggestions',
  author: 'Author: generates and submits suggestions',
}
/** The roles `role` may give: an owner any, an admin any but owner. */
const grantable = (role: Role) => ROLES.filter((each) => each !== 'owner' || role === 'owner')

export function Members() {
  const { org, session, reloadOrgs, switchOrg } = useApp()
  const [members, setMembers] = useState<Member[] | null>(null)
  const [invitations, setInvitations] = useState<Invitation[] | null>(null)
  const [said, setSaid] = useState('')
  const [ask, setAsk] = useState<Confirmation | null>(null)
  // The role chosen in each member's select, applied by its button (a select that acted on change would act on arrow keys).
  const [chosen, setChosen] = useState<Record<string, Role>>({})
  const list = useAction()
  const change = useAction()
  const invite = useAction()
  const admin = org !== null && !org.personal && atLeast(org.role, 'admin')
  const reload = async () => {
    if (!org || org.personal) return
    const answer = await list.run(() => Promise.all([api.members(org.id), admin ? api.invitations(org.id) : Promise.resolve({ invitations: [] })]))
    if (!answer) return
    setMembers(answer[0].members)
    setInvitations(answer[1].invitations)
  }
  useEffect(() => void reload(), [])

  if (!org)
    return (
      <Page title="Members">
        <p>This service does not offer organisations.</p>
      </Page>
    )
  if (org.personal)
    return (
      <Page title="Members" intro="Your personal organisation has only you in it. To review alt text with others, make an organisation and invite them.">
        <NewOrgForm idPrefix="members-new" />
      </Page>
    )

  const name = orgLabel(org)
  const me = members?.find((member) => member.email === session?.email)

  const sendInvitation = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const email = (form.elements.namedItem('invite_email') as HTMLInputElement).value.trim()
    const role = (form.elements.namedItem('invite_role') as HTMLSelectElement).value as Role
    const sent = await invite.run(() => api.invite(org.id, email, role))
    if (!sent) return
    form.reset()
    setSaid(`Invitation mailed to ${sent.email}, as ${roleName(sent.role)}. The link works once, until ${formatDateTime(sent.expires_at)}.`)
    await reload()
  }
  const withdraw = async (invitation: Invitation) => {
    const done = await change.run(() => api.withdrawInvitation(org.id, invitation.id).then(() => true))
    if (!done) return
    setSaid(`The invitation of ${invitation.email} is withdrawn: its link no longer works.`)
    await reload()
  }
  const applyRole = async (member: Member) => {
    const role = chosen[String(member.account_id)] ?? member.role
    if (role === member.role) return setSaid(`${member.email} is ${roleName(role)} already.`)
    const done = await change.run(() => api.setRole(org.id, member.account_id, role))
    if (!done) return
    setSaid(`${member.email} is now ${roleName(role)}.`)
    if (member.email === session?.email) await reloadOrgs()
    await reload()
  }
  const remove = (member: Member) => {
    const self = member.email === session?.email
    setAsk({
      title: self ? `Leave ${name}?` : `Remove ${member.email} from ${name}?`,
      body: self ? (
        <p>You lose access to its review queue, its keys and its credits; the keys you made for it stop working. Someone must invite you to come back.</p>
      ) : (
        <p>They lose access at once, and the keys they made for {name} stop working. They can be invited again.</p>
      ),
      confirm: self ? 'Leave the organisation' : 'Remove the member',
      danger: true,
      run: async () => {
        const answer = await change.run(() => api.removeMember(org.id, member.account_id))
        if (!answer) return
        if (self) {
          const orgs = await reloadOrgs()
          const personal = orgs.find((each) => each.personal)
          navigate('/')
          if (personal) switchOrg(personal.id, `You left ${name}. The console now works in your personal organisation.`)
          return
        }
        setSaid(`${member.email} is removed from ${name}${answer.revoked_keys ? `; ${answer.revoked_keys} of their keys stopped working` : ''}.`)
        await reload()
      },
    })
  }

  return (
    <Page
      title={`Members of ${name}`}
      loading={members === null && !list.error}
      intro={
        admin ? 'Invite people by email, give each a role, remove those who left.' : `You are ${roleName(org.role)} here. Admins and owners manage the members.`
      }
    >
      <Status message={said} />
      <ErrorMessage error={change.error} />
      {admin && (
        <section aria-labelledby="invite-h">
          <h2 id="invite-h">Invite someone</h2>
          <form onSubmit={sendInvitation} class="narrow">
            <Field id="invite_email" name="invite_email" type="email" label="Email address" required maxLength={254} autocomplete="off" />
            <SelectField
              id="invite_role"
              name="invite_role"
              label="Role"
              choices={grantable(org.role).map((role) => ({ value: role, text: ROLE_TEXT[role] }))}
              defaultValue="reviewer"
            />
            <ErrorMessage error={invite.error} />
            <button type="submit" disabled={invite.busy}>
              {invite.busy ? 'Sending…' : 'Send the invitation'}
            </button>
          </form>
        </section>
      )}
      {admin && (
        <section aria-labelledby="pending-h">
          <h2 id="pending-h">Pending invitations</h2>
          {invitations?.length === 0 && <p>None.</p>}
          {invitations && invitations.length > 0 && (
            <ul class="cards">
              {invitations.map((invitation) => (
                <li key={invitation.id} class="card">
                  <h3>{invitation.email}</h3>
                  <p>
                    As {roleName(invitation.role)}; the link works until <time dateTime={invitation.expires_at}>{formatDateTime(invitation.expires_at)}</time>.
                  </p>
                  <div class="actions">
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => withdraw(invitation)}
                      disabled={change.busy}
                      aria-label={`Withdraw the invitation of ${invitation.email}`}
                    >
                      Withdraw
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
      <section aria-labelledby="members-h">
        <h2 id="members-h">Members</h2>
        <ErrorMessage error={list.error} />
        {members === null && !list.error && <p aria-busy="true">Loading the members…</p>}
        {members && (
          <ul class="cards">
            {members.map((member) => {
              const key = String(member.account_id)
              const self = member.email === session?.email
              // Only an owner touches an owner's role; nobody changes their own role here but an owner.
              const canChange = admin && (org.role === 'owner' || member.role !== 'owner')
              return (
                <li key={key} class="card member">
                  <h3>
                    {member.email}
                    {self && <span class="muted"> (you)</span>}
                  </h3>
                  <p>
                    {member.role.charAt(0).toUpperCase() + member.role.slice(1)} since <time dateTime={member.joined_at}>{formatDate(member.joined_at)}</time>
                  </p>
                  {canChange && (
                    <div class="role-change">
                      <SelectField
                        id={`role-${key}`}
                        label={`Role of ${member.email}`}
                        choices={grantable(org.role).map((role) => ({ value: role, text: role.charAt(0).toUpperCase() + role.slice(1) }))}
                        value={chosen[key] ?? member.role}
                        onChange={(event) => setChosen({ ...chosen, [key]: event.currentTarget.value as Role })}
                      />
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => applyRole(member)}
                        disabled={change.busy}
                        aria-label={`Change the role of ${member.email}`}
                      >
                        Change the role
                      </button>
                    </div>
                  )}
                  {(self || canChange) && (
                    <div class="actions">
                      <button
                        type="button"
                        class="danger"
                        onClick={() => remove(member)}
                        disabled={change.busy}
                        aria-label={self ? `Leave ${name}` : `Remove ${member.email}`}
                      >
                        {self ? 'Leave' : 'Remove'}
                      </button>
                    </div>
                  )}
                </li>
              )
            })}
          </ul>
        )}
        {members && !me && <p class="muted">You are not listed: reload the page.</p>}
      </section>
      <ConfirmDialog ask={ask} onClose={() => setAsk(null)} />
    </Page>
  )
}

/** Leaving the organisation the console acts in, for any member (the Account page; admins also have it on Members). */
export function LeaveOrg() {
  const { org, session, reloadOrgs, switchOrg } = useApp()
  const [ask, setAsk] = useState<Confirmation | null>(null)
  const leave = useAction()
  if (!org || org.personal) return null
  const name = orgLabel(org)
  const confirm = () =>
    setAsk({
      title: `Leave ${name}?`,
      body: <p>You lose access to its review queue, its keys and its credits; the keys you made for it stop working. Someone must invite you to come back.</p>,
      confirm: 'Leave the organisation',
      danger: true,
      run: async () => {
        const left = await leave.run(async () => {
          const me = (await api.members(org.id)).members.find((member) => member.email === session?.email)
          if (!me) throw new Error('you are not listed among the members')
          return api.removeMember(org.id, me.account_id)
        })
        if (!left) return
        const orgs = await reloadOrgs()
        const personal = orgs.find((each) => each.personal)
        navigate('/')
        if (personal) switchOrg(personal.id, `You left ${name}. The console now works in your personal organisation.`)
      },
    })
  return (
    <section aria-labelledby="leave-h">
      <h2 id="leave-h">Leave {name}</h2>
      <p>
        You are {roleName(org.role)} of {name}.
      </p>
      <ErrorMessage error={leave.error} />
      <button type="button" class="secondary" onClick={confirm} disabled={leave.busy}>
        Leave {name}…
      </button>
      <ConfirmDialog ask={ask} onClose={() => setAsk(null)} />
    </section>
  )
}
