// Account: the email, changing the password, signing out everywhere, and deleting the account.
import { useState } from 'preact/hooks'
import { api } from '../api'
import { type Confirmation, ConfirmDialog, ErrorMessage, Field, Page, Status, useAction, useApp } from '../components'
import { planName } from '../format'
import { plural } from '../../../../shared/wording'
import { LeaveOrg } from './members'

export function Account() {
  const { session, signedOut } = useApp()
  const password = useAction()
  const everywhere = useAction()
  const removal = useAction()
  const [changed, setChanged] = useState('')
  const [ask, setAsk] = useState<Confirmation | null>(null)

  const changePassword = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement
    setChanged('')
    if (field('new_password').value !== field('repeat_password').value) {
      password.setError(null)
      field('repeat_password').setCustomValidity('The two new passwords differ.')
      field('repeat_password').reportValidity()
      return
    }
    const answer = await password.run(() => api.changePassword(field('current_password').value, field('new_password').value))
    if (!answer) return
    form.reset()
    setChanged('Your password is changed. Every other session is signed out; your API keys still work.')
  }
  const endAll = async () => {
    const answer = await everywhere.run(api.endAllSessions)
    if (answer) signedOut(`Signed out everywhere (${plural(answer.ended, 'session')} ended).`)
  }
  const deleteAccount = (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const secret = (form.elements.namedItem('delete_password') as HTMLInputElement).value
    setAsk({
      title: 'Delete your account for good?',
      body: (
        <p>Your account, every API key, your usage and your history are deleted. Programs that use your keys stop working at once. This cannot be undone.</p>
      ),
      confirm: 'Delete my account',
      danger: true,
      run: async () => {
        const answer = await removal.run(() => api.deleteAccount(secret))
        if (!answer) return
        const { keys, sessions, history } = answer.deleted
        signedOut(
          `Your account is deleted, with ${plural(keys, 'API key')}, ${plural(sessions, 'session')} and ${plural(history, 'history entry', 'history entries')}.`,
        )
      },
    })
  }

  return (
    <Page title="Account">
      <dl class="facts">
        <div>
          <dt>Email address</dt>
          <dd>{session?.email}</dd>
        </div>
        <div>
          <dt>Plan</dt>
          <dd>{session ? planName(session.plan) : ''}</dd>
        </div>
      </dl>

      <section aria-labelledby="password-h">
        <h2 id="password-h">Change the password</h2>
        <form onSubmit={changePassword} class="narrow">
          <input type="text" name="username" autocomplete="username" value={session?.email ?? ''} hidden readOnly />
          <Field id="current_password" name="current_password" type="password" label="Current password" autocomplete="current-password" required />
          <Field
            id="new_password"
            name="new_password"
            type="password"
            label="New password"
            hint="8 to 128 characters."
            autocomplete="new-password"
            required
            minLength={8}
            maxLength={128}
          />
          <Field
            id="repeat_password"
            name="repeat_password"
            type="password"
            label="New password again"
            autocomplete="new-password"
            required
            minLength={8}
            maxLength={128}
            onInput={(e: Event) => (e.currentTarget as HTMLInputElement).setCustomValidity('')}
          />
          <ErrorMessage error={password.error} />
          <Status message={changed} />
          <button type="submit" disabled={password.busy}>
            {password.busy ? 'Changing…' : 'Change the password'}
          </button>
        </form>
      </section>

      <LeaveOrg />

      <section aria-labelledby="sessions-h">
        <h2 id="sessions-h">Sign out everywhere</h2>
        <p>Ends every session of your account in every browser, this one included. API keys keep working.</p>
        <ErrorMessage error={everywhere.error} />
        <button type="button" class="secondary" onClick={endAll} disabled={everywhere.busy}>
          Sign out everywhere
        </button>
      </section>

      <section aria-labelledby="delete-h">
        <h2 id="delete-h">Delete the account</h2>
        <form onSubmit={deleteAccount} class="narrow">
          <Field id="delete_password" name="delete_password" type="password" label="Your password" autocomplete="current-password" required />
          <label class="check">
            <input type="checkbox" name="understood" required /> I understand that my keys, usage and history are deleted for good
          </label>
          <ErrorMessage error={removal.error} />
          <button type="submit" class="danger" disabled={removal.busy}>
            Delete the account…
          </button>
        </form>
      </section>
      <ConfirmDialog ask={ask} onClose={() => setAsk(null)} />
    </Page>
  )
}
