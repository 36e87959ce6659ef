// HTTP routes of accounts: register, login, forgot-password, reset-password.
import { Elysia } from 'elysia'
import type { rateLimits } from '../../http/rate-limit'
import { type Body, routeDetail } from '../../http/openapi-doc'
import { Credentials, ForgotPasswordBody, LoginResponse, MessageResponse, RegisterResponse, ResetPasswordBody, ResetPasswordResponse } from './model'
import type { AccountsService } from './service'
import { SAVE_KEY_MESSAGE } from '../keys/material'

const exampleKey = `alt_3f9a1c0b${'5e'.repeat(28)}`

export const FORGOT_PASSWORD_MESSAGE = 'If an account with this email exists, a reset link valid for 60 minutes is on its way.'

export function accountsRoutes(accounts: AccountsService, limits: ReturnType<typeof rateLimits>) {
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
            'Creates an account on the free plan and returns its first API key, shown only this once. Emails are trimmed and compared case-insensitively; passwords have 8 to 128 characters. Limited to 5 requests per minute per address.',
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
          errors: ['invalid_request', 'email_taken', 'database_busy'],
          exampleMessages: { invalid_request: 'password: must be at least 8 characters' },
        }),
      },
    )
    .post('/login', ({ body }): Promise<Body<typeof LoginResponse>> => accounts.login(body.email, body.password), {
      rateLimit: 'credentials',
      body: Credentials,
      parse: 'json',
      detail: routeDetail({
        summary: 'Sign in',
        operationId: 'login',
        jsonBody: true,
        description:
          'Returns the account, its credits and its active key prefixes. Full keys are never returned. An unknown email and a wrong password give the same 401 in about the same time. Limited to 5 requests per minute per address.',
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
        errors: ['invalid_request', 'invalid_credentials'],
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
          description:
            'Always answers 202, whether or not the email has an account. When it has, a token valid for 60 minutes and usable once is mailed over SMTP as a link `<ALTTEXT_PUBLIC_URL>/reset-password?token=...` and as the bare token; a newer request invalidates older tokens. Without SMTP configured the link goes to the operator log. Limited to 5 requests per minute per address.',
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
          'Sets the new password, revokes every existing key of the account and issues one new key (so the account is never locked out). The token is single use.',
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
}
