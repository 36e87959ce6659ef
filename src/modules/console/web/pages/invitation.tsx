// The page invitation mails link to (`/invitation?token=…`): signed in (the app sends a signed-out
// person to sign in first and back here), one click joins the organisation, then the console works in it.
import { useState } from 'preact/hooks'
import { api } from '../api'
import { ErrorMessage, Page, useAction, useApp } from '../components'
import { orgLabel, roleName } from '../org-switcher'
import { navigate } from '../router'

export function Invitation() {
  const { session, reloadOrgs, switchOrg } = useApp()
  // Read once: the address loses the token when the invitation is accepted.
  const [token] = useState(() => new URLSearchParams(location.search).get('token') ?? '')
  const accept = useAction()
  const join = async () => {
    const answer = await accept.run(() => api.acceptInvitation(token))
    if (!answer) return
    await reloadOrgs()
    const name = orgLabel({ name: answer.org.name })
    navigate('/review', { replace: true })
    switchOrg(answer.org.id, `You joined ${name} as ${roleName(answer.org.role)}. The console now works in ${name}.`)
  }
  if (!token)
    return (
      <Page title="Invitation">
        <p>This address has no invitation in it. Open the link of the invitation mail again.</p>
      </Page>
    )
  return (
    <Page
      title="Join an organisation"
      intro={`You were invited to an organisation. Joining it adds it to ${session?.email ?? 'your account'}; you can leave it later.`}
    >
      <ErrorMessage error={accept.error} />
      <button type="button" onClick={join} disabled={accept.busy}>
        {accept.busy ? 'Joining…' : 'Accept the invitation'}
      </button>
    </Page>
  )
}
