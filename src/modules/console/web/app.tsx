// The console's shell: who is signed in, which page the address names, the header and navigation.
import type { ComponentType } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, type Session } from './api'
import { App, type AppState, isSignedOut, Link } from './components'
import { Account } from './pages/account'
import { ForgotPassword, ResetPassword, SignIn, SignUp } from './pages/auth'
import { Batches } from './pages/batches'
import { Keys } from './pages/keys'
import { Overview } from './pages/overview'
import { Recent } from './pages/recent'
import { TryIt } from './pages/try'
import { VerifyEmail, VerifyPending } from './pages/verify'
import { CONSOLE_PAGES, type ConsolePath, NO_SESSION_ATTRIBUTE } from '../paths'
import { navigate, useLocation } from './router'

const SIGNED_IN_PAGES: Record<string, ComponentType> = {
  '/': Overview,
  '/keys': Keys,
  '/try': TryIt,
  '/recent': Recent,
  '/batches': Batches,
  '/account': Account,
}
const PUBLIC_PAGES: Record<string, ComponentType> = {
  '/sign-in': SignIn,
  '/sign-up': SignUp,
  '/forgot-password': ForgotPassword,
  '/reset-password': ResetPassword,
  '/verify-email': VerifyEmail,
}
/** Pages that a signed-in person does not need: they go to the overview instead. */
const SIGNED_OUT_ONLY = new Set(['/sign-in', '/sign-up', '/forgot-password'])
const NAV: ConsolePath[] = ['/', '/keys', '/try', '/recent', '/batches', '/account']

export function Console() {
  const { path, moves } = useLocation()
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const [notice, setNotice] = useState('')
  const [returnTo, setReturnTo] = useState<string | null>(null)
  // Hidden until the first page has its data (or 3 s passed): one complete paint, no layout shifts.
  const [visible, setVisible] = useState(false)
  useEffect(() => {
    const timer = setTimeout(() => setVisible(true), 3000)
    return () => clearTimeout(timer)
  }, [])

  useEffect(() => {
    // The page came without a session cookie: nobody is signed in, and asking would only log a 401.
    if (document.documentElement.hasAttribute(NO_SESSION_ATTRIBUTE)) return setSession(null)
    api.session().then(setSession, (failure: unknown) => {
      setSession(null)
      // The cookie outlived its session: drop it, so the next page load need not ask (and log a 401) again.
      if (isSignedOut(failure)) void api.signOut().catch(() => undefined)
      else setNotice('The service could not tell whether you are signed in. Sign in, or reload the page.')
    })
  }, [])

  // The compact menu of narrow windows: closed again whenever the page changes.
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [path])
  const closeMenuOnEscape = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !menuOpen) return
    setMenuOpen(false)
    document.querySelector<HTMLElement>('.menu-toggle')?.focus()
  }

  const signedIn = path in SIGNED_IN_PAGES
  useEffect(() => {
    if (session === undefined) return
    if (session === null && signedIn) {
      setReturnTo(path === '/' ? null : path)
      navigate('/sign-in', { replace: true })
    } else if (session && SIGNED_OUT_ONLY.has(path)) navigate(returnTo ?? '/', { replace: true })
  }, [session, path])

  const state: AppState = {
    session: session ?? null,
    moves,
    notice,
    setNotice,
    signedIn: (next) => {
      setSession(next)
      navigate(returnTo ?? '/')
      setReturnTo(null)
    },
    signedOut: (message) => {
      setSession(null)
      setNotice(message)
      navigate('/sign-in')
    },
    forget: () => setSession(null),
    shown: () => setVisible(true),
  }

  const signOut = async () => {
    await api.signOut().catch(() => undefined)
    state.signedOut('You are signed out.')
  }

  // An account that has not confirmed its address can do nothing but ask for the mail again.
  const pending = session?.email_verified === false
  const Current = session ? (pending && signedIn ? VerifyPending : SIGNED_IN_PAGES[path]) : undefined
  const Public = PUBLIC_PAGES[path]
  const Shown = Public && !(session && SIGNED_OUT_ONLY.has(path)) ? Public : Current

  return (
    <App.Provider value={state}>
      <div class={visible ? undefined : 'booting'}>
        <a href="#main" class="skip">
          Skip to the content
        </a>
        <header class="top">
          <div class="bar">
            <Link href="/" class="brand">
              alttext <span>console</span>
            </Link>
            {session && (
              <div class="who">
                <span class="email">{session.email}</span>
                <button type="button" class="secondary small" onClick={signOut}>
                  Sign out
                </button>
              </div>
            )}
          </div>
          {session && !pending && (
            <nav aria-label="Console" class={menuOpen ? 'open' : undefined} onKeyDown={closeMenuOnEscape}>
              {/* Narrow windows show the pages behind this button (styles.css), wide ones in one row. */}
              <button
                type="button"
                class="menu-toggle secondary small"
                aria-expanded={menuOpen}
                aria-controls="console-pages"
                onClick={() => setMenuOpen(!menuOpen)}
              >
                Menu
              </button>
              <ul id="console-pages">
                {NAV.map((target) => (
                  <li key={target}>
                    <Link href={target} current={path === target}>
                      {CONSOLE_PAGES[target]}
                    </Link>
                  </li>
                ))}
              </ul>
            </nav>
          )}
        </header>
        <main id="main" tabIndex={-1}>
          {session === undefined || !Shown ? <p aria-busy="true">Loading…</p> : <Shown key={path} />}
        </main>
        <footer>
          <a href="/docs">API reference</a> · <a href="/docs/errors">Error reference</a>
        </footer>
      </div>
    </App.Provider>
  )
}
