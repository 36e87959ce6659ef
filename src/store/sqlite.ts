// The SQLite implementation of the Store, on bun:sqlite. Synchronous underneath; the async interface
// is for other databases. WAL + synchronous=FULL: a committed transaction survives kill -9 and power loss.
// The one exception is the alt-text cache (see `put`).
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { MIGRATIONS } from './migrations'
import type { AccountRecord, ActivityBatch, KeyRecord, NewKey, Store } from './types'

type AccountRow = { id: number; email: string; password_hash: string; plan: 'free'; created_at: number }
type KeyRow = {
  id: number
  account_id: number
  prefix: string
  label: string | null
  created_at: number
  expires_at: number | null
  revoked_at: number | null
  last_used_at: number | null
}

const toAccount = (r: AccountRow): AccountRecord => ({
  id: r.id,
  email: r.email,
  passwordHash: r.password_hash,
  plan: r.plan,
  createdAt: r.created_at,
})

const toKey = (r: KeyRow): KeyRecord => ({
  id: r.id,
  accountId: r.account_id,
  prefix: r.prefix,
  label: r.label,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
})

type CacheRow = {
  cache_key: string
  alt_text: string
  wcag_compliant: number
  wcag_issues: string
  language: string
  model: string
  width: number
  height: number
  format: 'jpeg' | 'png' | 'gif' | 'webp'
}

const KEY_COLUMNS = 'id, account_id, prefix, label, created_at, expires_at, revoked_at, last_used_at'
const ACTIVE = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)'

export function openDatabase(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { create: true, strict: true })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = FULL')
  db.exec('PRAGMA foreign_keys = ON')
  db.exec('PRAGMA busy_timeout = 5000')
  try {
    migrate(db)
  } catch (error) {
    db.close()
    throw error
  }
  return db
}

/** Applies pending migrations, each in its own transaction with its version record. */
export function migrate(db: Database): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
  const applied = new Set(
    db
      .query<{ version: number }, []>('SELECT version FROM schema_migrations')
      .all()
      .map((r) => r.version),
  )
  const latest = Math.max(0, ...applied)
  const known = Math.max(...MIGRATIONS.map((m) => m.version))
  if (latest > known) throw new Error(`database schema version ${latest} is newer than this binary knows (${known}); upgrade alttext`)
  const done: number[] = []
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue
    db.transaction(() => {
      db.exec(migration.sql)
      db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, Date.now())
    }).immediate()
    done.push(migration.version)
  }
  return done
}

