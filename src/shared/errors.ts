// One catalogue of error codes feeds the responses, the /docs/errors page and the OpenAPI document.
import {
  GENERATION_DEADLINE_SECONDS,
  MAX_ACTIVE_KEYS,
  MAX_IMAGE_MB,
  MAX_JSON_BODY_KIB,
  RATE_LIMITS,
  RATE_WINDOW_SECONDS,
  RESET_TOKEN_TTL_MINUTES,
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
    meaning: 'The body is not valid JSON, is not an object, lacks a required field, or a field has the wrong type or an out-of-range value.',
    cause: 'A typo in a field name, a number sent as a string, a value outside its documented bounds, or a body that is not JSON.',
    action: 'Read the message: it names the field. Fix the request and send it again; retrying unchanged will fail the same way.',
  },
  invalid_image_url: {
    status: 400,
    title: 'Unusable image URL',
    meaning: `The image could not be used: the URL is not https, does not resolve, points at a blocked address, did not answer 2xx, is over ${MAX_IMAGE_MB} MB, is not JPEG, PNG, GIF or WebP by its bytes, is truncated, has too many pixels, or is too large to decode within the memory this service allows. Hosts that cannot be reached (refused, timed out, failed TLS) are reported as such without further detail.`,
    cause: 'An intranet or localhost URL, an expired signed link, an SVG or HTML page instead of an image, or a very large file.',
    action: `The message says which rule failed. Use a public https URL of a JPEG, PNG, GIF or WebP image up to ${MAX_IMAGE_MB} MB. No credit was charged.`,
  },
  invalid_token: {
    status: 400,
    title: 'Invalid reset token',
    meaning: `The password-reset token is unknown, was already used, was replaced by a newer one, or is older than ${RESET_TOKEN_TTL_MINUTES} minutes.`,
    cause: 'Clicking an old reset mail, or using a token twice.',
    action: 'Request a new token with POST /api/forgot-password and use the newest mail.',
  },
  missing_api_key: {
    status: 401,
    title: 'Missing API key',
    meaning: 'The endpoint needs the X-API-Key header and the request had none.',
    cause: 'The header was not sent, or a proxy stripped it.',
    action: 'Send the full key (alt_ followed by 64 hex characters) in the X-API-Key header.',
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
    action: 'Create a new key (POST /api/keys) with another key of the account, or reset the password to get a fresh key.',
  },
  invalid_credentials: {
    status: 401,
    title: 'Invalid credentials',
    meaning: 'The email and password do not match an account.',
    cause: 'A typo in the email or password, or an account that does not exist.',
    action: 'Check both, or reset the password with POST /api/forgot-password.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    meaning: 'No endpoint exists at that method and path.',
    cause: 'A typo in the path, or a wrong HTTP method.',
    action: 'See the API reference at /docs for the list of endpoints.',
  },
  key_not_found: {
    status: 404,
    title: 'Key not found',
    meaning: 'No active key of your account has that prefix.',
    cause: 'The prefix is mistyped, the key was already revoked or has expired, or it belongs to another account.',
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
    meaning: `The account already has ${MAX_ACTIVE_KEYS} active keys, the most it may have.`,
    cause: 'Creating a key per deployment without revoking old ones.',
    action: 'Revoke keys you no longer use (POST /api/keys/revoke), or rotate one instead of creating a new one.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    meaning: `The request body is over ${MAX_JSON_BODY_KIB} KiB.`,
    cause: 'Sending image bytes in the body, or a very large context.',
    action: 'Send the image as an https URL; keep bodies small.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    meaning: 'The request has a body that is not declared as JSON: JSON endpoints read only bodies sent with Content-Type: application/json.',
    cause: 'curl -d without -H "Content-Type: application/json", or an HTML form posting form-encoded data.',
    action: 'Send the body as JSON with the header Content-Type: application/json.',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limit exceeded',
    meaning: `This address sent more requests to this endpoint in the last ${RATE_WINDOW_SECONDS} seconds than its limit (${RATE_LIMITS.credentials} for register, login and forgot-password; ${RATE_LIMITS.standard} for the rest).`,
    cause: 'A loop without back-off, or many clients behind one address.',
    action: 'Wait the number of seconds in the Retry-After header. RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset tell you where you stand.',
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
    meaning: `The generation queue is full, a new request could not start before the ${GENERATION_DEADLINE_SECONDS}-second deadline, or the image could not be prepared in time (this account's other images in progress, or all decode capacity in use).`,
    cause: 'More concurrent generations than the model server can serve.',
    action: 'Wait the number of seconds in Retry-After and send fewer requests at once. No credit was charged.',
  },
  not_ready: {
    status: 503,
    title: 'Not ready',
    meaning: 'The readiness check failed: the database or the model server is unreachable, or the model is not pulled.',
    cause: 'Ollama not running, the model missing, or the disk failing.',
    action: 'Operators: read the checks in the body and the log.',
  },
  database_busy: {
    status: 503,
    title: 'Database busy',
    meaning: 'The database stayed locked by another process (a backup or a maintenance shell) for longer than a write may wait; nothing was changed.',
    cause: 'A long backup, an operator holding a write transaction open, or a disk that has stopped answering.',
    action: 'Retry after the seconds in Retry-After. Operators: end the other writer; reads keep working meanwhile.',
  },
  upstream_timeout: {
    status: 504,
    title: 'Model timed out',
    meaning: `The model did not answer within the ${GENERATION_DEADLINE_SECONDS}-second deadline; the call was aborted.`,
    cause: 'A large model on a slow machine, or an overloaded model server.',
    action: 'Retry later, or ask the operator for a smaller model. No credit was charged.',
  },
} as const satisfies Record<string, ErrorInfo>

export type ErrorCode = keyof typeof ERROR_CATALOGUE

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[]

/**
 * A client-facing failure. Thrown anywhere; the HTTP layer renders it in the contract's shape.
 * `detail` is for the operator's log only (what a name resolved to, why a connection failed).
 */
export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly detail?: string,
  ) {
    super(message)
    this.status = ERROR_CATALOGUE[code].status
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
