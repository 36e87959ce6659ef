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

export const Credentials = z.object({ email: Email, password: Password }).meta({ examples: [{ email: 'dev@example.com', password: 'correct horse battery' }] })
export const ForgotPasswordBody = z.object({ email: Email }).meta({ examples: [{ email: 'dev@example.com' }] })
export const ResetPasswordBody = z
  .object({
    token: z.string().min(1, 'must not be empty').max(512).meta({ description: 'The token from the reset mail.' }),
    new_password: Password,
  })
  .meta({ examples: [{ token: 'Jx1vQ2…the token from the mail', new_password: 'another long password' }] })

export const CreditsSummary = z.object({ total: z.number().int(), used: z.number().int(), remaining: z.number().int() })

export const KeySummary = z.object({
  prefix: z.string().meta({ examples: ['alt_3f9a1c0b'] }),
  label: z.string().nullable(),
  created_at: z.string().meta({ description: 'ISO 8601 UTC' }),
  expires_at: z.string().nullable().meta({ description: 'ISO 8601 UTC, null when the key does not expire' }),
  last_used_at: z.string().nullable().meta({ description: 'ISO 8601 UTC, null when never used' }),
})

export const RegisterResponse = z.object({
  api_key: z.string().meta({ description: 'The full key, shown only this once.' }),
  prefix: z.string(),
  email: z.string(),
  plan: z.literal('free'),
  credits_total: z.number().int(),
  credits_remaining: z.number().int(),
  message: z.string(),
})

export const LoginResponse = z.object({
  email: z.string(),
  plan: z.literal('free'),
  credits: CreditsSummary,
  keys: z.array(KeySummary).meta({ description: 'Active keys, newest first. Full keys are never returned.' }),
})

export const MessageResponse = z.object({ message: z.string() })

export const ResetPasswordResponse = z.object({
  message: z.string(),
  api_key: z.string().meta({ description: 'A new key: every earlier key was revoked.' }),
  prefix: z.string(),
})
