import { z } from 'zod'
import { KeySummary } from '../accounts/model'

export const KeyPrefix = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64)
  .meta({ examples: ['alt_3f9a1c0b'], description: '`alt_` plus the first 8 hex characters of the key.' })

export const CreateKeyBody = z
  .object({
    label: z
      .string()
      .trim()
      .max(100, 'must be at most 100 characters')
      .nullish()
      .meta({ examples: ['production CMS'] }),
    expires_in_days: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(3650, 'must be at most 3650')
      .nullish()
      .meta({ examples: [90] }),
  })
  .meta({ examples: [{ label: 'staging', expires_in_days: 90 }] })

export const KeyPrefixParams = z.object({ prefix: KeyPrefix })

export const KeyPrefixBody = z.object({ key_prefix: KeyPrefix }).meta({ examples: [{ key_prefix: 'alt_3f9a1c0b' }] })

export const ValidateKeyBody = z.object({ api_key: z.string() }).meta({ examples: [{ api_key: `alt_3f9a1c0b${'5e'.repeat(28)}` }] })

export const KeyListResponse = z.object({ keys: z.array(KeySummary) })

export const CreatedKeyResponse = z.object({
  api_key: z.string().meta({ description: 'The full key, shown only this once.' }),
  prefix: z.string(),
  label: z.string().nullable(),
  expires: z.number().int().nullable().meta({ description: 'Expiry as Unix time in seconds; null when the key does not expire.' }),
  message: z.string(),
})

export const RotatedKeyResponse = CreatedKeyResponse.extend({ revoked_prefix: z.string() })

export const RevokedKeyResponse = z.object({ prefix: z.string(), revoked: z.literal(true) })

export const ValidKeyResponse = z.object({
  valid: z.literal(true),
  plan: z.literal('free'),
  credits_total: z.number().int(),
  credits_used: z.number().int(),
  credits_remaining: z.number().int(),
})

export const InvalidKeyResponse = z.object({ error: z.string().meta({ examples: ['invalid API key'] }) })
