// One catalogue of error codes feeds the responses, the /docs/errors page and the OpenAPI document.
import {
  GENERATION_DEADLINE_SECONDS,
  IDEMPOTENCY_WINDOW_HOURS,
  MAX_BATCH_BODY_MB,
  LOGIN_FAILURE_WINDOW_MINUTES,
  LOGIN_FAILURES_BEFORE_DELAY,
  LOGIN_MAX_DELAY_SECONDS,
  MAX_ACTIVE_KEYS,
  MAX_IMAGE_MB,
  MAX_JSON_BODY_KIB,
  MAX_JSON_DEPTH,
  MAX_PENDING_BATCH_IMAGE_MB,
  MAX_UPLOAD_BODY_MB,
  RATE_LIMITS,
  RATE_WINDOW_SECONDS,
  RESET_TOKEN_TTL_MINUTES,
  EMAIL_VERIFICATION_TTL_HOURS,
  VERIFICATION_RESEND_SECONDS,
  SESSION_IDLE_HOURS,
  SESSION_MAX_DAYS,
  UPLOAD_RECEIVE_SECONDS,
} from './limits'

export type ErrorInfo = {
  status: number
  title: string
  meaning: string
  cause: string
  action: string
}

export const ERROR_CATALOGUE = {
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    meaning: `The body is not valid JSON, is not an object, nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep or holds too many elements and members, lacks a required field, or a field has the wrong type or an out-of-range value.`,
    cause: 'A typo in a field name, a number sent as a string, a value outside its documented bounds, or a body that is not JSON.',
    action: 'Read the message: it names the field. Fix the request and send it again; retrying unchanged will fail the same way.',
  },
  invalid_image_url: {
    status: 400,
    title: 'Unusable image URL',
    meaning: `The image could not be used: the URL is not https, its host does not resolve or resolves to a blocked address (one message for both, so that names inside the network cannot be told from missing ones), did not answer 2xx, is over ${MAX_IMAGE_MB} MB, is not JPEG, PNG, GIF, WebP, AVIF or SVG by its bytes, is truncated, has too many pixels, or is too large to decode within the memory this service allows. Hosts that cannot be reached (refused, timed out, failed TLS) are reported as such without further detail.`,
    cause: 'An intranet or localhost URL, an expired signed link, an SVG or HTML page instead of an image, or a very large file.',
    action: `The message says which rule failed. Use a public https URL of a JPEG, PNG, GIF, WebP, AVIF or SVG image up to ${MAX_IMAGE_MB} MB. No credit was charged. Images on an intranet or on the service's own machine are refused unless the operator allows their hosts: ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS lists the host names, IPs and CIDRs that images may come from although they are private or loopback.`,
  },
  invalid_image: {
    status: 400,
    title: 'Unusable uploaded image',
    meaning: `The image sent in the request (image_base64, or the multipart field image) could not be used: it is not valid base64 or not a data:image/…;base64 URL, is empty, is not JPEG, PNG, GIF, WebP, AVIF or SVG by its bytes, is truncated or corrupt, has too many pixels, is too large to decode within the memory this service allows, or did not arrive within ${UPLOAD_RECEIVE_SECONDS} seconds.`,
    cause: 'A file cut short by the client, an SVG, HEIC or PDF file, base64url instead of standard base64, or a very large photo.',
    action: `The message says which rule failed. Send the bytes of a JPEG, PNG, GIF, WebP, AVIF or SVG image up to ${MAX_IMAGE_MB} MB, in standard base64 or as a multipart file. No credit was charged.`,
  },
  invalid_token: {
    status: 400,
    title: 'Invalid token',
    meaning: `The password-reset or email-verification token is unknown, was already used, was replaced by a newer one, or is too old (a reset token after ${RESET_TOKEN_TTL_MINUTES} minutes, a verification link after ${EMAIL_VERIFICATION_TTL_HOURS} hours).`,
    cause: 'Clicking an old mail, or using a token twice.',
    action:
      'Ask for a new one and use the newest mail: POST /api/forgot-password for a reset, POST /api/verify-email/resend (with the account key or session) for a verification link.',
  },
  missing_api_key: {
    status: 401,
    title: 'Missing API key',
    meaning: 'The endpoint needs the X-API-Key header or a signed-in session, and the request had neither.',
    cause: 'The header was not sent, or a proxy stripped it; or a browser request came from another origin, where the session cookie is never used.',
    action: 'Send the full key (alt_ followed by 64 hex characters) in the X-API-Key header, or sign in with POST /api/session.',
  },
  invalid_api_key: {
    status: 401,
    title: 'Invalid API key',
    meaning: 'The key in X-API-Key is malformed, unknown or revoked.',
    cause: 'A truncated key, a key that was rotated or revoked, or a password reset that revoked every key of the account.',
    action: 'Use a current key. Sign in with POST /api/login to see your active key prefixes, or create a key.',
  },
  key_expired: {
    status: 401,
    title: 'API key expired',
    meaning: 'The key was created with an expiry, and that time has passed.',
    cause: 'A key created with expires_in_days.',
    action:
      'Create a new key (POST /api/keys) with another key of the account or a signed-in session (POST /api/session), or reset the password to get a fresh key.',
  },
  invalid_credentials: {
    status: 401,
    title: 'Invalid credentials',
    meaning: 'The email and password do not match an account.',
    cause: 'A typo in the email or password, or an account that does not exist.',
    action: 'Check both, or reset the password with POST /api/forgot-password.',
  },
  invalid_session: {
    status: 401,
    title: 'Invalid session',
    meaning: `The session cookie is missing, unknown, signed out, or expired (${SESSION_IDLE_HOURS} hours without a request, or ${SESSION_MAX_DAYS} days after sign-in).`,
    cause: 'Signing out, a password reset or change, "sign out everywhere", a long pause, or a cookie from another service.',
    action: 'Sign in again with POST /api/session, or send an API key in the X-API-Key header.',
  },
  session_required: {
    status: 401,
    title: 'Session required',
    meaning: 'Changing the password and deleting the account need a signed-in session; an API key is not enough.',
    cause: 'Calling the account endpoints with only an X-API-Key header.',
    action: 'Sign in with POST /api/session and send the request with the session cookie (and its Origin).',
  },
  invalid_metrics_token: {
    status: 401,
    title: 'Metrics token missing or wrong',
    meaning: 'GET /metrics needs the bearer token the operator set in ALTTEXT_METRICS_TOKEN, and the request had none or another one.',
    cause: 'A Prometheus scrape job without its authorization section, or with an old token.',
    action: 'Send the header Authorization: Bearer <ALTTEXT_METRICS_TOKEN> (in Prometheus: authorization: { credentials_file: ... } in the scrape job).',
  },
  metrics_loopback_only: {
    status: 403,
    title: 'Metrics only for this machine',
    meaning: 'ALTTEXT_METRICS_TOKEN is not set, so GET /metrics answers only clients on this machine (loopback addresses).',
    cause: 'Prometheus scraping from another machine, or through a reverse proxy that ALTTEXT_TRUST_PROXY names as one.',
    action: 'Operators: set ALTTEXT_METRICS_TOKEN and give the scrape job that token, or scrape from this machine.',
  },
  cross_site_request: {
    status: 403,
    title: 'Cross-site request refused',
    meaning:
      "A request that changes something, made with the session cookie, did not come from this service's own pages: its Origin header names another origin, or it has neither a matching Origin nor Sec-Fetch-Site: same-origin.",
    cause: 'Another site trying to act with your session, or a script (curl) that sends the cookie without an Origin header.',
    action: "Programs: use the X-API-Key header instead of the cookie. Scripts that must use the cookie: send Origin with the service's own address.",
  },
  account_disabled: {
    status: 403,
    title: 'Account disabled',
    meaning:
      'The operator of this service has disabled the account. Its keys are still valid keys, but nothing is done with them, it cannot sign in, and its sessions were ended. Nothing is charged.',
    cause: 'An operator disabled the account, for abuse or because its owner left (alttext admin accounts disable).',
    action: 'Ask the operator of this service; they can enable it again (alttext admin accounts enable), and its keys then work as before.',
  },
  email_not_verified: {
    status: 403,
    title: 'Email address not confirmed',
    meaning:
      'The account has not confirmed its email address yet. This service asks new accounts to follow a link mailed to their address first; until then their key and session can only sign in and ask for the mail again. Nothing is charged.',
    cause: 'A new account whose owner has not opened the mailed link (it works for a day), or an address that someone else registered.',
    action: `Open the link in the mail "Confirm your email address for alttext", or ask for a new one with POST /api/verify-email/resend (at most once every ${VERIFICATION_RESEND_SECONDS} seconds). The owner of an address someone else registered takes the account over with POST /api/forgot-password.`,
  },
  registration_closed: {
    status: 403,
    title: 'Registration closed',
    meaning:
      'This service does not let anyone sign up: registration is closed, or open only to email addresses of certain domains (ALTTEXT_REGISTRATION), and this address is not one of them.',
    cause: 'Signing up on a service run for one organisation, or with a private address instead of the work one.',
    action:
      'Sign up with an address of an allowed domain (the message names them), or ask the operator of this service for an account (alttext admin accounts create).',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    meaning: 'No endpoint exists at that method and path, or the thing it names (a batch, a history entry) does not exist in your account.',
    cause: 'A typo in the path, a wrong HTTP method, an id of another account, or a batch deleted after its retention time.',
    action: 'See the API reference at /docs for the list of endpoints; list your batches with GET /api/batches.',
  },
  key_not_found: {
    status: 404,
    title: 'Key not found',
    meaning: 'No active key of your account has that prefix.',
    cause:
      'The prefix is mistyped, the key was already revoked or has expired, it belongs to another account, or (rotating) it was already rotated and is in its grace period.',
    action: 'List your active keys with GET /api/keys and use one of their prefixes.',
  },
  email_taken: {
    status: 409,
    title: 'Email already registered',
    meaning: 'An account with this email (compared case-insensitively) already exists.',
    cause: 'Registering twice.',
    action: 'Sign in with POST /api/login, or reset the password if it is lost.',
  },
  key_limit_reached: {
    status: 409,
    title: 'Key limit reached',
    meaning: `The account already has ${MAX_ACTIVE_KEYS} active keys, the most it may have. A rotated key in its grace period is active until it expires.`,
    cause: 'Creating a key per deployment without revoking old ones, or rotating a key with expire_old_in_seconds while at the limit.',
    action: 'Revoke keys you no longer use (POST /api/keys/revoke), or rotate one instead of creating a new one.',
  },
  idempotency_conflict: {
    status: 409,
    title: 'Idempotency key reused',
    meaning: `The Idempotency-Key was used by this account within the last ${IDEMPOTENCY_WINDOW_HOURS} hours for a request with another body. A key names one request: the same key with the same body returns the first answer again; with another body it is refused.`,
    cause: 'A client that reuses a fixed key, or that changed the request before retrying it.',
    action: 'Use a new key (a UUID) for each new request, and the same key only to retry the very same request. No batch was created.',
  },
  batch_finished: {
    status: 409,
    title: 'Batch already completed',
    meaning: 'The batch has completed: every item is done or failed, so there is nothing left to cancel.',
    cause: 'Cancelling a batch after its last item ended.',
    action: 'Read the results with GET /api/batches/{id}. Cancelling a batch that is already cancelled is not an error.',
  },
  batch_cancelled: {
    status: 409,
    title: 'Item not run: batch cancelled',
    meaning: "Only in a batch item's `error`, never as a response: the batch was cancelled before this item started, so it was not run and cost nothing.",
    cause: 'POST /api/batches/{id}/cancel while the item was still pending.',
    action: 'Send the items again in a new batch if you still want them.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    meaning: `The request body is over its limit: ${MAX_JSON_BODY_KIB} KiB for every endpoint but POST /api/alt-text (and POST /api/alt-text/review), whose body may be ${MAX_UPLOAD_BODY_MB} MB and whose uploaded image may be ${MAX_IMAGE_MB} MB once decoded (its other fields ${MAX_JSON_BODY_KIB} KiB), and POST /api/batches, whose body may be ${MAX_BATCH_BODY_MB} MB with each item's image at most ${MAX_IMAGE_MB} MB once decoded. Reading stops at the limit.`,
    cause: 'An uploaded image over the limit, image bytes sent to another endpoint, or a very large context.',
    action: `Send an image of at most ${MAX_IMAGE_MB} MB (scale it down first), or its https URL; keep other bodies small.`,
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    meaning:
      'The request has a body that is not declared as JSON: JSON endpoints read only bodies sent with Content-Type: application/json (POST /api/alt-text and POST /api/alt-text/review also read multipart/form-data).',
    cause: 'curl -d without -H "Content-Type: application/json", or an HTML form posting form-encoded data.',
    action: 'Send the body as JSON with the header Content-Type: application/json, or an image to POST /api/alt-text as multipart/form-data.',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limit exceeded',
    meaning: `This address sent more requests to this endpoint in the last ${RATE_WINDOW_SECONDS} seconds than its limit (${RATE_LIMITS.credentials} for register, login, sign-in, forgot-password and the account settings; ${RATE_LIMITS.standard} for the rest). Or, for sign-in and the account settings (password change, deletion): the account had ${LOGIN_FAILURES_BEFORE_DELAY} or more failed password checks in ${LOGIN_FAILURE_WINDOW_MINUTES} minutes, and each further attempt waits (1 s, doubling up to ${LOGIN_MAX_DELAY_SECONDS} s) from addresses that never signed in to it.`,
    cause: 'A loop without back-off, many clients behind one address, or someone guessing the password of this account.',
    action: 'Wait the number of seconds in the Retry-After header. RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset tell you where you stand.',
  },
  pending_images_limit: {
    status: 429,
    title: 'Too many uploaded images waiting',
    meaning: `Uploaded images (image_base64) of batch items wait in the service's database until their item has run. This batch's images would make this account's waiting images more than ${MAX_PENDING_BATCH_IMAGE_MB} MB; no batch was created.`,
    cause: 'Sending batches with uploaded images faster than the model answers them.',
    action: `Send the batch again after the seconds in Retry-After, once earlier items have run (GET /api/batches/{id}); or send image_url, which is fetched when the item runs and waits nowhere.`,
  },
  quota_exceeded: {
    status: 429,
    title: 'Credits used up',
    meaning: 'The account has no credits left in this billing period (the calendar month, UTC).',
    cause: 'Generating more alt texts this month than the plan allows.',
    action: 'Wait for the next period (the message and Retry-After say when). Check GET /api/usage before bulk work.',
  },
  internal_error: {
    status: 500,
    title: 'Server error',
    meaning: 'Something failed inside the service. Nothing was charged.',
    cause: 'A fault in the service or its disk; the operator log has details under the request id.',
    action: 'Retry later. If it persists, give the operator the X-Request-Id of the response.',
  },
  upstream_error: {
    status: 502,
    title: 'Model server error',
    meaning:
      'The vision model server (Ollama) failed: refused the connection, answered with an error, does not have the model, or answered with something unusable.',
    cause: 'Ollama is down, the model was not pulled, or it ran out of memory.',
    action: 'Retry later. Operators: the log names the cause (e.g. "model llava not found: ollama pull llava"). No credit was charged.',
  },
  overloaded: {
    status: 503,
    title: 'Overloaded',
    meaning: `The generation queue is full, a new request could not start before the ${GENERATION_DEADLINE_SECONDS}-second deadline, or the image could not be prepared in time (this account's other images in progress, or all decode capacity in use). For POST /api/batches: the memory for large bodies was in use (the body was not read), or the service holds as many uploaded batch images waiting to run as it may.`,
    cause: 'More concurrent generations than the model server can serve.',
    action: 'Wait the number of seconds in Retry-After and send fewer requests at once. No credit was charged.',
  },
  not_ready: {
    status: 503,
    title: 'Not ready',
    meaning: 'The readiness check failed: the database, the model server or Redis (when configured) is unreachable, or the model is not pulled.',
    cause: 'Ollama not running, the model missing, Redis down, or the disk failing.',
    action: 'Operators: read the checks in the body and the log.',
  },
  database_busy: {
    status: 503,
    title: 'Database busy',
    meaning:
      'The database stayed locked by another process (a backup, a maintenance shell, or another replica changing the same account) for longer than a write may wait, or could not be reached; nothing was changed.',
    cause:
      'A long backup, an operator holding a write transaction open, a replica that went silent inside a transaction, a database down, or a disk that has stopped answering.',
    action: 'Retry after the seconds in Retry-After. Operators: end the other writer; reads keep working meanwhile.',
  },
  upstream_timeout: {
    status: 504,
    title: 'Model timed out',
    meaning: `The model did not answer within the ${GENERATION_DEADLINE_SECONDS}-second deadline; the call was aborted.`,
    cause: 'A large model on a slow machine, or an overloaded model server.',
    action: 'Retry later, or ask the operator for a smaller model. No credit was charged.',
  },
  forbidden_for_role: {
    status: 403,
    title: 'Not allowed for your role',
    meaning:
      'You are a member of this organisation, but your role there does not allow this call. Roles, each including the ones after it: owner (plan, deleting the organisation), admin (members, invitations, keys of the organisation, its webhook), reviewer (deciding suggestions), author (generating, submitting and reading suggestions).',
    cause: 'An author deciding a suggestion, a reviewer inviting a member, an admin making someone an owner.',
    action: "Ask an admin or owner of the organisation for the role, or for them to do it. Keys act with their maker's role in the key's organisation.",
  },
  invitation_email_mismatch: {
    status: 403,
    title: 'Invitation for another address',
    meaning: 'The invitation names another email address than the account that tries to accept it. It stays unused.',
    cause: 'Opening the mailed link while signed in with another account.',
    action: 'Sign in with the account of the invited address (or register with it), then open the link again; or ask for an invitation to this address.',
  },
  invalid_invitation: {
    status: 400,
    title: 'Invalid invitation',
    meaning: 'The invitation token is unknown, was already used, was withdrawn or replaced by a newer invitation, or is older than 7 days.',
    cause: 'An old or forwarded mail, or a link opened twice.',
    action: 'Ask an admin of the organisation for a new invitation, and use the newest mail.',
  },
  org_not_found: {
    status: 404,
    title: 'Organisation not found',
    meaning: "There is no organisation with this id that you belong to. Another organisation's resources are answered exactly as if they did not exist.",
    cause: 'A mistyped id, an organisation you were removed from or that was deleted, or a key of another organisation.',
    action: 'List yours with GET /api/orgs. A key acts only in its own organisation: use a key made for this one (POST /api/keys with org_id).',
  },
  suggestion_not_found: {
    status: 404,
    title: 'Suggestion not found',
    meaning: 'The organisation you act in has no suggestion with this id.',
    cause: "A mistyped id, another organisation's suggestion, or acting in another organisation (the key's, or the console's choice).",
    action: 'List the queue with GET /api/suggestions; check which organisation the key or the X-Alttext-Org header names.',
  },
  last_owner: {
    status: 409,
    title: 'Last owner',
    meaning: 'The change would leave the organisation without an owner: it keeps at least one.',
    cause: 'Demoting or removing the only owner, or deleting the account of the only owner of an organisation.',
    action: 'Make another member an owner first, then change or remove this one. An owner who wants the organisation gone deletes it (DELETE /api/orgs/{id}).',
  },
  already_member: {
    status: 409,
    title: 'Already a member',
    meaning: 'The email address or account already belongs to the organisation.',
    cause: 'Inviting a member again, or accepting a second invitation.',
    action: "Change the member's role instead (PATCH /api/orgs/{id}/members/{account_id}).",
  },
  already_decided: {
    status: 409,
    title: 'Already decided',
    meaning: 'The suggestion is not pending any more: someone decided it, possibly a moment before you. Your decision was not applied.',
    cause: 'Two reviewers on the same item, or a decision sent twice.',
    action: 'Read the suggestion again (GET /api/suggestions/{id}) to see the decision; reopen it (POST /api/suggestions/{id}/reopen) to decide it anew.',
  },
  not_decided: {
    status: 409,
    title: 'Not decided',
    meaning: 'Only a decided suggestion can be reopened; this one is pending.',
    cause: 'Undo sent twice, or after someone else reopened it.',
    action: 'Nothing to undo: decide it with accept or reject.',
  },
  personal_org: {
    status: 409,
    title: 'Personal organisation',
    meaning: 'A personal organisation belongs to one account: it cannot be deleted, given other members or left.',
    cause: 'Inviting into, or deleting, the organisation every account has of its own.',
    action: 'Create an organisation (POST /api/orgs) for a team and invite its members there.',
  },
} as const satisfies Record<string, ErrorInfo>

