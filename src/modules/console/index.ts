// The web console: one HTML page answered at each console path (the app in the page routes on the
// client), and its content-hashed assets under /assets/. Public; GETs are rate limited like every route.
import { Elysia } from 'elysia'
import { ApiError } from '../../shared/errors'
import type { SessionCookie } from '../sessions/service'
import { CONSOLE_PATHS } from './paths'
import { ASSET_PREFIX, type ConsoleFile, consoleFileLoader } from './service'
import page from './web/index.html'

/**
 * The page runs only its own script, loads styles only from this server (no inline style), shows images
 * only from itself and from files the person picked (blob:), talks only to this server, is never framed
 * and never sends a Referer (the reset page's address holds a token until the app removes it).
 */
export const CONSOLE_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; manifest-src 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

function send(request: Request, file: ConsoleFile, headers: Record<string, string>): Response {
  const common = { etag: file.etag, vary: 'accept-encoding', ...headers }
  if (request.headers.get('if-none-match') === file.etag) return new Response(null, { status: 304, headers: common })
  const gzip = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')
  return new Response(gzip ? file.gzip : file.bytes, {
    headers: { 'content-type': file.type, ...(gzip ? { 'content-encoding': 'gzip' } : {}), ...common },
  })
}

export function consoleRoutes(sessionCookie: SessionCookie) {
  const files = consoleFileLoader(page)
  const app = new Elysia({ name: 'console' }).get(
    `${ASSET_PREFIX}:file`,
    async ({ request, params }) => {
      const asset = (await files()).assets.get(params.file)
      if (!asset) throw new ApiError('not_found', `no console file ${params.file}`)
      // Names carry a hash of their content: a new build has new names.
      return send(request, asset, { 'cache-control': 'public, max-age=31536000, immutable', 'cross-origin-resource-policy': 'same-origin' })
    },
    { detail: { hide: true } },
  )
  const html = async ({ request }: { request: Request }) => {
    const loaded = await files()
    // Whether a cookie came, not whether it is valid: the app asks GET /api/session only when one did.
    const page = sessionCookie.token(request.headers.get('cookie')) === null ? loaded.pageWithoutSession : loaded.page
    return send(request, page, { 'cache-control': 'no-cache', vary: 'accept-encoding, cookie', ...CONSOLE_SECURITY_HEADERS })
  }
  for (const path of CONSOLE_PATHS) app.get(path, html, { detail: { hide: true } })
  // Mails link to `/console/#/<page>?…` (invitations): the app moves such an address to the page's own path.
  for (const path of ['/console', '/console/']) app.get(path, html, { detail: { hide: true } })
  return app
}
