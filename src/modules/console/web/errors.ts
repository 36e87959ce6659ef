// The service's errors in words a person understands: one sentence per code saying what happened and
// what to do, then the service's own message, which names the field or the rule.
import { ApiFailure } from './api'

const SENTENCES: Record<string, string> = {
  network: 'The service could not be reached. Check your connection and try again.',
  invalid_request: 'Something in the form is not accepted.',
  invalid_image_url: 'The image at that address could not be used.',
  invalid_image: 'That file could not be used as an image. Use a JPEG, PNG, GIF, WebP, AVIF or SVG file up to 10 MB.',
  invalid_token: 'This reset link no longer works: it was used already, a newer one was sent, or it is older than 60 minutes. Ask for a new one.',
  missing_api_key: 'You are not signed in. Sign in and try again.',
  invalid_session: 'Your session has ended. Sign in again.',
  session_required: 'This needs you to be signed in to the console. Sign in and try again.',
  invalid_api_key: 'That API key is not valid (any more).',
  key_expired: 'That API key has expired.',
  invalid_credentials: 'The email address or the password is not right.',
  not_found: 'That item does not exist any more. Reload the page.',
  key_not_found: 'That key does not exist any more: it may have been revoked or rotated already. Reload the page.',
  email_taken: 'An account with this email address already exists. Sign in, or reset its password.',
  key_limit_reached: 'You have the most keys an account may have. Revoke a key you no longer use first.',
  payload_too_large: 'The image is too large: at most 10 MB.',
  unsupported_media_type: 'The service could not read this kind of request.',
  rate_limited: 'Too many attempts in a short time.',
  quota_exceeded: 'You have used every credit of this period. Cached images still work; new ones can be described when the credits renew.',
  internal_error: 'Something went wrong in the service. Try again; if it keeps happening, tell the operator.',
  upstream_error: 'The image model did not answer properly. Try again in a minute.',
  upstream_timeout: 'The image model took too long to answer. Try again in a minute.',
  overloaded: 'The service is busy with other images right now. Try again in a minute.',
  not_ready: 'The service is not ready yet. Try again in a minute.',
  database_busy: 'The service is busy. Try again in a moment.',
  cross_site_request: 'The request was refused because it did not come from this console. Reload the page and try again.',
  registration_closed: 'This service does not let this email address sign up.',
  account_disabled: 'This account is disabled. Ask the operator of this service to enable it.',
  email_not_verified: 'Confirm your email address first: open the link we mailed to it.',
  forbidden_for_role: 'Your role in this organisation does not allow this. Ask one of its admins.',
  org_not_found: 'This organisation does not exist any more, or you are no longer one of its members. The console is back in your personal organisation.',
  last_owner: 'An organisation needs at least one owner. Make another member an owner first.',
  already_member: 'That person is a member of this organisation already.',
  personal_org: 'A personal organisation has only you in it. Create an organisation to work with others.',
  invalid_invitation: 'This invitation link does not work: it was used already, withdrawn, or is older than 7 days. Ask for a new one.',
  invitation_email_mismatch: 'This invitation was sent to another email address. Sign in with the address it was sent to.',
  already_decided: 'Someone else decided this meanwhile. It now shows their decision.',
  not_decided: 'This suggestion is pending again already: someone reopened it meanwhile.',
  suggestion_not_found: 'That suggestion does not exist any more. Reload the page.',
}

export type Explained = { sentence: string; detail: string }

export function explain(error: unknown): Explained {
  if (!(error instanceof ApiFailure)) return { sentence: 'Something went wrong in the console. Reload the page and try again.', detail: String(error) }
  let sentence = SENTENCES[error.code] ?? `The service refused the request (HTTP ${error.status}).`
  if (error.retryAfter !== null) sentence += ` Wait ${error.retryAfter} second${error.retryAfter === 1 ? '' : 's'} before trying again.`
  const parts = [
    error.message && error.code !== 'network' ? `The service says: ${error.message}.` : '',
    error.requestId && error.status >= 500 ? `Request id: ${error.requestId}.` : '',
  ]
  return { sentence, detail: parts.filter(Boolean).join(' ').replace(/\.\.$/, '.') }
}