export type ErrorCode = keyof typeof ERROR_CATALOGUE

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[]

/** What a failure says besides its code and message. */
export type ApiErrorOptions = {
  /** When the same request may succeed, in seconds: the HTTP layer sends it as Retry-After. */
  retryAfterSeconds?: number
  /** For the operator's log only (what a name resolved to, why a connection failed). */
  detail?: string
}

/** A client-facing failure. Thrown anywhere; the HTTP layer renders it in the contract's shape. */
export class ApiError extends Error {
  readonly status: number
  readonly retryAfterSeconds?: number
  readonly detail?: string
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message)
    this.status = ERROR_CATALOGUE[code].status
    this.retryAfterSeconds = options.retryAfterSeconds
    this.detail = options.detail
  }
}

/** The client hung up before the answer: nothing to send, nothing charged, not a server fault. */
export class ClientClosedError extends Error {
  constructor(readonly stage: string) {
    super(`the client closed the connection during ${stage}`)
    this.name = 'ClientClosedError'
  }
}

export type ErrorBody = { error: { code: ErrorCode; message: string; docs: string } }

export function errorBody(publicUrl: string, code: ErrorCode, message: string): ErrorBody {
  return { error: { code, message, docs: `${publicUrl}/docs/errors#${code}` } }
}

export type Issue = { path?: unknown; message?: string; summary?: string }

function fieldName(path: unknown): string {
  // items[3].language: array positions in brackets, as a reader writes them.
  if (Array.isArray(path))
    return path.length ? path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join('') : 'body'
  if (typeof path === 'string') {
    const trimmed = path.replace(/^\//, '').replace(/\//g, '.')
    return trimmed === '' || trimmed === 'root' ? 'body' : trimmed
  }
  return 'body'
}

/** The message of a 400 invalid_request: "email: must be ..." for each failing field, so the client knows what to fix. */
export function validationMessage(issues: Issue[]): string {
  const parts = issues.slice(0, 5).map((issue) => {
    const field = fieldName(issue.path)
    const raw = issue.message ?? issue.summary ?? 'is invalid'
    if (field === 'body') return 'body must be a JSON object'
    if (/received undefined/.test(raw)) return `${field} is required`
    return `${field}: ${raw}`
  })
  return [...new Set(parts)].join('; ') || 'the request is invalid'
}
