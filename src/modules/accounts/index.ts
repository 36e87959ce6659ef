// HTTP routes of accounts: register, login, forgot-password, reset-password, verify-email; the mail of a new
// verification link; and the account settings of a signed-in session: change the password, delete the account.
import { Elysia } from 'elysia'
import type { rateLimits } from '../../http/rate-limit'
import { type Body, type RouteDoc, routeDetail } from '../../http/openapi-doc'
import {
  ChangePasswordBody,
  Credentials,
  DeleteAccountBody,
  DeletedAccountResponse,
  ForgotPasswordBody,
  LoginResponse,
  MessageResponse,
  RegisterResponse,
  RegistrationResponse,
  ResetPasswordBody,
  ResetPasswordResponse,
  VerifiedEmailResponse,
  VerifyEmailBody,
} from './model'
import type { AccountsService } from './service'
import { SAVE_KEY_MESSAGE } from '../keys/material'
import type { authPlugin } from '../auth'
import { sessionCookies } from '../sessions/service'
import {
  EMAIL_VERIFICATION_TTL_HOURS,
  LOGIN_FAILURE_WINDOW_MINUTES,
  LOGIN_FAILURES_BEFORE_DELAY,
  RESET_MAIL_RESEND_SECONDS,
  VERIFICATION_RESEND_SECONDS,
} from '../../shared/limits'

const exampleKey = `alt_3f9a1c0b${'5e'.repeat(28)}`

export const FORGOT_PASSWORD_MESSAGE = 'If an account with this email exists, a reset link valid for 60 minutes is on its way.'

