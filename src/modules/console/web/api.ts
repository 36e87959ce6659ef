// The console's only way to the service: same-origin fetches with the session cookie. Every failure
// becomes an ApiFailure that carries the service's error code and message (or says the service could not
// be reached), so pages can put it in words.

export type Session = {
  email: string
  plan: string
  created_at?: string
  expires_at: string
  /** false until the account followed the link mailed to its address: it can do nothing else meanwhile. */
  email_verified: boolean
}

export type Registration = { policy: 'open' | 'closed' | 'domains'; domains: string[]; message: string | null }

export type KeySummary = { prefix: string; label: string | null; created_at: string; expires_at: string | null; last_used_at: string | null }
export type CreatedKey = { api_key: string; prefix: string; label: string | null; expires: number | null; message: string }

export type Usage = {
  plan: string
  credits: { total: number; used: number; remaining: number }
  api_calls_today: number
  period_start: string
  period_end: string
}
export type UsageDay = { date: string; generations: number; cached: number; failed: number }

export type AltTextResult = {
  alt_text: string
  decorative?: boolean
  decorative_reason?: string
  /** The text the image shows, or null. */
  text_in_image?: string | null
  /** Asked with long_description: a complex image's long description, or null. */
  long_description?: string | null
  credits_remaining: number
  wcag_compliant: boolean
  character_count: number
  language: string
  cached: boolean
  wcag_issues: string[]
  image: { width: number; height: number; format: string }
  source?: string
  /** Asked with languages: each language returned, by tag, and those whose translation failed. */
  alt_texts?: Record<string, { alt_text: string; wcag_compliant: boolean; wcag_issues: string[]; character_count: number }>
  failed_languages?: string[]
}

export type HistoryItem = {
  id: number | string
  created_at: string
  source: string
  image: { format: string; bytes: number; width: number; height: number }
  alt_text: string
  decorative: boolean
  language: string
  style: string
  max_length: number
  cached: boolean
  character_count: number
}

export type BatchSummary = { id: string; status: string; total: number; succeeded: number; failed: number; created_at: string; completed_at: string | null }
export type BatchItem = {
  index: number
  status: 'pending' | 'done' | 'failed'
  result?: AltTextResult
  error?: { code: string; message: string }
  metadata: Record<string, unknown> | null
}
export type Batch = BatchSummary & { items: BatchItem[] }

/** Roles in an organisation, each including the ones after it. */
export const ROLES = ['owner', 'admin', 'reviewer', 'author'] as const
export type Role = (typeof ROLES)[number]
export const atLeast = (role: Role | undefined, needed: Role): boolean => role !== undefined && ROLES.indexOf(role) <= ROLES.indexOf(needed)

export type Org = { id: string; name: string | null; personal: boolean; role: Role; plan: string; joined_at?: string }
export type CreatedOrg = Org & { credits: { total: number; used: number; remaining: number }; created_at: string }
export type Member = { account_id: string | number; email: string; role: Role; joined_at: string }
export type Invitation = { id: string | number; email: string; role: Role; expires_at: string; created_at?: string }

export type SuggestionStatus = 'pending' | 'accepted' | 'edited' | 'rejected'
export type Suggestion = {
  id: string
  status: SuggestionStatus
  proposed_alt: string
  current_alt: string | null
  final_alt: string | null
  target: { kind: string; ref: string; site: string | null; fingerprint?: string | null }
  language: string
  image: { url: string | null; format: string | null; width: number | null; height: number | null; thumbnail_url: string | null }
  wcag_compliant: boolean | null
  wcag_issues: string[]
  /** The judge's answer when one was asked for: {verdict, reasons, suggested_alt_text}. */
  verdict: { verdict?: string; reasons?: string; suggested_alt_text?: string | null } | null
  decorative: boolean
  batch_id: string | null
  created_at: string
  created_by: string | null
  decided_at: string | null
  decided_by: string | null
  reason: string | null
}
export type SuggestionFilters = { status?: string; mine?: boolean; target_kind?: string; language?: string; batch_id?: string }
export type SuggestionPage = { suggestions: Suggestion[]; next_cursor: string | null; total: number }

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
    readonly requestId: string | null = null,
  ) {
    super(message)
  }
}

/** The codes that mean "nobody is signed in here" (or no longer). */
export const SIGNED_OUT_CODES = new Set(['invalid_session', 'missing_api_key', 'session_required'])

