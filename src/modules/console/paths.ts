// The console's pages: each is a path the server answers with the console's HTML and the browser app
// renders. Read by the server (its routes) and by the app (its router), so the two cannot disagree.
export const CONSOLE_PAGES = {
  '/': 'Overview',
  '/keys': 'API keys',
  '/try': 'Try it',
  '/recent': 'Recent',
  // A batch's results for review: `?id=` names the batch.
  '/batches': 'Batches',
  // The organisation's review queue of suggestions; filters are query parameters (`?status=&mine=…`).
  '/review': 'Review',
  '/members': 'Members',
  '/account': 'Account',
  // Invitation mails link here with `?token=`; the page asks for a click before it accepts.
  '/invitation': 'Invitation',
  '/sign-in': 'Sign in',
  '/sign-up': 'Sign up',
  '/forgot-password': 'Forgot password',
  // Reset mails link here with `?token=`.
  '/reset-password': 'Reset password',
  // Verification mails link here with `?token=`; the page asks for a click before it confirms anything.
  '/verify-email': 'Confirm your email address',
} as const

export type ConsolePath = keyof typeof CONSOLE_PAGES

export const CONSOLE_PATHS = Object.keys(CONSOLE_PAGES) as ConsolePath[]

/**
 * Set on the page's <html> when the request that fetched it carried no session cookie: the app then knows
 * nobody is signed in without asking GET /api/session, whose 401 every browser logs as an error.
 */
export const NO_SESSION_ATTRIBUTE = 'data-no-session'
