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

export async function call<T>(method: string, path: string, body?: Body, signal?: AbortSignal): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { accept: 'application/json' }, signal }
  if (body instanceof FormData) init.body = body
  else if (body !== undefined) {
    init.body = JSON.stringify(body)
    init.headers = { accept: 'application/json', 'content-type': 'application/json' }
  }
  let response: Response
  try {
    response = await fetch(path, init)
  } catch (error) {
    if (signal?.aborted) throw error
    throw new ApiFailure(0, 'network', 'the service could not be reached')
  }
  if (response.status === 204) return undefined as T
  const data = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } | string } | null
  if (response.ok) return data as T
  const error = data?.error
  const retry = Number(response.headers.get('retry-after'))
  throw new ApiFailure(
    response.status,
    typeof error === 'object' && error?.code ? error.code : `http_${response.status}`,
    typeof error === 'object' ? (error?.message ?? '') : (error ?? ''),
    Number.isFinite(retry) && retry > 0 ? retry : null,
    response.headers.get('x-request-id'),
  )
}

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
}
