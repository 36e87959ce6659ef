// HTTP routes of API keys and the public key check.
import { Elysia } from 'elysia'
import { type Body, jsonSchema, routeDetail } from '../../http/openapi-doc'
import type { authPlugin } from '../auth'
import { KeyListResponse, KeyPrefixParams, KeySummary } from './model'
import {
  CreatedKeyResponse,
  CreateKeyBody,
  InvalidKeyResponse,
  KeyPrefixBody,
  RevokedKeyResponse,
  RotatedKeyResponse,
  RotateKeyBody,
  ValidateKeyBody,
  ValidKeyResponse,
} from './model'
import type { KeysService } from './service'
import { MAX_ACTIVE_KEYS, MAX_KEY_EXPIRY_DAYS, MAX_KEY_LABEL_CHARS, MAX_ROTATION_GRACE_SECONDS } from '../../shared/limits'
import { SAVE_KEY_MESSAGE } from './material'

const exampleKey = `alt_9c41d7e2${'a7'.repeat(28)}`

/** validate-key's 401 is the short form: `{"error": "<message>"}` (spec). */
function withPlainUnauthorized<T extends { responses: Record<string, object> }>(detail: T): T {
  detail.responses['401'] = {
    description: 'The string is not a currently valid key (malformed, unknown, revoked or expired). Short form: `error` is a plain string.',
    content: {
      'application/json': {
        schema: jsonSchema(InvalidKeyResponse),
        examples: { invalid: { value: { error: 'invalid API key' } }, expired: { value: { error: 'API key expired' } } },
      },
    },
  }
  return detail
}

