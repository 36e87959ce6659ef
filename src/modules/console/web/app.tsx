// The console's shell: who is signed in, which page the address names, the header and navigation.
import type { ComponentType } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { actIn, api, atLeast, ORG_LOST_EVENT, type Org, type Session } from './api'
import { App, type AppState, isSignedOut, Link } from './components'
import { OrgSwitcher, orgLabel, roleName } from './org-switcher'
import { Account } from './pages/account'
import { ForgotPassword, ResetPassword, SignIn, SignUp } from './pages/auth'
import { Batches } from './pages/batches'
import { Invitation } from './pages/invitation'
import { Keys } from './pages/keys'
import { Members } from './pages/members'
import { Overview } from './pages/overview'
import { Recent } from './pages/recent'
import { Review } from './pages/review'
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
  '/review': Review,
  '/members': Members,
  '/account': Account,
  '/invitation': Invitation,
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
const NAV: ConsolePath[] = ['/', '/keys', '/try', '/recent', '/batches', '/review', '/members', '/account']
/** Pages the navigation lists only to those whose role uses them. */
const NAV_ROLE: Partial<Record<ConsolePath, 'admin'>> = { '/members': 'admin' }

// The organisation chosen in this browser, per person (two people may share a browser profile).
const orgKey = (email: string) => `alttext-org:${email}`
function storedOrg(email: string): string | null {
  try {
    return localStorage.getItem(orgKey(email))
  } catch {
    return null
  }
}
function storeOrg(email: string, id: string | null): void {
  try {
    if (id === null) localStorage.removeItem(orgKey(email))
    else localStorage.setItem(orgKey(email), id)
  } catch {
    // Storage refused (a private window): the choice holds until the page is reloaded.
  }
}

export function Console() {
  const { path, moves } = useLocation()
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const [notice, setNotice] = useState('')
  const [returnTo, setReturnTo] = useState<string | null>(null)
  // undefined until the person's organisations are known: pages wait, so their first request names the right one.
  const [orgs, setOrgs] = useState<Org[] | undefined>(undefined)
  const [org, setOrg] = useState<Org | null>(null)
  // Switching organisation counts as a move: the page loads again and its heading takes the focus.
  const [switches, setSwitches] = useState(0)
  const [orgSaid, setOrgSaid] = useState('')
  // The newest list, for a switch right after a reload (a new organisation) within the same event.
  const latestOrgs = useRef<Org[]>([])
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

  const email = session?.email ?? null
  const choose = (list: Org[], id: string | null): Org | null => {
    const chosen = list.find((each) => each.id === id) ?? list.find((each) => each.personal) ?? list[0] ?? null
    actIn(chosen?.id ?? null)
    setOrg(chosen)
    return chosen
  }
  const loadOrgs = async (): Promise<Org[]> => {
    // Asked without an organisation header: the remembered one may be gone.
    const list = await api.orgs().then(
      (answer) => answer.orgs,
      () => [] as Org[],
    )
    latestOrgs.current = list
    setOrgs(list)
    return list
  }
  useEffect(() => {
    if (!email || session?.email_verified === false) {
      actIn(null)
      setOrg(null)
      setOrgs(email ? [] : undefined)
      return
    }
    void loadOrgs().then((list) => choose(list, storedOrg(email)))
  }, [email, session?.email_verified])
  useEffect(() => {
    // A request answered org_not_found: this person was removed from it (or it was deleted) meanwhile.
    const lost = () => {
      if (!email) return
      storeOrg(email, null)
      void loadOrgs().then((list) => {
        const chosen = choose(list, null)
        setOrgSaid('')
        setNotice(`You are no longer a member of that organisation. The console now works in ${chosen ? orgLabel(chosen) : 'your account'}.`)
        setSwitches((n) => n + 1)
      })
    }
    addEventListener(ORG_LOST_EVENT, lost)
    return () => removeEventListener(ORG_LOST_EVENT, lost)
  }, [email])

  // The compact menu of narrow windows: open on the page where it was opened, so a page change closes it
  // in the same render (an effect closed it a frame after the new page showed).
  const [menuOpenOn, setMenuOpenOn] = useState<string | null>(null)
  const menuOpen = menuOpenOn === path
  const setMenuOpen = (open: boolean) => setMenuOpenOn(open ? path : null)
  const closeMenuOnEscape = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !menuOpen) return
    setMenuOpen(false)
    document.querySelector<HTMLElement>('.menu-toggle')?.focus()
  }

  const signedIn = path in SIGNED_IN_PAGES
  useEffect(() => {
    if (session === undefined) return
    if (session === null && signedIn) {
      // With the query: an invitation link's token must survive signing in.
      setReturnTo(path === '/' ? null : path + location.search)
      navigate('/sign-in', { replace: true })
    } else if (session && SIGNED_OUT_ONLY.has(path)) navigate(returnTo ?? '/', { replace: true })
  }, [session, path])

  const state: AppState = {
    session: session ?? null,
    moves: moves + switches,
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
    org,
    orgs: orgs ?? [],
    switchOrg: (id, said) => {
      const chosen = choose(latestOrgs.current, id)
      if (!chosen || !email) return
      storeOrg(email, chosen.id)
      // A plain switch is said in the header's live region; news (joined, created) at the top of the page too.
      const news = said ?? `The console now works in ${orgLabel(chosen)}, where you are ${roleName(chosen.role)}.`
      setOrgSaid(said ? '' : news)
      if (said) setNotice(said)
      setSwitches((n) => n + 1)
    },
    reloadOrgs: async () => {
      const list = await loadOrgs()
      // Keeps the current choice when it is still there (its role may have changed).
      choose(list, org?.id ?? null)
      return list
    },
  }

  const signOut = async () => {
    await api.signOut().catch(() => undefined)
    state.signedOut('You are signed out.')
  }

  // An account that has not confirmed its address can do nothing but ask for the mail again.
  const pending = session?.email_verified === false
  const Current = session && (pending || orgs !== undefined) ? (pending && signedIn ? VerifyPending : SIGNED_IN_PAGES[path]) : undefined
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
                {org && !pending && <OrgSwitcher />}
                <span class="email">{session.email}</span>
                <button type="button" class="secondary small" onClick={signOut}>
                  Sign out
                </button>
              </div>
            )}
          </div>
          <p role="status" class="visually-hidden">
            {orgSaid}
          </p>
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
                {NAV.filter((target) => {
                  const needs = NAV_ROLE[target]
                  return !needs || (org !== null && atLeast(org.role, needs))
                }).map((target) => (
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
          {session === undefined || !Shown ? <p aria-busy="true">Loading…</p> : <Shown key={session ? `${path} ${org?.id ?? ''}` : path} />}
        </main>
        <footer>
          <a href="/docs">API reference</a> · <a href="/docs/errors">Error reference</a>
        </footer>
      </div>
    </App.Provider>
  )
}
