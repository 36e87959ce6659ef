// Confirming the email address. The page the mailed link opens asks for a click before it confirms anything
// (a mail scanner that opens every link must not confirm an address for whoever registered it). And what a
// signed-in account that has not confirmed yet sees instead of the console: where the mail went, a button
// to send it again, and one to go on once it is done.
import { useState } from 'preact/hooks'
import { ApiFailure, api } from '../api'
import { ErrorMessage, Page, Status, useAction, useApp } from '../components'
import { navigate } from '../router'
import { takeToken } from './auth'

export function VerifyEmail() {
  const { signedIn } = useApp()
  const [token] = useState(takeToken)
  const { busy, error, run } = useAction()
  const [done, setDone] = useState('')
  const confirm = async () => {
    const answer = await run(() => api.verifyEmail(token))
    if (answer) setDone(answer.message)
  }
  // The console reads the session again: if this browser is signed in, it is now a confirmed account's.
  const proceed = async () => {
    const fresh = await api.session().catch(() => null)
    if (fresh) signedIn(fresh)
    else navigate('/sign-in')
  }
  const stale = error instanceof ApiFailure && error.code === 'invalid_token'
  return (
    <Page title="Confirm your email address">
      {done ? (
        <>
          <Status message={done} />
          <button type="button" onClick={proceed}>
            Continue to the console
          </button>
        </>
      ) : (
        <>
          <p>
            Confirm that this address is yours, and the account's API key and the console start to work. If you did not sign up here, do not confirm: close this
            page.
          </p>
          {!token && <p class="notice">This address has no token: open the link from the mail, as it is.</p>}
          {stale ? (
            <div role="alert" class="error">
              <p>This link no longer works: it was used already, a newer one was mailed, or it is older than 24 hours.</p>
              <p class="detail">Sign in and ask for a new link.</p>
            </div>
          ) : (
            <ErrorMessage error={error} />
          )}
          <button type="button" onClick={confirm} disabled={busy || !token}>
            {busy ? 'Confirming…' : 'Confirm my email address'}
          </button>
        </>
      )}
    </Page>
  )
}

export function VerifyPending() {
  const { session, signedIn } = useApp()
  const resend = useAction()
  const check = useAction()
  const [said, setSaid] = useState('')
  const again = async () => {
    const answer = await resend.run(api.resendVerification)
    if (answer) setSaid(answer.message)
  }
  const recheck = async () => {
    const fresh = await check.run(api.session)
    if (!fresh) return
    if (fresh.email_verified) signedIn(fresh)
    else setSaid('Your address is not confirmed yet: open the link in the mail.')
  }
  return (
    <Page title="Confirm your email address">
      <p>
        We mailed a link to <strong>{session?.email}</strong>. Open it and confirm: until then your API key and this console can do nothing else. The link works
        for 24 hours.
      </p>
      <p>No mail? Look in the spam folder, or have it sent again.</p>
      <Status message={said} />
      <ErrorMessage error={resend.error ?? check.error} />
      <div class="actions">
        <button type="button" onClick={again} disabled={resend.busy}>
          {resend.busy ? 'Sending…' : 'Send the link again'}
        </button>
        <button type="button" class="secondary" onClick={recheck} disabled={check.busy}>
          I have confirmed it
        </button>
      </div>
    </Page>
  )
}
