// Browser sessions over HTTP, as a browser would hold them: sign in, keep the cookie, send it with the
// service's own Origin (the test service's public URL) on requests that change something.
import { Database } from 'bun:sqlite'
import type { PasswordHasher } from '../../src/modules/accounts/service'
import type { ApiResponse, TestService } from './service'

/**
 * argon2id with the smallest cost: these tests count password checks and sessions, not hashing time
 * (test/accounts covers the real parameters), and stay quick on a busy machine.
 */
export const CHEAP_PASSWORDS: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: 1024, timeCost: 1 }),
  verify: (password, hash) => Bun.password.verify(password, hash),
}

/** The test service's own origin (ALTTEXT_PUBLIC_URL in test/support/service.ts). */
export const OWN_ORIGIN = 'http://alttext.test'
export const FOREIGN_ORIGIN = 'https://evil.example'

export type SignedIn = { res: ApiResponse; cookie: string; token: string; setCookie: string }

/** The `name=value` pair of a Set-Cookie header, and its attributes (lower-cased names). */
export function parseSetCookie(header: string): { name: string; value: string; attributes: Record<string, string | true> } {
  const [pair = '', ...rest] = header.split(';').map((part) => part.trim())
  const eq = pair.indexOf('=')
  const attributes: Record<string, string | true> = {}
  for (const part of rest) {
    const at = part.indexOf('=')
    if (at === -1) attributes[part.toLowerCase()] = true
    else attributes[part.slice(0, at).toLowerCase()] = part.slice(at + 1)
  }
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes }
}

/** POST /api/session; throws unless it answers 200 with the cookie. */
export async function signIn(service: TestService, email: string, password: string, headers: Record<string, string> = {}): Promise<SignedIn> {
  const res = await service.api.request('POST', '/api/session', { body: { email, password }, headers })
  const setCookie = res.headers.get('set-cookie')
  if (res.status !== 200 || setCookie === null) throw new Error(`sign-in failed: ${res.status} ${res.text}`)
  const { name, value } = parseSetCookie(setCookie)
  return { res, cookie: `${name}=${value}`, token: value, setCookie }
}

/** Headers of a request made by the console's own page with this session. */
export const fromConsole = (cookie: string, extra: Record<string, string> = {}) => ({ cookie, origin: OWN_ORIGIN, ...extra })

/** A request with the session cookie, from the console's own page. */
export function withSession(service: TestService, cookie: string, method: string, path: string, body?: unknown, extra: Record<string, string> = {}) {
  return service.api.request(method, path, { body, headers: fromConsole(cookie, extra) })
}

/** Reads the service's SQLite file (read-only; the service keeps it open in WAL mode). */
export function readDb<T>(service: TestService, read: (db: Database) => T): T {
  const db = new Database(service.dbPath, { readonly: true })
  try {
    return read(db)
  } finally {
    db.close()
  }
}
