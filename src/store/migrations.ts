// Versioned schema. Append only: a released migration is never edited, a change is a new entry.
export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'accounts, keys, reset tokens, credits, activity',
    sql: `
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        plan TEXT NOT NULL DEFAULT 'free',
        created_at INTEGER NOT NULL
      );
      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        prefix TEXT NOT NULL UNIQUE,
        key_hash TEXT NOT NULL UNIQUE,
        label TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER,
        last_used_at INTEGER
      );
      CREATE INDEX api_keys_account ON api_keys(account_id, revoked_at);
      CREATE TABLE reset_tokens (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      CREATE INDEX reset_tokens_account ON reset_tokens(account_id);
      CREATE TABLE credit_usage (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        period TEXT NOT NULL,
        used INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, period)
      ) WITHOUT ROWID;
      CREATE TABLE api_calls (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        day TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, day)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: 'credit holds and the alt-text cache',
    sql: `
      -- A hold reserves a credit while a generation runs; it becomes a charge only when answered.
      CREATE TABLE credit_holds (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        period TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX credit_holds_account ON credit_holds(account_id, period);
      CREATE TABLE alt_text_cache (
        cache_key TEXT PRIMARY KEY,
        alt_text TEXT NOT NULL,
        wcag_compliant INTEGER NOT NULL,
        wcag_issues TEXT NOT NULL,
        language TEXT NOT NULL,
        model TEXT NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        format TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX alt_text_cache_expiry ON alt_text_cache(expires_at);
    `,
  },
  {
    version: 3,
    name: 'credit holds live in memory',
    sql: `
      -- Holds are kept by the one process that serves this database: a hold never outlives its
      -- request, and one left by a crash was never answered, so there is nothing to store.
      DROP TABLE credit_holds;
    `,
  },
  {
    version: 4,
    name: 'readiness write probe and the forgot-password decoy',
    sql: `
      -- The readiness check rewrites this one row: a commit that reaches the disk proves it is writable.
      CREATE TABLE health_probe (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        checked_at INTEGER NOT NULL
      );
      INSERT INTO health_probe (id, checked_at) VALUES (1, 0);
      -- forgot-password for an unknown email rewrites this row in the same kind of transaction as a real
      -- token, so both answers cost one durable write and the time does not tell whether the account exists.
      CREATE TABLE reset_token_decoys (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        token_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      INSERT INTO reset_token_decoys (id, token_hash, created_at, expires_at) VALUES (1, '', 0, 0);
    `,
  },
  {
    version: 5,
    name: 'browser sessions',
    sql: `
      -- A signed-in browser: only the SHA-256 of its cookie's token is stored. Ends at expires_at
      -- (absolute) or after a long enough pause since last_seen_at (idle); both are checked on use.
      CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX sessions_account ON sessions(account_id);
    `,
  },
  {
    version: 6,
    name: 'daily usage counts and the generation history',
    sql: `
      -- Outcomes of alt-text requests per account and UTC day: fresh generations (charged), cache hits,
      -- and requests that authenticated but failed after validation.
      CREATE TABLE usage_daily (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        day TEXT NOT NULL,
        generations INTEGER NOT NULL DEFAULT 0,
        cached INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, day)
      ) WITHOUT ROWID;
      -- The newest generations of each account (the recorder keeps a bounded number). No image bytes.
      CREATE TABLE generation_history (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        source TEXT NOT NULL,
        format TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        alt_text TEXT NOT NULL,
        decorative INTEGER NOT NULL,
        language TEXT NOT NULL,
        style TEXT NOT NULL,
        max_length INTEGER NOT NULL,
        cached INTEGER NOT NULL,
        character_count INTEGER NOT NULL
      );
      CREATE INDEX generation_history_account ON generation_history(account_id, created_at);
    `,
  },
  {
    version: 7,
    name: 'decorative answers in the alt-text cache',
    sql: `
      -- Why the model judged an image purely decorative (its alt_text is then ''); NULL for an alt text.
      ALTER TABLE alt_text_cache ADD COLUMN decorative_reason TEXT;
    `,
  },
]
