// The SQLite implementation of the Store, on bun:sqlite. Synchronous underneath; the async interface
// is for other databases. WAL + synchronous=FULL: a committed transaction survives kill -9 and power loss.
// The one exception is the alt-text cache (see `putCache`). Busy writes wait on timers (connection.ts).
import type { Database } from 'bun:sqlite'
import { resolve } from 'node:path'
import type { ActivityBatch, CachedAltText, KeyRecord, NewKey, RemovedAccount, Role, Store } from '../contract'
import { ACCOUNT_COLUMNS, ACCOUNT_JOIN_COLUMNS, KEY_COLUMNS, ORG_JOIN_COLUMNS, type Row, toAccount, toCachedAltText, toKey, toOrg } from '../shared/rows'
import { createAdminStore, createCountsStore } from './admin'
import { createBatchStore } from './batches'
import { acquireProcessLock, busyRetry, busyRetrySync, checkPath, DEFAULT_BUSY_WAIT_MS, isBusy, openFile, releaseLock, takeProcessLock } from './connection'
import { createCreditStore } from './credits'
import { createChangeFeed } from './feed'
import { createHistoryStore } from './history'
import { newOrgPublicId } from '../shared/ids'
import { createOrgStore } from './orgs'
import { createSuggestionStore } from './suggestions'
import { latestSchemaVersion, MIGRATIONS, migrate } from './migrations'
import { createSessionStore } from './sessions'
import { createWebhookStore } from './webhooks'

export type SqliteStoreOptions = {
  /** The longest a write waits for another process's lock, then fails with StoreBusyError. */
  busyWaitMs?: number
  /**
   * false: open beside the serving process without holding its lock (alttext admin). While a process
   * serves the file, its schema is used as it is (a binary that needs migrations the server lacks is
   * refused); with none serving, the file is checked and migrated as at start-up, under the lock.
   */
  processLock?: boolean
}

/** The per-account history table belongs to a later migration; until it exists there is nothing of it to count. */
const HISTORY_TABLE = 'generation_history'

const ACTIVE = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)'

/**
 * Opens (creating when needed) and migrates the database. Without the process lock: createSqliteStore
 * takes that first. A damaged file refuses to start: writing on a broken b-tree can spread the damage
 * and lose acknowledged data, and a "not ready" process would still be sent requests by a careless
 * proxy; the operator restores a backup instead.
 */
export function openDatabase(path: string, busyWaitMs = DEFAULT_BUSY_WAIT_MS, schema: 'migrate' | 'as-served' = 'migrate'): Database {
  return openMigrated(path, busyWaitMs, schema).db
}

/** openDatabase, with the migrations it applied (none as served). */
function openMigrated(path: string, busyWaitMs: number, schema: 'migrate' | 'as-served'): { db: Database; applied: number[] } {
  const db = openFile(path)
  let applied: number[] = []
  try {
    db.exec('PRAGMA busy_timeout = 0')
    busyRetrySync(() => db.exec('PRAGMA journal_mode = WAL'), busyWaitMs, path)
    db.exec('PRAGMA synchronous = FULL')
    db.exec('PRAGMA foreign_keys = ON')
    if (schema === 'migrate') {
      checkIntegrity(db, path)
      applied = migrate(db, busyWaitMs, path)
    } else requireMigrated(db, path)
  } catch (error) {
    db.close()
    const code = (error as { code?: unknown }).code
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') throw damaged(path, (error as Error).message)
    throw error
  }
  return { db, applied }
}

const damaged = (path: string, what: string) => new Error(`the database file ${path} is damaged (${what}); restore it from a backup`)

/** quick_check reads every page once (no index cross-checks): a few hundred ms for a large file, at start only. */
function checkIntegrity(db: Database, path: string): void {
  const problems = db
    .query<{ quick_check: string }, []>('PRAGMA quick_check(5)')
    .all()
    .map((r) => r.quick_check)
  if (problems.length !== 1 || problems[0] !== 'ok') throw damaged(path, problems.join('; '))
}