/** `clientOf`: the rate-limit identity of the request's client (the per-account slow-down remembers it). */
export function accountsRoutes(accounts: AccountsService, limits: ReturnType<typeof rateLimits>, clientOf: (request: Request) => string) {
  return new Elysia({ prefix: '/api' })
    .use(limits)
    .post(
      '/register',
      async ({ body, set }): Promise<Body<typeof RegisterResponse>> => {
        set.status = 201
        return accounts.register(body.email, body.password)
      },
      {
        rateLimit: 'credentials',
        body: Credentials,
        parse: 'json',
        detail: routeDetail({
          summary: 'Register an account',
          operationId: 'register',
          jsonBody: true,
          description:
            'Creates an account on the free plan and returns its first API key, shown only this once. Emails are trimmed and compared case-insensitively; passwords have 8 to 128 characters. Under a `domains:` registration policy (and with `ALTTEXT_VERIFY_EMAIL=on`) a link is mailed to the address, and the key and sessions of the account answer 403 `email_not_verified` until it is followed (`POST /api/verify-email`); the message says so. Limited to 5 requests per minute per address.',
          tags: ['Accounts'],
          success: [
            {
              status: 201,
              description: 'Account created with its first key.',
              schema: RegisterResponse,
              example: {
                api_key: exampleKey,
                prefix: 'alt_3f9a1c0b',
                email: 'dev@example.com',
                plan: 'free',
                credits_total: 50,
                credits_remaining: 50,
                message: SAVE_KEY_MESSAGE,
              },
            },
          ],
          errors: ['invalid_request', 'registration_closed', 'email_taken', 'database_busy'],
          exampleMessages: { invalid_request: 'password: must be at least 8 characters' },
        }),
      },
    )
    .get('/registration', (): Body<typeof RegistrationResponse> => accounts.registration(), {
      detail: routeDetail({
        summary: 'Who may sign up',
        operationId: 'getRegistration',
        description:
          'The registration policy the operator set (`ALTTEXT_REGISTRATION`), so a sign-up form can say before anyone types whether, and with which email domains, `POST /api/register` will accept them. Accounts the operator makes are not bound by it.',
        tags: ['Accounts'],
        success: [
          {
            status: 200,
            description: 'The policy.',
            schema: RegistrationResponse,
            example: {
              policy: 'domains',
              domains: ['example.org'],
              message:
                'sign-up is open only to email addresses at example.org: use one of those, or ask the operator of this service for an account (they make one with alttext admin accounts create)',
            },
          },
        ],
        errors: [],
      }),
    })
    .post('/login', ({ body, request }): Promise<Body<typeof LoginResponse>> => accounts.login(body.email, body.password, clientOf(request)), {
      rateLimit: 'credentials',
      body: Credentials,
      parse: 'json',
      detail: routeDetail({
        summary: 'Sign in',
        operationId: 'login',
        jsonBody: true,
        description: `Returns the account, its credits and its active key prefixes. Full keys are never returned. An unknown email and a wrong password give the same 401 in about the same time. Limited to 5 requests per minute per address; after ${LOGIN_FAILURES_BEFORE_DELAY} failed password checks for one account within ${LOGIN_FAILURE_WINDOW_MINUTES} minutes, attempts for it from addresses that never signed in to it wait (429 with Retry-After). A browser signs in with \`POST /api/session\` instead.`,
        tags: ['Accounts'],
        success: [
          {
            status: 200,
            description: 'Signed in.',
            schema: LoginResponse,
            example: {
              email: 'dev@example.com',
              plan: 'free',
              credits: { total: 50, used: 3, remaining: 47 },
              keys: [
                {
                  prefix: 'alt_3f9a1c0b',
                  label: 'production CMS',
                  created_at: '2026-11-01T09:30:00.000Z',
                  expires_at: null,
                  last_used_at: '2026-11-21T08:12:44.000Z',
                },
              ],
            },
          },
        ],
        errors: ['invalid_request', 'invalid_credentials', 'account_disabled'],
        exampleMessages: { rate_limited: 'too many failed sign-ins for this account; retry in 4 s' },
      }),
    })
    .post(
      '/forgot-password',
      async ({ body, set }): Promise<Body<typeof MessageResponse>> => {
        await accounts.forgotPassword(body.email)
        set.status = 202
        return { message: FORGOT_PASSWORD_MESSAGE }
      },
      {
        rateLimit: 'credentials',
        body: ForgotPasswordBody,
        parse: 'json',
        detail: routeDetail({
          summary: 'Request a password-reset token',
          operationId: 'forgotPassword',
          jsonBody: true,
          description: `Always answers 202, whether or not the email has an account. When it has, a token valid for 60 minutes and usable once is mailed over SMTP as a link \`<ALTTEXT_PUBLIC_URL>/reset-password?token=...\` and as the bare token; a newer request invalidates older tokens. Without SMTP configured the link goes to the operator log. At most one mail per account every ${RESET_MAIL_RESEND_SECONDS} seconds, whichever addresses ask: a request within that time gets the same 202, mails nothing and leaves the earlier link working. Limited to 5 requests per minute per address.`,
          tags: ['Accounts'],
          success: [{ status: 202, description: 'Accepted; check the mailbox.', schema: MessageResponse, example: { message: FORGOT_PASSWORD_MESSAGE } }],
          errors: ['invalid_request', 'database_busy'],
        }),
      },
    )
    .post('/reset-password', ({ body }): Promise<Body<typeof ResetPasswordResponse>> => accounts.resetPassword(body.token, body.new_password), {
      body: ResetPasswordBody,
      parse: 'json',
      detail: routeDetail({
        summary: 'Reset the password with a token',
        operationId: 'resetPassword',
        jsonBody: true,
        description:
          'Sets the new password, revokes every existing key of the account, ends every browser session of it and issues one new key (so the account is never locked out). The token is single use.',
        tags: ['Accounts'],
        success: [
          {
            status: 200,
            description: 'Password changed; all earlier keys revoked; a new key issued.',
            schema: ResetPasswordResponse,
            example: {
              message: 'Password changed. Every earlier API key was revoked; this new key replaces them.',
              api_key: exampleKey,
              prefix: 'alt_3f9a1c0b',
            },
          },
        ],
        errors: ['invalid_request', 'invalid_token', 'database_busy'],
      }),
    })
    .post('/verify-email', ({ body }): Promise<Body<typeof VerifiedEmailResponse>> => accounts.verifyEmail(body.token), {
      body: VerifyEmailBody,
      parse: 'json',
      detail: routeDetail({
        summary: 'Confirm the email address',
        operationId: 'verifyEmail',
        jsonBody: true,
        description: `Follows the link mailed to a new account's address (\`<ALTTEXT_PUBLIC_URL>/verify-email?token=...\`, a page whose button sends this request; opening the link alone confirms nothing, so a mail scanner cannot). From now on the account's key and sessions work. The token is single use and works for ${EMAIL_VERIFICATION_TTL_HOURS} hours; a newer mail replaces it. Needs no key: the token is the proof.`,
        tags: ['Accounts'],
        success: [
          {
            status: 200,
            description: 'Confirmed.',
            schema: VerifiedEmailResponse,
            example: { message: 'Your email address is confirmed: your API key and the console work now.', email: 'dev@example.org' },
          },
        ],
        errors: ['invalid_request', 'invalid_token', 'database_busy'],
      }),
    })
}

/**
 * What a session route that asks for the password again refuses: the session macro's refusals, listed
 * here since they share the 401 of a wrong password.
 */
const PASSWORD_CONFIRMED_REFUSALS: Pick<RouteDoc, 'errors' | 'exampleMessages'> = {
  errors: ['session_required', 'invalid_session', 'invalid_credentials', 'cross_site_request', 'account_disabled', 'email_not_verified', 'database_busy'],
  exampleMessages: { invalid_credentials: 'the password is wrong' },
}