type Body = Record<string, unknown> | FormData

/** The header that names the organisation a browser session acts in (absent: the personal one). */
export const ORG_HEADER = 'x-alttext-org'
/** Sent when the organisation a request acted in is gone for this person (removed, deleted). */
export const ORG_LOST_EVENT = 'console:org-lost'

// The organisation every request acts in, chosen in the header's switcher (null: the personal one).
let actingOrg: string | null = null

export function actIn(org: string | null): void {
  actingOrg = org
}

async function send(method: string, path: string, body: Body | undefined, signal: AbortSignal | undefined, inOrg: boolean): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (inOrg && actingOrg) headers[ORG_HEADER] = actingOrg
  const init: RequestInit = { method, credentials: 'same-origin', headers, signal }
  if (body instanceof FormData) init.body = body
  else if (body !== undefined) {
    init.body = JSON.stringify(body)
    headers['content-type'] = 'application/json'
  }
  try {
    return await fetch(path, init)
  } catch (error) {
    if (signal?.aborted) throw error
    throw new ApiFailure(0, 'network', 'the service could not be reached')
  }
}

async function failure(response: Response, inOrg: boolean): Promise<ApiFailure> {
  const data = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } | string } | null
  const error = data?.error
  const retry = Number(response.headers.get('retry-after'))
  const code = typeof error === 'object' && error?.code ? error.code : `http_${response.status}`
  if (code === 'org_not_found' && inOrg && actingOrg) dispatchEvent(new Event(ORG_LOST_EVENT))
  return new ApiFailure(
    response.status,
    code,
    typeof error === 'object' ? (error?.message ?? '') : (error ?? ''),
    Number.isFinite(retry) && retry > 0 ? retry : null,
    response.headers.get('x-request-id'),
  )
}

/** `inOrg: false` for the calls that are about the person, not an organisation (listing their organisations). */
export async function call<T>(method: string, path: string, body?: Body, signal?: AbortSignal, inOrg = true): Promise<T> {
  const response = await send(method, path, body, signal, inOrg)
  if (response.status === 204) return undefined as T
  if (!response.ok) throw await failure(response, inOrg)
  return (await response.json().catch(() => null)) as T
}

/** An image answer (a thumbnail) as an object URL for <img>: an <img src> could not send the organisation header. */
async function image(path: string): Promise<string> {
  const response = await send('GET', path, undefined, undefined, true)
  if (!response.ok) throw await failure(response, true)
  return URL.createObjectURL(await response.blob())
}

const query = (params: Record<string, string | number | boolean | undefined | null>) => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== '' && value !== false) search.set(name, String(value))
  const text = search.toString()
  return text ? `?${text}` : ''
}
const at = (id: string | number) => encodeURIComponent(String(id))

/** Whether the model can describe images now, as GET /ready says (it answers 503 with the same checks when not). */
export type ModelState = { ok: boolean; detail: string }

async function modelState(): Promise<ModelState> {
  const response = await fetch('/ready', { headers: { accept: 'application/json' }, credentials: 'same-origin' })
  const body = (await response.json()) as { checks?: { model?: ModelState }; hosts?: { healthy: number } }
  const model = body.checks?.model
  if (!model) throw new ApiFailure(response.status, `http_${response.status}`, 'the service did not say how the model is')
  return { ok: model.ok && (body.hosts?.healthy ?? 1) > 0, detail: model.detail }
}

