import { z } from 'zod'
import { OrgId } from '../orgs/ids'
import { MAX_KEY_EXPIRY_DAYS, MAX_KEY_LABEL_CHARS, MAX_ROTATION_GRACE_SECONDS } from '../../shared/limits'

const Timestamp = z.iso.datetime()

export const ApiKey = z
  .string()
  .regex(/^alt_[0-9a-f]{64}$/)
  .meta({ description: 'The full key: `alt_` and 64 lowercase hex characters. Shown only once.' })
export const KeyPrefixText = z
  .string()
  .regex(/^alt_[0-9a-f]{8}$/)
  .meta({ description: '`alt_` and the first 8 hex characters of the key.', examples: ['alt_3f9a1c0b'] })

export const KeySummary = z
  .object({
    prefix: KeyPrefixText,
    org_id: OrgId.optional().meta({ description: 'The organisation the key spends for and acts in; absent for your personal one.' }),
    label: z.string().nullable(),
    created_at: Timestamp.meta({ description: 'ISO 8601 UTC' }),
    expires_at: Timestamp.nullable().meta({ description: 'ISO 8601 UTC, null when the key does not expire' }),
    last_used_at: Timestamp.nullable().meta({ description: 'ISO 8601 UTC, null when never used' }),
  })
  .meta({ id: 'KeySummary' })

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
      .max(MAX_KEY_LABEL_CHARS, `must be at most ${MAX_KEY_LABEL_CHARS} characters`)
      .nullish()
      .meta({ examples: ['production CMS'] }),
    expires_in_days: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_KEY_EXPIRY_DAYS, `must be at most ${MAX_KEY_EXPIRY_DAYS}`)
      .nullish()
      .meta({ examples: [90] }),
    org_id: OrgId.nullish().meta({
      description: 'The organisation the key is for (one of yours); default: your personal one. It acts there with your role.',
    }),
  })
  .meta({ id: 'CreateKeyRequest', examples: [{ label: 'staging', expires_in_days: 90 }] })

export const KeyPrefixParams = z.object({ prefix: KeyPrefix })

export const KeyPrefixBody = z.object({ key_prefix: KeyPrefix }).meta({ id: 'KeyPrefixRequest', examples: [{ key_prefix: 'alt_3f9a1c0b' }] })

export const RotateKeyBody = z
  .object({
    key_prefix: KeyPrefix,
    expire_old_in_seconds: z
      .number()
      .int('must be a whole number')
      .min(0, 'must be at least 0')
      .max(MAX_ROTATION_GRACE_SECONDS, `must be at most ${MAX_ROTATION_GRACE_SECONDS}`)
      .nullish()
      .meta({
        description: `How long the old key keeps working beside the new one, in seconds (0 to ${MAX_ROTATION_GRACE_SECONDS}); then it expires. 0, null or absent: it stops at once.`,
        examples: [3600],
      }),
  })
  .meta({ id: 'RotateKeyRequest', examples: [{ key_prefix: 'alt_3f9a1c0b', expire_old_in_seconds: 3600 }] })

export const ValidateKeyBody = z.object({ api_key: z.string() }).meta({ id: 'ValidateKeyRequest', examples: [{ api_key: `alt_3f9a1c0b${'5e'.repeat(28)}` }] })

export const KeyListResponse = z.object({ keys: z.array(KeySummary) }).meta({ id: 'KeyList' })

const Count = z.number().int().nonnegative()

export const CreatedKeyResponse = z
  .object({
    api_key: ApiKey,
    prefix: KeyPrefixText,
    org_id: OrgId.optional().meta({ description: 'The organisation the key spends for and acts in; absent for your personal one.' }),
    label: z.string().nullable(),
    expires: z.number().int().positive().nullable().meta({ description: 'Expiry as Unix time in seconds; null when the key does not expire.' }),
    message: z.string(),
  })
  .meta({ id: 'CreatedKey' })

export const RotatedKeyResponse = CreatedKeyResponse.extend({
  revoked_prefix: KeyPrefixText.meta({ description: 'The prefix of the key this one replaces.' }),
  old_key_expires_at: Timestamp.meta({
    description:
      'When the old key stops working, ISO 8601 UTC: the time of the rotation unless `expire_old_in_seconds` gave it a grace period (or its own earlier expiry).',
  }),
}).meta({ id: 'RotatedKey' })

export const RevokedKeyResponse = z.object({ prefix: KeyPrefixText, revoked: z.literal(true) }).meta({ id: 'RevokedKey' })

/** The plan's name in every answer that has one. */
export const PlanName = z.string().meta({
  description: '`free`, or the name of a plan the operator gave this account (with its own monthly credits).',
  examples: ['free'],
})

export const ValidKeyResponse = z
  .object({
    valid: z.literal(true),
    plan: PlanName,
    credits_total: Count,
    credits_used: Count,
    credits_remaining: Count,
  })
  .meta({ id: 'KeyValidity' })

export const InvalidKeyResponse = z.object({ error: z.string().meta({ examples: ['invalid API key'] }) }).meta({ id: 'InvalidKey' })