/**
 * The account page of a signed-in browser: a session is required (an API key alone is 401 `session_required`).
 * `clientOf`: the rate-limit identity of the request's client (the per-account slow-down remembers it).
 */
export function accountSettingsRoutes(
  accounts: AccountsService,
  limits: ReturnType<typeof rateLimits>,
  authentication: ReturnType<typeof authPlugin>,
  publicUrl: string,
  clientOf: (request: Request) => string,
) {
  const cookies = sessionCookies(publicUrl)
  return new Elysia({ prefix: '/api' })
    .use(limits)
    .use(authentication)
    .post(
      '/verify-email/resend',
      async ({ caller, set }): Promise<Body<typeof MessageResponse>> => {
        const { sent, message } = await accounts.resendVerification(caller.account)
        set.status = sent ? 202 : 200
        return { message }
      },
      {
        rateLimit: 'credentials',
        auth: 'unverified',
        detail: routeDetail({
          summary: 'Mail the verification link again',
          operationId: 'resendVerification',
          description: `With the key or the session of an account that has not confirmed its email address yet (the one thing they may do besides signing in): mails a new link, valid ${EMAIL_VERIFICATION_TTL_HOURS} hours; earlier links stop working. At most once every ${VERIFICATION_RESEND_SECONDS} seconds per account (429 with Retry-After), and 5 requests per minute per address. An account already confirmed gets 200 and no mail.`,
          tags: ['Accounts'],
          success: [
            {
              status: 202,
              description: 'A new link is on its way.',
              schema: MessageResponse,
              example: { message: 'A new link is on its way to dev@example.org; it works for 24 hours, and earlier links no longer do.' },
            },
            { status: 200, description: 'Nothing to confirm.', schema: MessageResponse, example: { message: 'Your email address is already confirmed.' } },
          ],
          errors: ['database_busy'],
          exampleMessages: { rate_limited: 'a link was mailed less than 60 seconds ago; retry in 42 s' },
        }),
      },
    )
    .post(
      '/account/password',
      ({ caller, body, request }): Promise<Body<typeof MessageResponse>> =>
        // The macro lets no request without a session through.
        accounts.changePassword(caller.account, caller.session!.id, body.current_password, body.new_password, clientOf(request)),
      {
        rateLimit: 'credentials',
        auth: 'session',
        body: ChangePasswordBody,
        parse: 'json',
        detail: routeDetail({
          summary: 'Change the password',
          operationId: 'changePassword',
          jsonBody: true,
          description:
            "Needs the current password and a signed-in session (the console's account page). Ends every other session of the account; this session and every API key keep working. Unused reset tokens stop working. Must come from the service's own pages (`Origin`). Limited to 5 requests per minute per address; a wrong current password counts in the account's sign-in slow-down (429 with Retry-After).",
          tags: ['Accounts'],
          success: [
            {
              status: 200,
              description: 'Password changed; the other sessions ended.',
              schema: MessageResponse,
              example: { message: 'Password changed. 2 other sessions were signed out; this session and your API keys still work.' },
            },
          ],
          ...PASSWORD_CONFIRMED_REFUSALS,
        }),
      },
    )
    .delete(
      '/account',
      async ({ caller, body, set, request }): Promise<Body<typeof DeletedAccountResponse>> => {
        const result = await accounts.deleteAccount(caller.account, body.password, clientOf(request))
        set.headers['set-cookie'] = cookies.cleared
        return result
      },
      {
        rateLimit: 'credentials',
        auth: 'session',
        body: DeleteAccountBody,
        parse: 'json',
        detail: routeDetail({
          summary: 'Delete the account',
          operationId: 'deleteAccount',
          jsonBody: true,
          description:
            "Needs the password and a signed-in session. Removes the account with all its API keys, sessions, credits, call counts and generation history, and says how many of each went; removes the cookie. The email can register again afterwards. Cannot be undone. Must come from the service's own pages (`Origin`). Limited to 5 requests per minute per address; a wrong password counts in the account's sign-in slow-down (429 with Retry-After).",
          tags: ['Accounts'],
          success: [
            {
              status: 200,
              description: 'The account and everything of it are gone.',
              schema: DeletedAccountResponse,
              example: {
                message: 'Your account was deleted with 2 API keys, 1 session and 14 history entries, its usage and its credits.',
                deleted: { keys: 2, sessions: 1, history: 14 },
              },
            },
          ],
          ...PASSWORD_CONFIRMED_REFUSALS,
        }),
      },
    )
}
