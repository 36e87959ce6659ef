import { z } from 'zod'

// Emails are trimmed and compared case-insensitively (decisions): normalised before the format check.
export const Email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .pipe(z.email('must be an email address'))
  .meta({ examples: ['dev@example.com'] })
export const Password = z
  .string()
  .min(8, 'must be at least 8 characters')
  .max(128, 'must be at most 128 characters')
  .meta({ examples: ['correct horse battery'] })

export const Credentials = z
  .object({ email: Email, password: Password })
  .meta({ id: 'CredentialsRequest', examples: [{ email: 'dev@example.com', password: 'correct horse battery' }] })
export const ForgotPasswordBody = z.object({ email: Email }).meta({ id: 'ForgotPasswordRequest', examples: [{ email: 'dev@example.com' }] })
export const ResetPasswordBody = z
  .object({
    token: z.string().min(1, 'must not be empty').max(512).meta({ description: 'The token from the reset mail.' }),
    new_password: Password,
  })
  .meta({ id: 'ResetPasswordRequest', examples: [{ token: 'Jx1vQ2…the token from the mail', new_password: 'another long password' }] })

const Count = z.number().int().nonnegative()
const Timestamp = z.iso.datetime()
export const ApiKey = z
  .string()
  .regex(/^alt_[0-9a-f]{64}$/)
  .meta({ description: 'The full key: `alt_` and 64 lowercase hex characters. Shown only once.' })
export const KeyPrefixText = z
  .string()
  .regex(/^alt_[0-9a-f]{8}$/)
  .meta({ description: '`alt_` and the first 8 hex characters of the key.', examples: ['alt_3f9a1c0b'] })

export const CreditsSummary = z.object({ total: Count, used: Count, remaining: Count }).meta({ id: 'Credits' })

export const KeySummary = z
  .object({
    prefix: KeyPrefixText,
    label: z.string().nullable(),
    created_at: Timestamp.meta({ description: 'ISO 8601 UTC' }),
    expires_at: Timestamp.nullable().meta({ description: 'ISO 8601 UTC, null when the key does not expire' }),
    last_used_at: Timestamp.nullable().meta({ description: 'ISO 8601 UTC, null when never used' }),
  })
  .meta({ id: 'KeySummary' })

export const RegisterResponse = z
  .object({
    api_key: ApiKey,
    prefix: KeyPrefixText,
    email: z.email(),
    plan: z.literal('free'),
    credits_total: Count,
    credits_remaining: Count,
    message: z.string(),
  })
  .meta({ id: 'Registration' })

export const LoginResponse = z
  .object({
    email: z.email(),
    plan: z.literal('free'),
    credits: CreditsSummary,
    keys: z.array(KeySummary).meta({ description: 'Active keys, newest first. Full keys are never returned.' }),
  })
  .meta({ id: 'Account' })

export const MessageResponse = z.object({ message: z.string() }).meta({ id: 'Message' })

export const ResetPasswordResponse = z
  .object({
    message: z.string(),
    api_key: ApiKey.meta({ description: 'A new key: every earlier key was revoked. Shown only once.' }),
    prefix: KeyPrefixText,
  })
  .meta({ id: 'PasswordReset' })
