// Who may sign up (ALTTEXT_REGISTRATION): everyone, nobody, or email addresses of listed domains. The
// refusal says how to get an account instead; the console reads the same words before anyone types.
import { domainToASCII } from 'node:url'
import type { RegistrationPolicy } from '../../config'
import { ApiError } from '../../shared/errors'

/** A domain as it is compared: lower case, IDN as punycode, no trailing dot. */
export function emailDomain(raw: string): string {
  return domainToASCII(raw.trim().toLowerCase().replace(/\.$/, ''))
}

const ASK_OPERATOR = 'ask the operator of this service for an account (they make one with alttext admin accounts create)'

const listed = (domains: string[]) => (domains.length === 1 ? domains[0]! : `${domains.slice(0, -1).join(', ')} or ${domains.at(-1)}`)

/** What the policy tells someone about to sign up; null message when anyone may. */
export function registrationNotice(policy: RegistrationPolicy) {
  if (policy.mode === 'open') return { policy: policy.mode, domains: [] as string[], message: null }
  if (policy.mode === 'closed') return { policy: policy.mode, domains: [] as string[], message: `sign-up is closed on this service: ${ASK_OPERATOR}` }
  return {
    policy: policy.mode,
    domains: policy.domains,
    message: `sign-up is open only to email addresses at ${listed(policy.domains)}: use one of those, or ${ASK_OPERATOR}`,
  }
}

/** Throws 403 registration_closed unless the policy lets this (normalised) email sign up. Subdomains are not included. */
export function checkRegistration(policy: RegistrationPolicy, email: string): void {
  if (policy.mode === 'open') return
  if (policy.mode === 'domains' && policy.domains.includes(emailDomain(email.slice(email.lastIndexOf('@') + 1)))) return
  throw new ApiError('registration_closed', registrationNotice(policy).message!)
}
