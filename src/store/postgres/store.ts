// The PostgreSQL implementation of the Store, for any number of replicas sharing one database. What
// SQLite got from admitting one writer at a time is asked for explicitly here: a transaction that checks
// and then writes (at most N active keys, a token used once, one unused reset token per account) first
// takes a row lock on the account or on the row it changes, so a concurrent one waits and then sees the
// result; PostgreSQL re-checks a locked row's conditions after the wait (READ COMMITTED). A transaction
// aborted for a deadlock or a serialization failure runs again (connection.ts).
//
// Credits, batches and webhooks (credits.ts, batches.ts, webhooks.ts) take the same care with holds and
// claims. A SQLite migration without its PostgreSQL counterpart keeps the service off PostgreSQL
// (missingOnPostgres).
import type { SQL } from 'bun'
import type { AccountRecord, ActivityBatch, CachedAltText, KeyRecord, NewKey, Role, Store } from '../contract'
import { changed, type Db, first, lockAccount, openPool, type PoolOptions, sessionParameters, unreachable } from './connection'
import { ACCOUNT_COLUMNS, ACCOUNT_JOIN_COLUMNS, KEY_COLUMNS, KEY_JOIN_COLUMNS, num, ORG_JOIN_COLUMNS, type Row, toAccount, toKey, toOrg } from '../shared/rows'
import { createPostgresAdminStore, createPostgresCountsStore } from './admin'
import { createPostgresBatchStore } from './batches'
import type { StoreClock } from './clock'
import { createPostgresCreditStore } from './credits'
import { type FeedOptions, listenForAccountChanges, listenerPool } from './feed'
import { createPostgresHistoryStore } from './history'
import { MIGRATIONS } from '../sqlite/migrations'
import { latestPostgresVersion, migratePostgres, POSTGRES_MIGRATIONS } from './migrations'
import { newOrgPublicId } from '../shared/ids'
import { createPostgresOrgStore } from './orgs'
import { createPostgresSessionStore } from './sessions'
import { createPostgresSuggestionStore, type SuggestionHooks } from './suggestions'
import { createPostgresWebhookStore } from './webhooks'

/** What of this binary is not on PostgreSQL yet: the SQLite migrations whose counterpart is missing. */
export function missingOnPostgres(): string[] {
  const lagging = MIGRATIONS.map((m) => m.version).filter((version) => !POSTGRES_MIGRATIONS.some((m) => m.version === version))
  return lagging.length > 0 ? [`schema version ${lagging.join(', ')}`] : []
}

export type PostgresStore = Store & {
  /** The pool, for tests and the operator commands. */
  db: Db
}

/** The oldest PostgreSQL this store runs on (server_version_num). */
const MINIMUM_VERSION = 150000
/** How long the readiness probe waits for its write. */
const PROBE_TIMEOUT_MS = 3000

const ACTIVE = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)'

/** A key of `orgId`; the maker's personal organisation (its own id) unless another is named. */
const insertKey = async (tx: SQL, accountId: number, key: NewKey, now: number, orgId = accountId): Promise<KeyRecord> =>
  toKey(
    (await first(
      tx,
      `INSERT INTO api_keys (account_id, org_id, prefix, key_hash, label, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${KEY_COLUMNS}`,
      [accountId, orgId, key.prefix, key.keyHash, key.label, now, key.expiresAt],
    ))!,
  )

/**
 * Connects, checks the server's version, migrates (once, under an advisory lock, whichever replica comes
 * first) and starts listening for account changes. A database whose schema is newer than this binary is
 * refused. Messages name host, port and database, never the password.
 */
export type PostgresStoreOptions = PoolOptions & {
  /** Whose clock judges leases and holds: the database's (the default, and the service's), or the caller's `now` (tests that move time; clock.ts). */
  clock?: StoreClock
  feed?: FeedOptions
  /** What a decision on a suggestion also does in its transaction (the organisation's webhook delivery). */
  suggestions?: SuggestionHooks
}

