// Signing up, signing in, and getting back in: forgot password and the reset page that reset mails link to.
import { useEffect, useState } from 'preact/hooks'
import { api, type Registration, type Session } from '../api'
import { ErrorMessage, Field, Link, OnceKey, Page, Status, useAction, useApp } from '../components'
import { navigate } from '../router'

const PASSWORD_HINT = '8 to 128 characters. A few unrelated words make a strong one.'

const value = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement).value

/** The service's words as a sentence. */
const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`

const listed = (domains: string[]) => (domains.length === 1 ? domains[0] : `${domains.slice(0, -1).join(', ')} or ${domains.at(-1)}`)

export function SignIn() {
  const { signedIn } = useApp()
  const { busy, error, run } = useAction()
  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const session = await run(() => api.signIn(value(form, 'email'), value(form, 'password')))
    if (session) signedIn(session)
  }
  return (
    <Page title="Sign in">
      <form onSubmit={submit} class="narrow">
        <Field id="email" name="email" type="email" label="Email address" autocomplete="username" required />
        <Field id="password" name="password" type="password" label="Password" autocomplete="current-password" required />
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
      <p>
        No account yet? <Link href="/sign-up">Sign up</Link>
      </p>
    </Page>
  )
}

export function SignUp() {
  const { signedIn, setNotice } = useApp()
  const { busy, error, run } = useAction()
  const [created, setCreated] = useState<{ key: string; session: Session | null } | null>(null)
  // Who may sign up, before anyone types; when it cannot be read, the form is shown and register says.
  const [registration, setRegistration] = useState<Registration | null>(null)
  const [policyRead, setPolicyRead] = useState(false)
  useEffect(() => {
    api
      .registration()
      .then(setRegistration, () => {})
      .finally(() => setPolicyRead(true))
  }, [])
  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const email = value(form, 'email')
    const password = value(form, 'password')
    const account = await run(() => api.register(email, password))
    if (!account) return
    // The account exists and its key is on screen whatever happens next; a failed sign-in only means the
    // person signs in by hand after saving the key.
    const session = await api.signIn(email, password).catch(() => null)
    setCreated({ key: account.api_key, session })
  }
  if (created)
    return (
      <Page title="Your account is ready">
        <OnceKey
          apiKey={created.key}
          title="Your first API key"
          doneLabel={created.session ? 'Continue to the overview' : 'Continue to sign in'}
          onDone={() => {
            if (created.session) signedIn(created.session)
            else {
              setNotice('Your account is ready. Sign in with your email address and password.')
              navigate('/sign-in')
            }
          }}
        >
          {created.session?.email_verified === false && (
            <p id="confirm-first">
              <strong>Before it works, confirm your email address:</strong> we mailed a link to {created.session.email}.
            </p>
          )}
          <p>Programs send this key in the X-API-Key header. You can make more keys, rotate or revoke them on the Keys page.</p>
        </OnceKey>
      </Page>
    )
  if (registration?.policy === 'closed' && registration.message)
    return (
      <Page title="Sign up">
        <p class="notice" id="registration-closed">
          {sentence(registration.message)}
        </p>
        <p>
          Already have an account? <Link href="/sign-in">Sign in</Link>
        </p>
      </Page>
    )
  const domains = registration?.policy === 'domains' ? registration.domains : null
  return (
    <Page title="Sign up" intro="An account on the free plan comes with monthly credits and its first API key." loading={!policyRead}>
      <form onSubmit={submit} class="narrow">
        <Field
          id="email"
          name="email"
          type="email"
          label="Email address"
          hint={domains ? `Sign-up is open to addresses at ${listed(domains)} only.` : undefined}
          autocomplete="username"
          required
          maxLength={254}
        />
        <Field
          id="password"
          name="password"
          type="password"
          label="Password"
          hint={PASSWORD_HINT}
          autocomplete="new-password"
          required
          minLength={8}
          maxLength={128}
        />
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating the account…' : 'Create the account'}
        </button>
      </form>
      <p>
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </Page>
  )
}

export function ForgotPassword() {
  const { busy, error, run } = useAction()
  const [sent, setSent] = useState('')
  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    const answer = await run(() => api.forgotPassword(value(event.currentTarget as HTMLFormElement, 'email')))
    if (answer) setSent(`${answer.message} Open the link in the mail to choose a new password.`)
  }
  return (
    <Page title="Forgot your password?" intro="We mail you a link to choose a new one. Choosing it revokes your API keys and gives you one new key.">
      <form onSubmit={submit} class="narrow">
        <Field id="email" name="email" type="email" label="Email address" autocomplete="username" required />
        <ErrorMessage error={error} />
        <Status message={sent} />
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : 'Send the reset link'}
        </button>
      </form>
      <p>
        <Link href="/sign-in">Back to sign in</Link>
      </p>
    </Page>
  )
}

/** Read once from the address the mail linked to; then the token leaves the address bar (and history). */
export function takeToken(): string {
  const token = new URLSearchParams(location.search).get('token') ?? ''
  if (location.search) history.replaceState(null, '', location.pathname)
  return token
}

export function ResetPassword() {
  const { session, forget } = useApp()
  const [token] = useState(takeToken)
  const { busy, error, run } = useAction()
  const [done, setDone] = useState<{ key: string; message: string } | null>(null)
  useEffect(() => {
    // The reset ended every session of the account, this one too if it was the same account.
    if (done && session) forget()
  }, [done])
  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    if (busy || done) return
    const form = event.currentTarget as HTMLFormElement
    const answer = await run(() => api.resetPassword(value(form, 'token').trim(), value(form, 'new_password')))
    if (answer) setDone({ key: answer.api_key, message: answer.message })
  }
  return (
    <Page
      title="Choose a new password"
      intro="Choosing a new password revokes every API key of the account, signs it out everywhere, and gives you one new key, shown once."
    >
      <form onSubmit={submit} class="narrow" id="reset-form">
        <fieldset disabled={done !== null}>
          <legend class="visually-hidden">New password</legend>
          <Field id="token" name="token" label="Reset token (from the mail)" defaultValue={token} required autocomplete="off" spellcheck={false} />
          <Field
            id="new_password"
            name="new_password"
            type="password"
            label="New password"
            hint={PASSWORD_HINT}
            autocomplete="new-password"
            required
            minLength={8}
            maxLength={128}
          />
          <ErrorMessage error={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'Setting the password…' : 'Set the new password'}
          </button>
        </fieldset>
      </form>
      {done && (
        <OnceKey apiKey={done.key} title="Your new API key">
          <p>Your password is changed. Every earlier API key was revoked: this one replaces them.</p>
        </OnceKey>
      )}
      {done && (
        <p>
          <Link href="/sign-in">Sign in with the new password</Link>
        </p>
      )}
    </Page>
  )
}
