// API keys of one account: list, create, revoke, rotate, and the public validity check. No HTTP here.
import type { CreditLedger } from '../../credits/service'
import { ApiError } from '../../shared/errors'
import { andThen } from '../../shared/maybe-promise'
import { iso } from '../../shared/time'
import type { AccountRecord, KeyRecord, OrgRecord, OrgStore, Store } from '../../store/contract'
import { orgNotFound } from '../auth/service'
import type { AuthService } from '../auth/service'
import { mintUniqueKey, SAVE_KEY_MESSAGE } from './material'
import { MAX_ACTIVE_KEYS } from '../../shared/limits'

const DAY_MS = 86_400_000

/**
 * `orgPublicId`: the organisation the key acts in, shown only when it is not the personal one, so that for
 * one person the answer stays as the contract pinned it.
 */
export function toKeySummary(key: KeyRecord, orgPublicId: string | null, lastUsed?: number) {
  const used = Math.max(key.lastUsedAt ?? 0, lastUsed ?? 0)
  return {
    prefix: key.prefix,
    ...(orgPublicId === null ? {} : { org_id: orgPublicId }),
    label: key.label,
    created_at: iso(key.createdAt),
    expires_at: iso(key.expiresAt),
    last_used_at: used ? iso(used) : null,
  }
}

/** The summaries of an account's keys, each naming its organisation (a key of one it left is not shown). */
export async function summariseKeys(orgs: OrgStore, accountId: number, keys: KeyRecord[], lastUsed: (keyId: number) => number | undefined = () => undefined) {
  const ids = new Map((await orgs.memberships(accountId)).map((m) => [m.org.id, m.org.personal ? null : m.org.publicId]))
  return keys.flatMap((k) => {
    const orgId = ids.get(k.orgId)
    return orgId === undefined ? [] : [toKeySummary(k, orgId, lastUsed(k.id))]
  })
}

const expiresSeconds = (expiresAt: number | null) => (expiresAt === null ? null : Math.floor(expiresAt / 1000))

/** The short message of validate-key's plain-string 401, per reason. */
const VALIDATE_ERRORS = { invalid: 'invalid API key', expired: 'API key expired', disabled: 'account disabled', unverified: 'email not verified' } as const

const notFound = () => new ApiError('key_not_found', 'no active key of this account has that prefix')

const notRotatable = () =>
  new ApiError('key_not_found', 'no active key of this account that was not rotated already has that prefix (revoke a key in its grace period to stop it now)')

/** A key in its grace period still works, so it counts: without this an account could hold twice the limit. */
const graceOverLimit = () =>
  new ApiError(
    'key_limit_reached',
    `an account may have at most ${MAX_ACTIVE_KEYS} active keys, and a rotated key in its grace period is one until it expires; rotate with expire_old_in_seconds 0, or revoke a key first`,
  )