export function keysRoutes(keys: KeysService, authentication: ReturnType<typeof authPlugin>) {
  return new Elysia({ prefix: '/api' })
    .use(authentication)
    .get('/keys', ({ caller }): Promise<Body<typeof KeyListResponse>> => keys.list(caller.account), {
      auth: true,
      detail: routeDetail({
        summary: 'List active keys',
        operationId: 'listKeys',
        description: 'The keys of the account that are neither revoked nor expired, newest first. Full keys are never shown again.',
        tags: ['API keys'],
        success: [
          {
            status: 200,
            description: 'Active keys.',
            schema: KeyListResponse,
            example: {
              keys: [
                {
                  prefix: 'alt_9c41d7e2',
                  label: 'staging',
                  created_at: '2026-11-20T10:00:00.000Z',
                  expires_at: '2027-02-18T10:00:00.000Z',
                  last_used_at: null,
                },
              ],
            },
          },
        ],
        errors: [],
      }),
    })
    .get('/keys/:prefix', ({ caller, params }): Promise<Body<typeof KeySummary>> => keys.get(caller.account, params.prefix), {
      auth: true,
      params: KeyPrefixParams,
      detail: routeDetail({
        summary: 'Show one key',
        operationId: 'getKey',
        description: 'The summary of one active key of this account. An unknown, revoked, expired or foreign prefix is 404 `key_not_found`.',
        tags: ['API keys'],
        success: [
          {
            status: 200,
            description: 'The key.',
            schema: KeySummary,
            example: { prefix: 'alt_9c41d7e2', label: 'staging', created_at: '2026-11-20T10:00:00.000Z', expires_at: null, last_used_at: null },
          },
        ],
        errors: ['invalid_request', 'key_not_found'],
      }),
    })
    .post(
      '/keys',
      async ({ caller, body, set }): Promise<Body<typeof CreatedKeyResponse>> => {
        const created = await keys.create(caller.account, body)
        set.status = 201
        return created
      },
      {
        auth: true,
        body: CreateKeyBody,
        parse: 'json',
        detail: routeDetail({
          summary: 'Create a key',
          operationId: 'createKey',
          jsonBody: true,
          description: `\`label\` is optional (at most ${MAX_KEY_LABEL_CHARS} characters); \`expires_in_days\` is an optional whole number from 1 to ${MAX_KEY_EXPIRY_DAYS}. \`expires\` is Unix time in seconds, or null. An account may have at most ${MAX_ACTIVE_KEYS} active keys.`,
          tags: ['API keys'],
          success: [
            {
              status: 201,
              description: 'Key created; the full key is shown only now.',
              schema: CreatedKeyResponse,
              example: { api_key: exampleKey, prefix: 'alt_9c41d7e2', label: 'staging', expires: 1790330400, message: SAVE_KEY_MESSAGE },
            },
          ],
          errors: ['invalid_request', 'key_limit_reached', 'database_busy'],
        }),
      },
    )
    .post('/keys/revoke', ({ caller, body }): Promise<Body<typeof RevokedKeyResponse>> => keys.revoke(caller.account, body.key_prefix), {
      auth: true,
      body: KeyPrefixBody,
      parse: 'json',
      detail: routeDetail({
        summary: 'Revoke a key',
        operationId: 'revokeKey',
        jsonBody: true,
        description:
          'Revokes the active key of this account with that prefix; it stops authenticating at once. A key may revoke itself. An unknown, already revoked, expired or foreign prefix is 404 `key_not_found`.',
        tags: ['API keys'],
        success: [{ status: 200, description: 'Revoked.', schema: RevokedKeyResponse, example: { prefix: 'alt_9c41d7e2', revoked: true } }],
        errors: ['invalid_request', 'key_not_found', 'database_busy'],
      }),
    })
    .post(
      '/keys/rotate',
      async ({ caller, body, set }): Promise<Body<typeof RotatedKeyResponse>> => {
        const rotated = await keys.rotate(caller.account, body.key_prefix, body.expire_old_in_seconds ?? 0)
        set.status = 201
        return rotated
      },
      {
        auth: true,
        body: RotateKeyBody,
        parse: 'json',
        detail: routeDetail({
          summary: 'Rotate a key',
          operationId: 'rotateKey',
          jsonBody: true,
          description: `Creates the replacement of the key with that prefix and retires the old key in one step. The new key keeps the label and the expiry time of the old one (its remaining lifetime). The old key stops at once, or, with \`expire_old_in_seconds\` (0 to ${MAX_ROTATION_GRACE_SECONDS}), keeps working that long beside the new one so that an integration can switch without downtime, then expires (401 \`key_expired\`); \`old_key_expires_at\` says when. A key in its grace period is listed with that expiry, may be revoked, but not rotated again; it counts toward the ${MAX_ACTIVE_KEYS} active keys until it expires, so a rotation with a grace period at that limit is 409 \`key_limit_reached\` (rotate without one, or revoke a key first). An unknown, already revoked or rotated, expired or foreign prefix is 404 \`key_not_found\`.`,
          tags: ['API keys'],
          success: [
            {
              status: 201,
              description: 'New key created and shown only now; the old key stopped, or stops at old_key_expires_at.',
              schema: RotatedKeyResponse,
              example: {
                api_key: exampleKey,
                prefix: 'alt_9c41d7e2',
                label: 'staging',
                expires: 1790330400,
                message: SAVE_KEY_MESSAGE,
                revoked_prefix: 'alt_3f9a1c0b',
                old_key_expires_at: '2026-11-23T10:45:33.000Z',
              },
            },
          ],
          errors: ['invalid_request', 'key_not_found', 'key_limit_reached', 'database_busy'],
        }),
      },
    )
    .post(
      '/validate-key',
      async ({ body, set }): Promise<Body<typeof ValidKeyResponse> | Body<typeof InvalidKeyResponse>> => {
        const result = await keys.validate(body.api_key)
        if (!result.valid) {
          set.status = 401
          return { error: result.error }
        }
        return result
      },
      {
        body: ValidateKeyBody,
        parse: 'json',
        detail: withPlainUnauthorized(
          routeDetail({
            summary: 'Check a key',
            operationId: 'validateKey',
            jsonBody: true,
            description:
              'The key goes in the body, not in a header. A currently valid key answers 200 with the balance; any other string answers 401 with a plain-string `error` (the only error that is not the structured shape). A missing or non-string `api_key` is 400 `invalid_request`. Checking a key does not count as a call of that key.',
            tags: ['API keys'],
            success: [
              {
                status: 200,
                description: 'The key is valid.',
                schema: ValidKeyResponse,
                example: { valid: true, plan: 'free', credits_total: 50, credits_used: 3, credits_remaining: 47 },
              },
            ],
            errors: ['invalid_request'],
          }),
        ),
      },
    )
}
