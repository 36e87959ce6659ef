import { z } from 'zod'
import { ApiKey, KeyPrefixText, KeySummary, PlanName } from '../keys/model'

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
export const CreditsSummary = z.object({ total: Count, used: Count, remaining: Count }).meta({ id: 'Credits' })

export const RegisterResponse = z
  .object({
    api_key: ApiKey,
    prefix: KeyPrefixText,
    email: z.email(),
    plan: PlanName,
    credits_total: Count,
    credits_remaining: Count,
    message: z.string(),
  })
  .meta({ id: 'Registration' })

export const LoginResponse = z
  .object({
    email: z.email(),
    plan: PlanName,
    credits: CreditsSummary,
    keys: z.array(KeySummary).meta({ description: 'Active keys, newest first. Full keys are never returned.' }),
  })
  .meta({ id: 'Account' })

export const RegistrationResponse = z
  .object({
    policy: z.enum(['open', 'closed', 'domains']).meta({
      description: 'open: anyone may sign up; closed: accounts are made by the operator only; domains: only email addresses at `domains`.',
    }),
    domains: z
      .array(z.string())
      .meta({ description: 'The email domains that may sign up (policy `domains`), matched exactly: a subdomain is listed on its own.' }),
    message: z
      .string()
      .nullable()
      .meta({ description: 'What a refused sign-up is told (403 `registration_closed`), including how to get an account; null when anyone may sign up.' }),
  })
  .meta({ id: 'RegistrationPolicy' })

export const MessageResponse = z.object({ message: z.string() }).meta({ id: 'Message' })

export const VerifyEmailBody = z
  .object({ token: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters').meta({ description: 'The token from the mailed link.' }) })
  .meta({ id: 'VerifyEmailRequest', examples: [{ token: 'q3E9…the token from the mail' }] })

export const VerifiedEmailResponse = z.object({ message: z.string(), email: z.email() }).meta({ id: 'VerifiedEmail' })

export const ResetPasswordResponse = z
  .object({
    message: z.string(),
    api_key: ApiKey.meta({ description: 'A new key: every earlier key was revoked. Shown only once.' }),
    prefix: KeyPrefixText,
  })
  .meta({ id: 'PasswordReset' })

export const ChangePasswordBody = z
  .object({
    current_password: z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters'),
    new_password: Password,
  })
  .meta({ id: 'ChangePasswordRequest', examples: [{ current_password: 'correct horse battery', new_password: 'another long password' }] })

export const DeleteAccountBody = z
  .object({ password: z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters') })
  .meta({ id: 'DeleteAccountRequest', examples: [{ password: 'correct horse battery' }] })

export const DeletedAccountResponse = z
  .object({
    message: z.string(),
    deleted: z
      .object({
        keys: Count.meta({ description: 'API keys removed, revoked and expired ones included.' }),
        sessions: Count.meta({ description: 'Browser sessions ended, this one included.' }),
        history: Count.meta({ description: 'Entries of the generation history removed.' }),
      })
      .meta({ description: 'What was removed with the account; its credits and call counts went too.' }),
  })
  .meta({ id: 'DeletedAccount' })