export async function createPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const db = openPool(url, options)
  const { sql, where } = db
  try {
    let version: number
    try {
      version = num((await first(sql, 'SHOW server_version_num'))!.server_version_num)
    } catch (error) {
      if (unreachable(error)) throw new Error(`cannot connect to PostgreSQL at ${where}: ${(error as Error).message}`)
      throw new Error(`PostgreSQL at ${where} refused the connection: ${(error as Error).message}`)
    }
    if (version < MINIMUM_VERSION) throw new Error(`PostgreSQL at ${where} is version ${Math.floor(version / 10000)}; alttext needs PostgreSQL 15 or newer`)
    const applied = await migratePostgres(sql, where)
    const feed = await listenForAccountChanges(sql, listenerPool(url, sessionParameters(db.limits)), options.feed)
    return Object.assign(assemble(db, feed, options.clock ?? 'database', options.suggestions), { schema: { version: latestPostgresVersion(), applied } })
  } catch (error) {
    await sql.close()
    throw error
  }
}

function assemble(db: Db, feed: Awaited<ReturnType<typeof listenForAccountChanges>>, clock: StoreClock, suggestionHooks: SuggestionHooks = {}): PostgresStore {
  const { sql, transaction, accountTransaction, run } = db

  const accountOf = (row: Row | null): AccountRecord | null => (row ? toAccount(row) : null)

  return {
    db,
    accounts: {
      createWithKey: (email, passwordHash, plan, key, now, verifiedAt = now) =>
        transaction(async (tx) => {
          // A second registration of the email waits on the unique index, then inserts nothing.
          const row = await first(
            tx,
            `INSERT INTO accounts (email, password_hash, plan, created_at, email_verified_at, org_public_id) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (email) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
            [email, passwordHash, plan, now, verifiedAt, newOrgPublicId()],
          )
          if (!row) return null
          const account = toAccount(row)
          // The account is its own personal organisation, of which it is the one owner.
          await tx.unsafe(`INSERT INTO org_members (org_id, account_id, role, joined_at) VALUES ($1, $1, 'owner', $2)`, [account.id, now])
          return { account, key: await insertKey(tx, account.id, key, now) }
        }),
      findByEmail: (email) => run(async (s) => accountOf(await first(s, `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = $1`, [email]))),
      findById: (id) => run(async (s) => accountOf(await first(s, `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]))),
      changePassword: (accountId, passwordHash, keepSessionId, now) =>
        transaction(async (tx) => {
          await tx.unsafe('UPDATE accounts SET password_hash = $1 WHERE id = $2', [passwordHash, accountId])
          await tx.unsafe('UPDATE reset_tokens SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [now, accountId])
          return changed(tx, 'DELETE FROM sessions WHERE account_id = $1 AND id <> $2', [accountId, keepSessionId])
        }),
      deleteAccount: (accountId) =>
        transaction(async (tx) => {
          // Locked first: nothing of the account can be added (a key, a session) between the counts and the delete.
          if (!(await first(tx, 'SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]))) return null
          const counts = (await first(
            tx,
            `SELECT (SELECT count(*) FROM api_keys WHERE account_id = $1) AS keys, (SELECT count(*) FROM sessions WHERE account_id = $1) AS sessions,
             (SELECT count(*) FROM generation_history WHERE account_id = $1) AS history`,
            [accountId],
          ))!
          // Its batches first, while the account is there (see orgs.delete: their image triggers need its row).
          await tx.unsafe('DELETE FROM batches WHERE account_id = $1', [accountId])
          // Keys, sessions, reset tokens, credits, call counts and history go with it (ON DELETE CASCADE).
          await tx.unsafe('DELETE FROM accounts WHERE id = $1', [accountId])
          return { keys: num(counts.keys), sessions: num(counts.sessions), history: num(counts.history) }
        }),
    },
    keys: {
      findByHash: (keyHash) =>
        run(async (s) => {
          // The maker's role is read with the key: a removed member's key is revoked, so only a race sees none.
          const r = await first(
            s,
            `SELECT ${KEY_JOIN_COLUMNS}, ${ACCOUNT_JOIN_COLUMNS}, ${ORG_JOIN_COLUMNS}, m.role AS m_role
             FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN accounts o ON o.id = k.org_id
             LEFT JOIN org_members m ON m.org_id = k.org_id AND m.account_id = k.account_id WHERE k.key_hash = $1`,
            [keyHash],
          )
          return r ? { key: toKey(r), account: toAccount(r, 'a_'), org: toOrg(r, 'o_'), role: (r.m_role as Role | null) ?? null } : null
        }),
      listActive: (accountId, now) =>
        run(async (s) =>
          (
            (await s.unsafe(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 AND ${ACTIVE} ORDER BY created_at DESC, id DESC`, [
              accountId,
              now,
            ])) as Row[]
          ).map(toKey),
        ),
      listActiveInOrg: (orgId, now) =>
        run(async (s) =>
          (
            (await s.unsafe(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE org_id = $1 AND ${ACTIVE} ORDER BY created_at DESC, id DESC`, [orgId, now])) as Row[]
          ).map(toKey),
        ),
      revokeInOrg: (orgId, prefix, now) =>
        run(async (s) => {
          const row = await first(s, `UPDATE api_keys SET revoked_at = $2 WHERE org_id = $1 AND prefix = $3 AND ${ACTIVE} RETURNING ${KEY_COLUMNS}`, [
            orgId,
            now,
            prefix,
          ])
          return row ? toKey(row) : null
        }),
      create: (accountId, key, now, maxActive, orgId = accountId) =>
        accountTransaction(accountId, async (tx) => {
          // The account's row lock makes "count, then insert" one step across replicas.
          await lockAccount(tx, accountId)
          const active = num((await first(tx, `SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND ${ACTIVE}`, [accountId, now]))!.n)
          if (active >= maxActive) return 'limit' as const
          return insertKey(tx, accountId, key, now, orgId)
        }),
      revoke: (accountId, prefix, now) =>
        transaction(async (tx) => {
          const row = await first(tx, `UPDATE api_keys SET revoked_at = $2 WHERE account_id = $1 AND prefix = $3 AND ${ACTIVE} RETURNING ${KEY_COLUMNS}`, [
            accountId,
            now,
            prefix,
          ])
          return row ? toKey(row) : null
        }),
      rotate: (accountId, prefix, now, graceUntil, makeKey, maxActive) =>
        transaction(async (tx) => {
          // The account's row lock makes "count, then insert" one step across replicas, as in create.
          await lockAccount(tx, accountId)
          // Locked first: a second rotation of the same key waits, then finds it rotated.
          const row = await first(
            tx,
            `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 AND prefix = $3 AND rotated_at IS NULL AND ${ACTIVE} FOR UPDATE`,
            [accountId, now, prefix],
          )
          if (!row) return null
          // The old key stays active through its grace period: the new one must fit beside it.
          if (graceUntil > now) {
            const active = num((await first(tx, `SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND ${ACTIVE}`, [accountId, now]))!.n)
            if (active >= maxActive) return 'limit' as const
          }
          // The new key is of the old one's organisation.
          const key = await insertKey(tx, accountId, makeKey(toKey(row)), now, num(row.org_id))
          // The grace period never lengthens a key's life: an earlier expiry stays.
          const old =
            graceUntil > now
              ? await first(
                  tx,
                  `UPDATE api_keys SET expires_at = LEAST(coalesce(expires_at, $1), $1), rotated_at = $2 WHERE id = $3 RETURNING ${KEY_COLUMNS}`,
                  [graceUntil, now, row.id],
                )
              : await first(tx, `UPDATE api_keys SET revoked_at = $1 WHERE id = $2 RETURNING ${KEY_COLUMNS}`, [now, row.id])
          return { old: toKey(old!), key }
        }),
      prefixExists: (prefix) => run(async (s) => (await first(s, 'SELECT 1 AS one FROM api_keys WHERE prefix = $1', [prefix])) !== null),
    },
    resetTokens: {
      issue: (accountId, tokenHash, expiresAt, now, cooldownMs = 0) =>
        transaction(async (tx) => {
          // Two requests at once: the second waits here, then sees the first one's token (and ends it, or
          // cools down). An unknown email looks up account 0, which no account has: the same statements.
          if (accountId !== null) await lockAccount(tx, accountId)
          const at = (await first(tx, 'SELECT max(created_at) AS at FROM reset_tokens WHERE account_id = $1', [accountId ?? 0]))?.at
          const last = at === null || at === undefined ? null : num(at)
          if (accountId === null || (last !== null && now - last < cooldownMs)) {
            // The decoy's two statements mirror the real ones (see migration 4).
            await tx.unsafe('UPDATE reset_token_decoys SET used_at = $1 WHERE id = 1 AND used_at IS NULL', [now])
            await tx.unsafe(
              `INSERT INTO reset_token_decoys (id, token_hash, created_at, expires_at, used_at) VALUES (1, $1, $2, $3, NULL)
               ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at, expires_at = excluded.expires_at, used_at = NULL`,
              [tokenHash, now, expiresAt],
            )
            return false
          }
          await tx.unsafe('UPDATE reset_tokens SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [now, accountId])
          await tx.unsafe('INSERT INTO reset_tokens (account_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
            accountId,
            tokenHash,
            now,
            expiresAt,
          ])
          return true
        }),
      isUsable: (tokenHash, now) =>
        run(
          async (s) =>
            (await first(s, 'SELECT 1 AS one FROM reset_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2', [tokenHash, now])) !== null,
        ),
      consume: (tokenHash, now, passwordHash, key) =>
        transaction(async (tx) => {
          // A second use of the token waits on the row, then finds it used.
          const used = await first(
            tx,
            'UPDATE reset_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1 RETURNING account_id',
            [now, tokenHash],
          )
          if (!used) return null
          const accountId = num(used.account_id)
          // A reset token came by mail: using it proves the mailbox as well as a verification link would.
          const account = toAccount(
            (await first(
              tx,
              `UPDATE accounts SET password_hash = $1, email_verified_at = coalesce(email_verified_at, $2) WHERE id = $3 RETURNING ${ACCOUNT_COLUMNS}`,
              [passwordHash, now, accountId],
            ))!,
          )
          await tx.unsafe('UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL', [now, accountId])
          await tx.unsafe('DELETE FROM sessions WHERE account_id = $1', [accountId])
          await tx.unsafe('UPDATE reset_tokens SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [now, accountId])
          await tx.unsafe('UPDATE email_verifications SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [now, accountId])
          return { account, key: await insertKey(tx, accountId, key, now) }
        }),
    },
    verifications: {
      issue: (accountId, tokenHash, expiresAt, now) =>
        accountTransaction(accountId, async (tx) => {
          await lockAccount(tx, accountId)
          await tx.unsafe('UPDATE email_verifications SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [now, accountId])
          await tx.unsafe('INSERT INTO email_verifications (account_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
            accountId,
            tokenHash,
            now,
            expiresAt,
          ])
        }),
      lastIssuedAt: (accountId) =>
        run(async (s) => {
          const at = (await first(s, 'SELECT max(created_at) AS at FROM email_verifications WHERE account_id = $1', [accountId]))?.at
          return at === null || at === undefined ? null : num(at)
        }),
      consume: (tokenHash, now) =>
        transaction(async (tx) => {
          const used = await first(
            tx,
            'UPDATE email_verifications SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1 RETURNING account_id',
            [now, tokenHash],
          )
          if (!used) return null
          await tx.unsafe('UPDATE email_verifications SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [now, used.account_id])
          return accountOf(
            await first(tx, `UPDATE accounts SET email_verified_at = coalesce(email_verified_at, $1) WHERE id = $2 RETURNING ${ACCOUNT_COLUMNS}`, [
              now,
              used.account_id,
            ]),
          )
        }),
    },
    activity: {
      apply: (batch: ActivityBatch) =>
        transaction(async (tx) => {
          // In id order, so two replicas writing the same accounts and keys take their locks in one order.
          for (const accountId of [...batch.calls.keys()].toSorted((a, b) => a - b)) {
            for (const [day, n] of batch.calls.get(accountId)!) {
              // An account deleted since the calls were counted has no row to add to: its counts are dropped.
              await tx.unsafe(
                `INSERT INTO api_calls (account_id, day, count) SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM accounts WHERE id = $1)
                 ON CONFLICT (account_id, day) DO UPDATE SET count = api_calls.count + excluded.count`,
                [accountId, day, n],
              )
            }
          }
          for (const [keyId, at] of [...batch.lastUsed].toSorted((a, b) => a[0] - b[0]))
            await tx.unsafe('UPDATE api_keys SET last_used_at = GREATEST(coalesce(last_used_at, 0), $1) WHERE id = $2', [at, keyId])
        }),
      callsOn: (accountId, day) =>
        run(async (s) => {
          const row = await first(s, 'SELECT count FROM api_calls WHERE account_id = $1 AND day = $2', [accountId, day])
          return row ? num(row.count) : 0
        }),
    },
    cache: {
      get: (cacheKey, now) =>
        run(async (s) => {
          const row = await first(s, 'SELECT * FROM alt_text_cache WHERE cache_key = $1 AND expires_at > $2', [cacheKey, now])
          if (!row) return null
          return {
            altText: row.alt_text as string,
            wcagCompliant: row.wcag_compliant as boolean,
            wcagIssues: JSON.parse(row.wcag_issues as string) as string[],
            language: row.language as string,
            model: row.model as string,
            width: num(row.width),
            height: num(row.height),
            format: row.format as CachedAltText['format'],
            decorativeReason: row.decorative_reason as string | null,
            textInImage: row.text_in_image as string | null,
            longDescription: row.long_description as string | null,
            animated: row.animated as boolean | null,
          }
        }),
      put: (cacheKey, e, now, expiresAt) =>
        run(async (s) => {
          await s.unsafe(
            `INSERT INTO alt_text_cache (cache_key, alt_text, wcag_compliant, wcag_issues, language, model, width, height, format, created_at, expires_at,
               decorative_reason, text_in_image, long_description, animated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
             ON CONFLICT (cache_key) DO UPDATE SET alt_text = excluded.alt_text, wcag_compliant = excluded.wcag_compliant, wcag_issues = excluded.wcag_issues,
               language = excluded.language, model = excluded.model, width = excluded.width, height = excluded.height, format = excluded.format,
               created_at = excluded.created_at, expires_at = excluded.expires_at, decorative_reason = excluded.decorative_reason,
               text_in_image = excluded.text_in_image, long_description = excluded.long_description, animated = excluded.animated`,
            [
              cacheKey,
              e.altText,
              e.wcagCompliant,
              JSON.stringify(e.wcagIssues),
              e.language,
              e.model,
              e.width,
              e.height,
              e.format,
              now,
              expiresAt,
              e.decorativeReason ?? null,
              e.textInImage ?? null,
              e.longDescription ?? null,
              e.animated ?? null,
            ],
          )
        }),
      purgeExpired: (now) => run((s) => changed(s, 'DELETE FROM alt_text_cache WHERE expires_at <= $1', [now])),
    },
    credits: createPostgresCreditStore(db, clock),
    sessions: createPostgresSessionStore(db),
    history: createPostgresHistoryStore(db),
    batches: createPostgresBatchStore(db, clock),
    webhooks: createPostgresWebhookStore(db, clock),
    orgs: createPostgresOrgStore(db),
    suggestions: createPostgresSuggestionStore(db, suggestionHooks),
    counts: createPostgresCountsStore(db),
    admin: createPostgresAdminStore(db),
    changes: feed.feed,
    // One attempt, bounded: a database that does not answer is itself a reason not to be ready. The
    // message goes into /ready's public body, so it names no host.
    probe: async () => {
      const write = sql.unsafe('UPDATE health_probe SET checked_at = $1 WHERE id = 1', [Date.now()]) as Promise<{ count: number | null }>
      let timer: Timer | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`PostgreSQL did not answer within ${PROBE_TIMEOUT_MS / 1000} s`)), PROBE_TIMEOUT_MS)
      })
      try {
        const result = await Promise.race([write, timeout])
        if (result.count !== 1) throw new Error('the readiness probe row is missing')
      } catch (error) {
        if (unreachable(error)) throw new Error('PostgreSQL cannot be reached')
        throw error
      } finally {
        clearTimeout(timer)
        write.catch(() => {})
      }
    },
    close: async () => {
      await feed.close().catch(() => {})
      await sql.close()
    },
  }
}