export function createSqliteStore(path: string): Store & { db: Database } {
  const db = openDatabase(path)

  const q = {
    insertAccount: db.query<AccountRow, [string, string, string, number]>(
      'INSERT INTO accounts (email, password_hash, plan, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(email) DO NOTHING RETURNING *',
    ),
    accountByEmail: db.query<AccountRow, [string]>('SELECT * FROM accounts WHERE email = ?'),
    accountById: db.query<AccountRow, [number]>('SELECT * FROM accounts WHERE id = ?'),
    insertKey: db.query<KeyRow, [number, string, string, string | null, number, number | null]>(
      `INSERT INTO api_keys (account_id, prefix, key_hash, label, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${KEY_COLUMNS}`,
    ),
    keyByHash: db.query<KeyRow & { a_email: string; a_password_hash: string; a_plan: 'free'; a_created_at: number }, [string]>(
      `SELECT k.id, k.account_id, k.prefix, k.label, k.created_at, k.expires_at, k.revoked_at, k.last_used_at,
              a.email AS a_email, a.password_hash AS a_password_hash, a.plan AS a_plan, a.created_at AS a_created_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?`,
    ),
    activeKeys: db.query<KeyRow, [number, number]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? AND ${ACTIVE} ORDER BY created_at DESC, id DESC`),
    countActive: db.query<{ n: number }, [number, number]>(`SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND ${ACTIVE}`),
    activeByPrefix: db.query<KeyRow, [number, string, number]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? AND prefix = ? AND ${ACTIVE}`),
    revokeKey: db.query<KeyRow, [number, number]>(`UPDATE api_keys SET revoked_at = ? WHERE id = ? RETURNING ${KEY_COLUMNS}`),
    revokeAll: db.query<null, [number, number]>('UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL'),
    prefixExists: db.query<{ one: number }, [string]>('SELECT 1 AS one FROM api_keys WHERE prefix = ?'),
    invalidateTokens: db.query<null, [number, number]>('UPDATE reset_tokens SET used_at = ? WHERE account_id = ? AND used_at IS NULL'),
    insertToken: db.query<null, [number, string, number, number]>(
      'INSERT INTO reset_tokens (account_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)',
    ),
    useToken: db.query<{ account_id: number }, [number, string, number]>(
      'UPDATE reset_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING account_id',
    ),
    setPassword: db.query<AccountRow, [string, number]>('UPDATE accounts SET password_hash = ? WHERE id = ? RETURNING *'),
    creditsUsed: db.query<{ used: number }, [number, string]>('SELECT used FROM credit_usage WHERE account_id = ? AND period = ?'),
    addCalls: db.query<null, [number, string, number]>(
      'INSERT INTO api_calls (account_id, day, count) VALUES (?, ?, ?) ON CONFLICT(account_id, day) DO UPDATE SET count = count + excluded.count',
    ),
    touchKey: db.query<null, [number, number]>('UPDATE api_keys SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE id = ?'),
    callsOn: db.query<{ count: number }, [number, string]>('SELECT count FROM api_calls WHERE account_id = ? AND day = ?'),
    charge: db.query<{ used: number }, [number, string]>(
      'INSERT INTO credit_usage (account_id, period, used) VALUES (?, ?, 1) ON CONFLICT(account_id, period) DO UPDATE SET used = used + 1 RETURNING used',
    ),
    syncNormal: db.query<null, []>('PRAGMA synchronous = NORMAL'),
    syncFull: db.query<null, []>('PRAGMA synchronous = FULL'),
    cacheGet: db.query<CacheRow, [string, number]>('SELECT * FROM alt_text_cache WHERE cache_key = ? AND expires_at > ?'),
    cachePut: db.query<null, [string, string, number, string, string, string, number, number, string, number, number]>(
      `INSERT INTO alt_text_cache (cache_key, alt_text, wcag_compliant, wcag_issues, language, model, width, height, format, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(cache_key) DO UPDATE SET alt_text = excluded.alt_text, wcag_compliant = excluded.wcag_compliant, wcag_issues = excluded.wcag_issues,
         language = excluded.language, model = excluded.model, width = excluded.width, height = excluded.height, format = excluded.format,
         created_at = excluded.created_at, expires_at = excluded.expires_at`,
    ),
    cachePurge: db.query<null, [number]>('DELETE FROM alt_text_cache WHERE expires_at <= ?'),
  }

  const insertKey = (accountId: number, key: NewKey, now: number): KeyRecord =>
    toKey(q.insertKey.get(accountId, key.prefix, key.keyHash, key.label, now, key.expiresAt)!)

  const createWithKey = db.transaction((email: string, passwordHash: string, plan: string, key: NewKey, now: number) => {
    const row = q.insertAccount.get(email, passwordHash, plan, now)
    if (!row) return null
    return { account: toAccount(row), key: insertKey(row.id, key, now) }
  })

  const createKey = db.transaction((accountId: number, key: NewKey, now: number, maxActive: number) => {
    if (q.countActive.get(accountId, now)!.n >= maxActive) return 'limit' as const
    return insertKey(accountId, key, now)
  })

  const revoke = db.transaction((accountId: number, prefix: string, now: number) => {
    const row = q.activeByPrefix.get(accountId, prefix, now)
    return row ? toKey(q.revokeKey.get(now, row.id)!) : null
  })

  const rotate = db.transaction((accountId: number, prefix: string, now: number, makeKey: (old: KeyRecord) => NewKey) => {
    const row = q.activeByPrefix.get(accountId, prefix, now)
    if (!row) return null
    const old = toKey(q.revokeKey.get(now, row.id)!)
    return { old, key: insertKey(accountId, makeKey(old), now) }
  })

  const issueToken = db.transaction((accountId: number, tokenHash: string, expiresAt: number, now: number) => {
    q.invalidateTokens.run(now, accountId)
    q.insertToken.run(accountId, tokenHash, now, expiresAt)
  })

  const consumeToken = db.transaction((tokenHash: string, now: number, passwordHash: string, key: NewKey) => {
    const used = q.useToken.get(now, tokenHash, now)
    if (!used) return null
    const account = toAccount(q.setPassword.get(passwordHash, used.account_id)!)
    q.revokeAll.run(now, account.id)
    q.invalidateTokens.run(now, account.id)
    return { account, key: insertKey(account.id, key, now) }
  })

  const applyActivity = db.transaction((batch: ActivityBatch) => {
    for (const [accountId, days] of batch.calls) for (const [day, n] of days) q.addCalls.run(accountId, day, n)
    for (const [keyId, at] of batch.lastUsed) q.touchKey.run(at, keyId)
  })

  return {
    db,
    accounts: {
      createWithKey: async (email, passwordHash, plan, key, now) => createWithKey.immediate(email, passwordHash, plan, key, now),
      findByEmail: async (email) => {
        const row = q.accountByEmail.get(email)
        return row ? toAccount(row) : null
      },
      findById: async (id) => {
        const row = q.accountById.get(id)
        return row ? toAccount(row) : null
      },
    },
    keys: {
      findByHash: async (keyHash) => {
        const r = q.keyByHash.get(keyHash)
        if (!r) return null
        return {
          key: toKey(r),
          account: { id: r.account_id, email: r.a_email, passwordHash: r.a_password_hash, plan: r.a_plan, createdAt: r.a_created_at },
        }
      },
      listActive: async (accountId, now) => q.activeKeys.all(accountId, now).map(toKey),
      create: async (accountId, key, now, maxActive) => createKey.immediate(accountId, key, now, maxActive),
      revoke: async (accountId, prefix, now) => revoke.immediate(accountId, prefix, now),
      rotate: async (accountId, prefix, now, makeKey) => rotate.immediate(accountId, prefix, now, makeKey),
      prefixExists: async (prefix) => q.prefixExists.get(prefix) !== null,
    },
    resetTokens: {
      issue: async (accountId, tokenHash, expiresAt, now) => issueToken.immediate(accountId, tokenHash, expiresAt, now),
      consume: async (tokenHash, now, passwordHash, key) => consumeToken.immediate(tokenHash, now, passwordHash, key),
    },
    credits: {
      used: async (accountId, period) => q.creditsUsed.get(accountId, period)?.used ?? 0,
      charge: async (accountId, period) => q.charge.get(accountId, period)!.used,
    },
    cache: {
      get: async (cacheKey, now) => {
        const row = q.cacheGet.get(cacheKey, now)
        if (!row) return null
        return {
          altText: row.alt_text,
          wcagCompliant: row.wcag_compliant === 1,
          wcagIssues: JSON.parse(row.wcag_issues) as string[],
          language: row.language,
          model: row.model,
          width: row.width,
          height: row.height,
          format: row.format,
        }
      },
      put: async (cacheKey, e, now, expiresAt) => {
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
          )
        } finally {
          q.syncFull.run()
        }
      },
      purgeExpired: async (now) => q.cachePurge.run(now).changes,
    },
    activity: {
      apply: async (batch) => applyActivity.immediate(batch),
      callsOn: async (accountId, day) => q.callsOn.get(accountId, day)?.count ?? 0,
    },
    ping: async () => {
      db.query('SELECT 1').get()
    },
    close: () => db.close(),
  }
}