export function createKeysService(deps: {
  store: Store
  credits: CreditLedger
  auth: AuthService
  lastUsed: (keyId: number) => number | undefined
  clock: () => number
}) {
  const { store, credits, auth, clock } = deps

  const summaries = (account: AccountRecord, keys: KeyRecord[]) => summariseKeys(store.orgs, account.id, keys, deps.lastUsed)

  const actor = (account: AccountRecord, now: number) => ({ accountId: account.id, email: account.email, now })

  return {
    /** The account's own keys, of every organisation it belongs to. */
    async list(account: AccountRecord, now = clock()) {
      return { keys: await summaries(account, await store.keys.listActive(account.id, now)) }
    },

    /** A key of the organisation `orgId` names (one of the account's), by default of its personal one. */
    async create(account: AccountRecord, input: { label?: string | null; expires_in_days?: number | null; org_id?: string | null }, now = clock()) {
      const membership = input.org_id ? await store.orgs.membership(account.id, input.org_id) : null
      if (input.org_id && !membership) throw orgNotFound()
      const orgId = membership?.org.id ?? account.id
      const label = input.label ? input.label : null
      const expiresAt = input.expires_in_days ? now + input.expires_in_days * DAY_MS : null
      const minted = await mintUniqueKey(store.keys.prefixExists, label, expiresAt)
      const key = await store.keys.create(account.id, minted.record, now, MAX_ACTIVE_KEYS, orgId)
      if (key === 'limit') throw new ApiError('key_limit_reached', `an account may have at most ${MAX_ACTIVE_KEYS} active keys; revoke or rotate one`)
      if (membership && !membership.org.personal)
        await store.orgs.record(orgId, 'key.created', key.prefix, { label, role: membership.role }, actor(account, now))
      return {
        api_key: minted.apiKey,
        prefix: key.prefix,
        ...(membership && !membership.org.personal ? { org_id: membership.org.publicId } : {}),
        label: key.label,
        expires: expiresSeconds(key.expiresAt),
        message: SAVE_KEY_MESSAGE,
      }
    },

    async get(account: AccountRecord, prefix: string, now = clock()) {
      const key = (await store.keys.listActive(account.id, now)).find((k) => k.prefix === prefix)
      if (!key) throw notFound()
      const [summary] = await summaries(account, [key])
      if (!summary) throw notFound()
      return summary
    },

    async revoke(account: AccountRecord, prefix: string, now = clock()) {
      const key = await store.keys.revoke(account.id, prefix, now)
      if (!key) throw notFound()
      auth.forget(account.id)
      if (key.orgId !== account.id) await store.orgs.record(key.orgId, 'key.revoked', key.prefix, {}, actor(account, now))
      return { prefix: key.prefix, revoked: true as const }
    },

    /** Every active key of the organisation, whoever made it (its admins'). */
    async listInOrg(org: OrgRecord, now = clock()) {
      const keys = await store.keys.listActiveInOrg(org.id, now)
      const makers = new Map((await store.orgs.members(org.id)).map((m) => [m.accountId, m.email]))
      return { keys: keys.map((k) => ({ ...toKeySummary(k, org.publicId, deps.lastUsed(k.id)), made_by: makers.get(k.accountId) ?? null })) }
    },

    /** An admin revokes any key of the organisation. */
    async revokeInOrg(by: AccountRecord, org: OrgRecord, prefix: string, now = clock()) {
      const key = await store.keys.revokeInOrg(org.id, prefix, now)
      if (!key) throw notFound()
      auth.forget(key.accountId)
      await store.orgs.record(org.id, 'key.revoked', key.prefix, { made_by: key.accountId }, actor(by, now))
      return { prefix: key.prefix, revoked: true as const }
    },

    /**
     * The new key keeps the label and the expiry time of the old one (its remaining lifetime). The old key
     * stops at once, or keeps working `expireOldInSeconds` longer (never past its own expiry).
     */
    async rotate(account: AccountRecord, prefix: string, expireOldInSeconds = 0, now = clock()) {
      const minted = await mintUniqueKey(store.keys.prefixExists, null, null)
      const graceUntil = now + expireOldInSeconds * 1000
      const rotated = await store.keys.rotate(
        account.id,
        prefix,
        now,
        graceUntil,
        (old) => ({ ...minted.record, label: old.label, expiresAt: old.expiresAt }),
        MAX_ACTIVE_KEYS,
      )
      if (!rotated) throw notRotatable()
      if (rotated === 'limit') throw graceOverLimit()
      auth.forget(account.id)
      const org = rotated.key.orgId === account.id ? null : await store.orgs.byId(rotated.key.orgId)
      return {
        api_key: minted.apiKey,
        prefix: rotated.key.prefix,
        ...(org ? { org_id: org.publicId } : {}),
        label: rotated.key.label,
        expires: expiresSeconds(rotated.key.expiresAt),
        message: SAVE_KEY_MESSAGE,
        revoked_prefix: rotated.old.prefix,
        old_key_expires_at: iso(rotated.old.revokedAt ?? rotated.old.expiresAt ?? now),
      }
    },

    /** validate-key: true with the balance, or the short reason for the plain-string 401. At once when the key and its count are in memory. */
    validate(apiKey: string, now = clock()) {
      return andThen(auth.check(apiKey.trim(), now), (result) => {
        if (!result.ok) return { valid: false as const, error: VALIDATE_ERRORS[result.reason] }
        // The key's organisation pays: its plan and credits.
        const { account } = result.caller.org
        return andThen(credits.balance(account, now), (balance) => ({
          valid: true as const,
          plan: account.plan,
          credits_total: balance.total,
          credits_used: balance.used,
          credits_remaining: balance.remaining,
        }))
      })
    },
  }
}

export type KeysService = ReturnType<typeof createKeysService>