export const api = {
  modelState,
  session: () => call<Session>('GET', '/api/session'),
  signIn: (email: string, password: string) => call<Session>('POST', '/api/session', { email, password }),
  signOut: () => call<void>('DELETE', '/api/session'),
  endAllSessions: () => call<{ ended: number }>('POST', '/api/session/end-all'),
  registration: () => call<Registration>('GET', '/api/registration'),
  register: (email: string, password: string) => call<CreatedKey & { email: string }>('POST', '/api/register', { email, password }),
  forgotPassword: (email: string) => call<{ message: string }>('POST', '/api/forgot-password', { email }),
  verifyEmail: (token: string) => call<{ message: string; email: string }>('POST', '/api/verify-email', { token }),
  resendVerification: () => call<{ message: string }>('POST', '/api/verify-email/resend'),
  resetPassword: (token: string, newPassword: string) =>
    call<{ message: string; api_key: string; prefix: string }>('POST', '/api/reset-password', { token, new_password: newPassword }),
  changePassword: (current: string, next: string) =>
    call<{ message: string }>('POST', '/api/account/password', { current_password: current, new_password: next }),
  deleteAccount: (password: string) =>
    call<{ message: string; deleted: { keys: number; sessions: number; history: number } }>('DELETE', '/api/account', { password }),
  usage: () => call<Usage>('GET', '/api/usage'),
  usageHistory: (days: number) => call<{ days: UsageDay[] }>('GET', `/api/usage/history?days=${days}`),
  keys: () => call<{ keys: KeySummary[] }>('GET', '/api/keys'),
  createKey: (label: string | null, expiresInDays: number | null) => call<CreatedKey>('POST', '/api/keys', { label, expires_in_days: expiresInDays }),
  rotateKey: (prefix: string, expireOldInSeconds: number) =>
    call<CreatedKey & { revoked_prefix: string; old_key_expires_at: string }>('POST', '/api/keys/rotate', {
      key_prefix: prefix,
      expire_old_in_seconds: expireOldInSeconds,
    }),
  revokeKey: (prefix: string) => call<{ prefix: string; revoked: true }>('POST', '/api/keys/revoke', { key_prefix: prefix }),
  altText: (body: Body, signal?: AbortSignal) => call<AltTextResult>('POST', '/api/alt-text', body, signal),
  history: () => call<{ items: HistoryItem[] }>('GET', '/api/history'),
  deleteHistoryItem: (id: number | string) => call<void>('DELETE', `/api/history/${encodeURIComponent(String(id))}`),
  deleteHistory: () => call<{ deleted: number }>('DELETE', '/api/history'),
  batches: () => call<{ items: BatchSummary[]; next_cursor: string | null }>('GET', '/api/batches?limit=50'),
  batch: (id: string) => call<Batch>('GET', `/api/batches/${encodeURIComponent(id)}`),

  orgs: () => call<{ orgs: Org[] }>('GET', '/api/orgs', undefined, undefined, false),
  createOrg: (name: string) => call<CreatedOrg>('POST', '/api/orgs', { name }, undefined, false),
  members: (org: string) => call<{ members: Member[] }>('GET', `/api/orgs/${at(org)}/members`),
  setRole: (org: string, member: string | number, role: Role) => call<Member>('PATCH', `/api/orgs/${at(org)}/members/${at(member)}`, { role }),
  removeMember: (org: string, member: string | number) => call<{ removed: true; revoked_keys: number }>('DELETE', `/api/orgs/${at(org)}/members/${at(member)}`),
  invitations: (org: string) => call<{ invitations: Invitation[] }>('GET', `/api/orgs/${at(org)}/invitations`),
  invite: (org: string, email: string, role: Role) => call<Invitation>('POST', `/api/orgs/${at(org)}/invitations`, { email, role }),
  withdrawInvitation: (org: string, invitation: string | number) => call<unknown>('DELETE', `/api/orgs/${at(org)}/invitations/${at(invitation)}`),
  acceptInvitation: (token: string) =>
    call<{ org: { id: string; name: string | null; role: Role } }>('POST', '/api/invitations/accept', { token }, undefined, false),

  suggestions: (filters: SuggestionFilters, cursor: string | null, limit: number) =>
    call<SuggestionPage>('GET', `/api/suggestions${query({ ...filters, cursor, limit })}`),
  suggestion: (id: string) => call<Suggestion>('GET', `/api/suggestions/${at(id)}`),
  thumbnail: (id: string) => image(`/api/suggestions/${at(id)}/thumbnail`),
  accept: (id: string, altText?: string) => call<Suggestion>('POST', `/api/suggestions/${at(id)}/accept`, altText === undefined ? {} : { alt_text: altText }),
  reject: (id: string, reason: string | null) => call<Suggestion>('POST', `/api/suggestions/${at(id)}/reject`, reason ? { reason } : {}),
  reopen: (id: string) => call<Suggestion>('POST', `/api/suggestions/${at(id)}/reopen`, {}),
  acceptMany: (ids: string[]) => call<{ accepted: string[]; already_decided: string[]; not_found: string[] }>('POST', '/api/suggestions/accept', { ids }),
}