/** The serving process checked and migrated the file at its start: a binary that needs more must not change it underneath. */
function requireMigrated(db: Database, path: string): void {
  const applied = new Set(
    db
      .query<{ version: number }, []>("SELECT version FROM schema_migrations WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations')")
      .all()
      .map((r) => r.version),
  )
  const missing = MIGRATIONS.filter((m) => !applied.has(m.version)).map((m) => m.version)
  if (missing.length > 0)
    throw new Error(
      `the process serving ${path} runs an older schema (migrations ${missing.join(', ')} not applied); use the alttext binary that serves it, or restart the service with this one first`,
    )
}

export function createSqliteStore(path: string, options: SqliteStoreOptions = {}): Store & { db: Database } {
  const busyWaitMs = options.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS
  const file = path === ':memory:' ? path : resolve(path)
  // Checked before the lock file is created beside it, so a read-only directory gets its own message.
  if (file !== ':memory:') checkPath(file)
  const beside = options.processLock === false
  let lock = file === ':memory:' ? null : beside ? takeProcessLock(file) : acquireProcessLock(file)
  const servedElsewhere = beside && lock === null && file !== ':memory:'
  let db: Database
  let applied: number[]
  try {
    ;({ db, applied } = openMigrated(file, busyWaitMs, servedElsewhere ? 'as-served' : 'migrate'))
  } catch (error) {
    releaseLock(lock)
    throw error
  }
  // Beside a service, the lock is held only while migrating alone: a service starting now may take it.
  if (beside) {
    releaseLock(lock)
    lock = null
  }
  const write = busyRetry(busyWaitMs, file)

  const q = {
    insertAccount: db.query<Row, [string, string, string, number, number | null, string]>(
      `INSERT INTO accounts (email, password_hash, plan, created_at, email_verified_at, org_public_id) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(email) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
    ),
    insertOwnMembership: db.query<null, [number, number]>("INSERT INTO org_members (org_id, account_id, role, joined_at) VALUES (?1, ?1, 'owner', ?2)"),
    accountByEmail: db.query<Row, [string]>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = ?`),
    accountById: db.query<Row, [number]>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`),
    insertKey: db.query<Row, [number, number, string, string, string | null, number, number | null]>(
      `INSERT INTO api_keys (account_id, org_id, prefix, key_hash, label, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${KEY_COLUMNS}`,
    ),
    // The key, its maker, its organisation and the maker's role there: one read for a request's whole caller.
    keyByHash: db.query<Row, [string]>(
      `SELECT k.id, k.account_id, k.org_id, k.prefix, k.label, k.created_at, k.expires_at, k.revoked_at, k.last_used_at, ${ACCOUNT_JOIN_COLUMNS},
         ${ORG_JOIN_COLUMNS}, m.role AS m_role
       FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN accounts o ON o.id = k.org_id
       LEFT JOIN org_members m ON m.org_id = k.org_id AND m.account_id = k.account_id WHERE k.key_hash = ?`,
    ),
    activeKeys: db.query<Row, [number, number]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? AND ${ACTIVE} ORDER BY created_at DESC, id DESC`),
    activeInOrg: db.query<Row, [number, number]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE org_id = ? AND ${ACTIVE} ORDER BY created_at DESC, id DESC`),
    activeInOrgByPrefix: db.query<Row & { id: number }, [number, string, number]>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE org_id = ? AND prefix = ? AND ${ACTIVE}`,
    ),
    countActive: db.query<{ n: number }, [number, number]>(`SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND ${ACTIVE}`),
    activeByPrefix: db.query<Row & { id: number }, [number, string, number]>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? AND prefix = ? AND ${ACTIVE}`,
    ),
    revokeKey: db.query<Row, [number, number]>(`UPDATE api_keys SET revoked_at = ? WHERE id = ? RETURNING ${KEY_COLUMNS}`),
    rotatableByPrefix: db.query<Row & { id: number }, [number, string, number]>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? AND prefix = ? AND rotated_at IS NULL AND ${ACTIVE}`,
    ),
    // The grace period never lengthens a key's life: an earlier expiry stays.
    expireRotated: db.query<Row, [number, number, number]>(
      `UPDATE api_keys SET expires_at = min(coalesce(expires_at, ?1), ?1), rotated_at = ?2 WHERE id = ?3 RETURNING ${KEY_COLUMNS}`,
    ),
    revokeAll: db.query<null, [number, number]>('UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL'),
    endSessions: db.query<null, [number]>('DELETE FROM sessions WHERE account_id = ?'),
    prefixExists: db.query<{ one: number }, [string]>('SELECT 1 AS one FROM api_keys WHERE prefix = ?'),
    invalidateTokens: db.query<null, [number, number]>('UPDATE reset_tokens SET used_at = ? WHERE account_id = ? AND used_at IS NULL'),
    insertToken: db.query<null, [number, string, number, number]>(
      'INSERT INTO reset_tokens (account_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)',
    ),
    useToken: db.query<{ account_id: number }, [number, string, number]>(
      'UPDATE reset_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING account_id',
    ),
    tokenUsable: db.query<{ one: number }, [string, number]>('SELECT 1 AS one FROM reset_tokens WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?'),
    lastToken: db.query<{ at: number | null }, [number]>('SELECT max(created_at) AS at FROM reset_tokens WHERE account_id = ?'),
    // The decoy's two statements mirror invalidateTokens and insertToken (see migration 4).
    invalidateDecoy: db.query<null, [number, number]>('UPDATE reset_token_decoys SET used_at = ? WHERE id = ? AND used_at IS NULL'),
    insertDecoy: db.query<null, [number, string, number, number]>(
      'INSERT OR REPLACE INTO reset_token_decoys (id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)',
    ),
    probe: db.query<null, [number]>('UPDATE health_probe SET checked_at = ? WHERE id = 1'),
    // A reset token came by mail: using it proves the mailbox as well as a verification link would.
    setPassword: db.query<Row, [string, number, number]>(
      `UPDATE accounts SET password_hash = ?, email_verified_at = coalesce(email_verified_at, ?) WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`,
    ),
    endVerifications: db.query<null, [number, number]>('UPDATE email_verifications SET used_at = ? WHERE account_id = ? AND used_at IS NULL'),
    insertVerification: db.query<null, [number, string, number, number]>(
      'INSERT INTO email_verifications (account_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)',
    ),
    lastVerification: db.query<{ at: number | null }, [number]>('SELECT max(created_at) AS at FROM email_verifications WHERE account_id = ?'),
    useVerification: db.query<{ account_id: number }, [number, string, number]>(
      'UPDATE email_verifications SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING account_id',
    ),
    markVerified: db.query<Row, [number, number]>(
      `UPDATE accounts SET email_verified_at = coalesce(email_verified_at, ?) WHERE id = ? RETURNING ${ACCOUNT_COLUMNS}`,
    ),
    // An account deleted since the calls were counted has no row to add to: its counts are dropped, not a failed batch.
    addCalls: db.query<null, [number, string, number]>(
      'INSERT INTO api_calls (account_id, day, count) SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?1) ON CONFLICT(account_id, day) DO UPDATE SET count = count + excluded.count',
    ),
    touchKey: db.query<null, [number, number]>('UPDATE api_keys SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE id = ?'),
    callsOn: db.query<{ count: number }, [number, string]>('SELECT count FROM api_calls WHERE account_id = ? AND day = ?'),
    syncNormal: db.query<null, []>('PRAGMA synchronous = NORMAL'),
    syncFull: db.query<null, []>('PRAGMA synchronous = FULL'),
    cacheGet: db.query<Row, [string, number]>('SELECT * FROM alt_text_cache WHERE cache_key = ? AND expires_at > ?'),
    cachePut: db.query<
      null,
      [string, string, number, string, string, string, number, number, string, number, number, string | null, string | null, string | null, number | null]
    >(
      `INSERT INTO alt_text_cache (cache_key, alt_text, wcag_compliant, wcag_issues, language, model, width, height, format, created_at, expires_at, decorative_reason, text_in_image, long_description, animated)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(cache_key) DO UPDATE SET alt_text = excluded.alt_text, wcag_compliant = excluded.wcag_compliant, wcag_issues = excluded.wcag_issues,
         language = excluded.language, model = excluded.model, width = excluded.width, height = excluded.height, format = excluded.format,
         created_at = excluded.created_at, expires_at = excluded.expires_at, decorative_reason = excluded.decorative_reason,
         text_in_image = excluded.text_in_image, long_description = excluded.long_description, animated = excluded.animated`,
    ),
    cachePurge: db.query<null, [number]>('DELETE FROM alt_text_cache WHERE expires_at <= ?'),
    changePassword: db.query<null, [string, number]>('UPDATE accounts SET password_hash = ? WHERE id = ?'),
    endOtherSessions: db.query<null, [number, number]>('DELETE FROM sessions WHERE account_id = ? AND id <> ?'),
    countKeys: db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM api_keys WHERE account_id = ?'),
    countSessions: db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM sessions WHERE account_id = ?'),
    hasHistory: db.query<{ one: number }, [string]>("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?"),
    deleteAccount: db.query<null, [number]>('DELETE FROM accounts WHERE id = ?'),
  }

  const insertKey = (accountId: number, key: NewKey, now: number, orgId = accountId): KeyRecord =>
    toKey(q.insertKey.get(accountId, orgId, key.prefix, key.keyHash, key.label, now, key.expiresAt)!)

  // The account is its own personal organisation: its owner membership is made with it.
  const createWithKey = db.transaction((email: string, passwordHash: string, plan: string, key: NewKey, now: number, verifiedAt: number | null) => {
    const row = q.insertAccount.get(email, passwordHash, plan, now, verifiedAt, newOrgPublicId())
    if (!row) return null
    const account = toAccount(row)
    q.insertOwnMembership.run(account.id, now)
    return { account, key: insertKey(account.id, key, now) }
  })

  const createKey = db.transaction((accountId: number, key: NewKey, now: number, maxActive: number, orgId: number) => {
    if (q.countActive.get(accountId, now)!.n >= maxActive) return 'limit' as const
    return insertKey(accountId, key, now, orgId)
  })

  const revokeInOrg = db.transaction((orgId: number, prefix: string, now: number) => {
    const row = q.activeInOrgByPrefix.get(orgId, prefix, now)
    return row ? toKey(q.revokeKey.get(now, row.id)!) : null
  })

  const revoke = db.transaction((accountId: number, prefix: string, now: number) => {
    const row = q.activeByPrefix.get(accountId, prefix, now)
    return row ? toKey(q.revokeKey.get(now, row.id)!) : null
  })

  const rotate = db.transaction(
    (accountId: number, prefix: string, now: number, graceUntil: number, makeKey: (old: KeyRecord) => NewKey, maxActive: number) => {
      const row = q.rotatableByPrefix.get(accountId, prefix, now)
      if (!row) return null
      // The old key stays active through its grace period: the new one must fit beside it.
      if (graceUntil > now && q.countActive.get(accountId, now)!.n >= maxActive) return 'limit' as const
      const old = toKey(row)
      const key = insertKey(accountId, makeKey(old), now, old.orgId)
      const ended = graceUntil > now ? q.expireRotated.get(graceUntil, now, row.id)! : q.revokeKey.get(now, row.id)!
      return { old: toKey(ended), key }
    },
  )

  const issueToken = db.transaction((accountId: number | null, tokenHash: string, expiresAt: number, now: number, cooldownMs: number) => {
    // Looked up for an unknown email too (no account has id 0), so every path runs the same statements.
    const last = q.lastToken.get(accountId ?? 0)?.at ?? null
    if (accountId === null || (last !== null && now - last < cooldownMs)) {
      q.invalidateDecoy.run(now, 1)
      q.insertDecoy.run(1, tokenHash, now, expiresAt)
      return false
    }
    q.invalidateTokens.run(now, accountId)
    q.insertToken.run(accountId, tokenHash, now, expiresAt)
    return true
  })

  const consumeToken = db.transaction((tokenHash: string, now: number, passwordHash: string, key: NewKey) => {
    const used = q.useToken.get(now, tokenHash, now)
    if (!used) return null
    const account = toAccount(q.setPassword.get(passwordHash, now, used.account_id)!)
    q.revokeAll.run(now, account.id)
    q.endSessions.run(account.id)
    q.invalidateTokens.run(now, account.id)
    q.endVerifications.run(now, account.id)
    return { account, key: insertKey(account.id, key, now) }
  })

  const issueVerification = db.transaction((accountId: number, tokenHash: string, expiresAt: number, now: number) => {
    q.endVerifications.run(now, accountId)
    q.insertVerification.run(accountId, tokenHash, now, expiresAt)
  })

  const consumeVerification = db.transaction((tokenHash: string, now: number) => {
    const used = q.useVerification.get(now, tokenHash, now)
    if (!used) return null
    q.endVerifications.run(now, used.account_id)
    return toAccount(q.markVerified.get(now, used.account_id)!)
  })

  const changePassword = db.transaction((accountId: number, passwordHash: string, keepSessionId: number, now: number) => {
    q.changePassword.run(passwordHash, accountId)
    q.invalidateTokens.run(now, accountId)
    return q.endOtherSessions.run(accountId, keepSessionId).changes
  })

  const deleteAccount = db.transaction((accountId: number): RemovedAccount | null => {
    const keys = q.countKeys.get(accountId)!.n
    const sessions = q.countSessions.get(accountId)!.n
    const history =
      q.hasHistory.get(HISTORY_TABLE) === null
        ? 0
        : db.query<{ n: number }, [number]>(`SELECT count(*) AS n FROM ${HISTORY_TABLE} WHERE account_id = ?`).get(accountId)!.n
    // Keys, sessions, reset tokens, credits, call counts and history go with it (ON DELETE CASCADE).
    if (q.deleteAccount.run(accountId).changes === 0) return null
    return { keys, sessions, history }
  })

  const applyActivity = db.transaction((batch: ActivityBatch) => {
    for (const [accountId, days] of batch.calls) for (const [day, n] of days) q.addCalls.run(accountId, day, n)
    for (const [keyId, at] of batch.lastUsed) q.touchKey.run(at, keyId)
  })

  const probe = db.transaction((now: number) => {
    if (q.probe.run(now).changes !== 1) throw new Error('the readiness probe row is missing')
  })

  const putCache = (cacheKey: string, e: CachedAltText, now: number, expiresAt: number) => {
    // A cache row records nothing anyone paid for: it skips the fsync (about a fifth of a
    // generation's work on the event loop), survives kill -9 all the same, and is made durable
    // by the next FULL commit. A power cut can lose only the latest rows, which cost a model call.
    q.syncNormal.run()
    try {
      q.cachePut.run(
        cacheKey,
        e.altText,
        e.wcagCompliant ? 1 : 0,
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
        e.animated == null ? null : e.animated ? 1 : 0,
      )
    } finally {
      q.syncFull.run()
    }
  }

  return {
    db,
    schema: { version: latestSchemaVersion(), applied },
    accounts: {
      createWithKey: (email, passwordHash, plan, key, now, verifiedAt = now) =>
        write(() => createWithKey.immediate(email, passwordHash, plan, key, now, verifiedAt)),
      findByEmail: async (email) => {
        const row = q.accountByEmail.get(email)
        return row ? toAccount(row) : null
      },
      findById: async (id) => {
        const row = q.accountById.get(id)
        return row ? toAccount(row) : null
      },
      changePassword: (accountId, passwordHash, keepSessionId, now) => write(() => changePassword.immediate(accountId, passwordHash, keepSessionId, now)),
      deleteAccount: (accountId) => write(() => deleteAccount.immediate(accountId)),
    },
    keys: {
      findByHash: async (keyHash) => {
        const r = q.keyByHash.get(keyHash)
        if (!r) return null
        return { key: toKey(r), account: toAccount(r, 'a_'), org: toOrg(r, 'o_'), role: (r.m_role as Role | null) ?? null }
      },
      listActive: async (accountId, now) => q.activeKeys.all(accountId, now).map(toKey),
      listActiveInOrg: async (orgId, now) => q.activeInOrg.all(orgId, now).map(toKey),
      revokeInOrg: (orgId, prefix, now) => write(() => revokeInOrg.immediate(orgId, prefix, now)),
      create: (accountId, key, now, maxActive, orgId = accountId) => write(() => createKey.immediate(accountId, key, now, maxActive, orgId)),
      revoke: (accountId, prefix, now) => write(() => revoke.immediate(accountId, prefix, now)),
      rotate: (accountId, prefix, now, graceUntil, makeKey, maxActive) => write(() => rotate.immediate(accountId, prefix, now, graceUntil, makeKey, maxActive)),
      prefixExists: async (prefix) => q.prefixExists.get(prefix) !== null,
    },
    resetTokens: {
      issue: (accountId, tokenHash, expiresAt, now, cooldownMs = 0) => write(() => issueToken.immediate(accountId, tokenHash, expiresAt, now, cooldownMs)),
      isUsable: async (tokenHash, now) => q.tokenUsable.get(tokenHash, now) !== null,
      consume: (tokenHash, now, passwordHash, key) => write(() => consumeToken.immediate(tokenHash, now, passwordHash, key)),
    },
    verifications: {
      issue: (accountId, tokenHash, expiresAt, now) => write(() => issueVerification.immediate(accountId, tokenHash, expiresAt, now)),
      lastIssuedAt: async (accountId) => q.lastVerification.get(accountId)?.at ?? null,
      consume: (tokenHash, now) => write(() => consumeVerification.immediate(tokenHash, now)),
    },
    credits: createCreditStore(db, write, !beside),
    cache: {
      get: async (cacheKey, now) => {
        const row = q.cacheGet.get(cacheKey, now)
        return row ? toCachedAltText(row) : null
      },
      put: (cacheKey, entry, now, expiresAt) => write(() => putCache(cacheKey, entry, now, expiresAt)),
      purgeExpired: (now) => write(() => q.cachePurge.run(now).changes),
    },
    activity: {
      apply: (batch) => write(() => applyActivity.immediate(batch)),
      callsOn: async (accountId, day) => q.callsOn.get(accountId, day)?.count ?? 0,
    },
    sessions: createSessionStore(db, write),
    history: createHistoryStore(db, write),
    batches: createBatchStore(db, write, !beside),
    webhooks: createWebhookStore(db, write),
    orgs: createOrgStore(db, write),
    suggestions: createSuggestionStore(db, write),
    counts: createCountsStore(db),
    admin: createAdminStore(db, write),
    changes: createChangeFeed(db),
    // One attempt, no waiting: a lock held by another process is itself a reason not to be ready.
    probe: async () => {
      try {
        probe.immediate(Date.now())
      } catch (error) {
        if (isBusy(error)) throw new Error('the database is locked by another process; writes are waiting')
        throw error
      }
    },
    close: () => {
      db.close()
      releaseLock(lock)
    },
  }
}
