// Versioned schema. Append only: a released migration is never edited, a change is a new entry.
import type { Database } from 'bun:sqlite'
import { busyRetrySync, DEFAULT_BUSY_WAIT_MS } from './connection'
export type Migration = {
  version: number
  name: string
  sql: string
  /**
   * Rebuilds tables that others refer to: run with foreign keys off (SQLite allows switching them only
   * outside a transaction), since dropping the old table would otherwise delete every row that refers
   * to it; the references are checked before the commit.
   */
  rebuildsTables?: true
}

/**
 * The triggers that count each account's waiting batch images. Migration 12 makes them and 13 makes them
 * again on its rebuilt batch_items: released text, never edited (a change is a new migration).
 */
const BATCH_IMAGE_TRIGGERS = `CREATE TRIGGER batch_image_added AFTER INSERT ON batch_items WHEN NEW.image IS NOT NULL BEGIN
        INSERT INTO batch_image_bytes (account_id, bytes) SELECT account_id, length(NEW.image) FROM batches WHERE id = NEW.batch_id
          ON CONFLICT (account_id) DO UPDATE SET bytes = bytes + excluded.bytes;
      END;
      CREATE TRIGGER batch_image_changed AFTER UPDATE OF image ON batch_items WHEN OLD.image IS NOT NEW.image BEGIN
        UPDATE batch_image_bytes SET bytes = bytes + coalesce(length(NEW.image), 0) - coalesce(length(OLD.image), 0)
          WHERE account_id = (SELECT account_id FROM batches WHERE id = NEW.batch_id);
      END;
      CREATE TRIGGER batch_image_deleted AFTER DELETE ON batch_items WHEN OLD.image IS NOT NULL BEGIN
        UPDATE batch_image_bytes SET bytes = bytes - length(OLD.image)
          WHERE account_id = (SELECT account_id FROM batches WHERE id = OLD.batch_id);
      END;
      -- A batch deleted with its items (ON DELETE CASCADE) is gone before their triggers run: its items
      -- drop their images first, while it is still there to name the account.
      CREATE TRIGGER batch_images_deleted BEFORE DELETE ON batches BEGIN
        UPDATE batch_items SET image = NULL WHERE batch_id = OLD.id AND image IS NOT NULL;
      END;`

export const MIGRATIONS: Migration[] = [
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
  {
    version: 8,
    name: 'batches',
    sql: `
      -- A batch of alt-text requests, run in the background. status: queued (no item started), running,
      -- completed, cancelled; completed_at is set by the transaction that records its last item (or by the
      -- cancel when no item was running), which also sets webhook_state to 'pending' when webhook_url is set.
      -- idempotency_key / request_hash: the Idempotency-Key of the create and the hash of its body.
      CREATE TABLE batches (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        status TEXT NOT NULL DEFAULT 'queued',
        total INTEGER NOT NULL,
        succeeded INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        completed_at INTEGER,
        webhook_url TEXT,
        webhook_state TEXT,
        idempotency_key TEXT,
        request_hash TEXT
      );
      CREATE INDEX batches_account ON batches(account_id, created_at, id);
      CREATE UNIQUE INDEX batches_idempotency ON batches(account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX batches_ended ON batches(completed_at) WHERE completed_at IS NOT NULL;
      -- One row per item. status: pending, running (claimed by the runner; pending again at start), done,
      -- failed. request: the item's options as JSON (never the image); image: uploaded bytes, kept only
      -- until the item ends. result: the answer's JSON; charged: 1 when its credit was charged, in the same
      -- transaction that wrote the result.
      CREATE TABLE batch_items (
        id INTEGER PRIMARY KEY,
        batch_id TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        status TEXT NOT NULL,
        request TEXT NOT NULL,
        image BLOB,
        metadata TEXT,
        result TEXT,
        error_code TEXT,
        error_message TEXT,
        charged INTEGER NOT NULL DEFAULT 0,
        finished_at INTEGER,
        UNIQUE (batch_id, idx)
      );
      CREATE INDEX batch_items_open ON batch_items(batch_id, idx) WHERE status IN ('pending', 'running');
      CREATE INDEX batch_items_running ON batch_items(status) WHERE status = 'running';
    `,
  },
  {
    version: 9,
    name: 'webhook secrets and deliveries',
    sql: `
      -- One signing secret per account. Stored as it is (not hashed): every delivery is signed with it
      -- (HMAC-SHA256), so it must be readable; it signs what alttext sends and authenticates nobody to alttext.
      CREATE TABLE webhook_secrets (
        account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        secret TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      -- One delivery per ended batch, inserted in the transaction that marks the batch 'queued', and
      -- deleted with it. An attempt counts itself and sets the time of the next one before it sends, so
      -- a kill -9 during an attempt leaves a retry scheduled. next_attempt_at is NULL once delivered or failed.
      CREATE TABLE webhook_deliveries (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        batch_id TEXT NOT NULL UNIQUE REFERENCES batches(id) ON DELETE CASCADE,
        event TEXT NOT NULL,
        url TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        last_status INTEGER,
        last_error TEXT,
        last_attempt_at INTEGER,
        next_attempt_at INTEGER,
        delivered_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_account ON webhook_deliveries(account_id, seq);
      -- The dispatcher looks for ended batches whose webhook is not yet queued, every second.
      CREATE INDEX batches_webhook_pending ON batches(id) WHERE webhook_state = 'pending';
    `,
  },
  {
    version: 10,
    name: 'text in the image',
    sql: `
      -- The text the image shows, as a structured answer gave it; NULL when none, for plain-text answers
      -- and for entries made before this column.
      ALTER TABLE alt_text_cache ADD COLUMN text_in_image TEXT;
    `,
  },
  {
    version: 11,
    name: 'plans, grants, disabled accounts and the account change log',
    sql: `
      -- monthly_credits: the plan's credits per period (NULL: ALTTEXT_FREE_CREDITS, the free plan's);
      -- disabled_at: set while an operator has disabled the account (its keys and sessions are refused).
      ALTER TABLE accounts ADD COLUMN monthly_credits INTEGER;
      ALTER TABLE accounts ADD COLUMN disabled_at INTEGER;
      -- One-off credits an operator added to this period, on top of the plan's.
      ALTER TABLE credit_usage ADD COLUMN granted INTEGER NOT NULL DEFAULT 0;
      -- What another process (alttext admin, a sqlite3 shell) changed, for the serving process to drop
      -- what it keeps in memory of that account. Written by these triggers, so no writer can forget it;
      -- the last 1000 changes are kept (a reader that fell further behind forgets everything).
      CREATE TABLE account_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id INTEGER NOT NULL,
        change TEXT NOT NULL
      );
      CREATE TRIGGER account_updated AFTER UPDATE OF plan, monthly_credits, disabled_at ON accounts BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.id, 'account');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
      CREATE TRIGGER account_deleted AFTER DELETE ON accounts BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (OLD.id, 'deleted');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
      CREATE TRIGGER key_revoked AFTER UPDATE OF revoked_at ON api_keys BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.account_id, 'keys');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
      -- A charge never touches granted: these fire for grants only.
      CREATE TRIGGER credits_granted AFTER UPDATE OF granted ON credit_usage WHEN NEW.granted IS NOT OLD.granted BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.account_id, 'credits');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
      CREATE TRIGGER credits_granted_new AFTER INSERT ON credit_usage WHEN NEW.granted <> 0 BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.account_id, 'credits');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
    `,
  },
  {
    version: 12,
    name: 'uploaded batch images waiting, per account',
    sql: `
      -- Bytes of uploaded images held by batch items (they drop theirs when they end), per account: what a
      -- new batch may add is checked against it in the create's transaction. Kept by triggers, so every
      -- path that adds or drops an image (create, done, failed, cancelled, deleted) counts.
      CREATE TABLE batch_image_bytes (
        account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        bytes INTEGER NOT NULL
      );
      INSERT INTO batch_image_bytes (account_id, bytes)
        SELECT b.account_id, sum(length(i.image)) FROM batch_items i JOIN batches b ON b.id = i.batch_id
        WHERE i.image IS NOT NULL GROUP BY b.account_id;
      ${BATCH_IMAGE_TRIGGERS}
    `,
  },
  {
    version: 13,
    name: 'ids are never reused',
    rebuildsTables: true,
    sql: `
      -- Without AUTOINCREMENT SQLite gives a deleted newest row's id to the next row. A request of a deleted
      -- account, or a batch item running when its account went, would then charge and write for a stranger.
      -- These tables are rebuilt with AUTOINCREMENT (rows, ids and everything that refers to them kept).
      CREATE TABLE accounts_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        plan TEXT NOT NULL DEFAULT 'free',
        created_at INTEGER NOT NULL,
        monthly_credits INTEGER,
        disabled_at INTEGER
      );
      INSERT INTO accounts_new (id, email, password_hash, plan, created_at, monthly_credits, disabled_at)
        SELECT id, email, password_hash, plan, created_at, monthly_credits, disabled_at FROM accounts;
      DROP TABLE accounts;
      ALTER TABLE accounts_new RENAME TO accounts;
      -- Ids of accounts deleted before this migration, as far as the change log remembers them, stay used.
      INSERT INTO sqlite_sequence (name, seq) SELECT 'accounts', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'accounts');
      UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(account_id), 0) FROM account_changes)) WHERE name = 'accounts';
      CREATE TRIGGER account_updated AFTER UPDATE OF plan, monthly_credits, disabled_at ON accounts BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.id, 'account');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
      CREATE TRIGGER account_deleted AFTER DELETE ON accounts BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (OLD.id, 'deleted');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;

      CREATE TABLE api_keys_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        prefix TEXT NOT NULL UNIQUE,
        key_hash TEXT NOT NULL UNIQUE,
        label TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER,
        last_used_at INTEGER
      );
      INSERT INTO api_keys_new (id, account_id, prefix, key_hash, label, created_at, expires_at, revoked_at, last_used_at)
        SELECT id, account_id, prefix, key_hash, label, created_at, expires_at, revoked_at, last_used_at FROM api_keys;
      DROP TABLE api_keys;
      ALTER TABLE api_keys_new RENAME TO api_keys;
      CREATE INDEX api_keys_account ON api_keys(account_id, revoked_at);
      CREATE TRIGGER key_revoked AFTER UPDATE OF revoked_at ON api_keys BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.account_id, 'keys');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;

      -- Migration 12's trigger on batches names batch_items: it goes while the table is rebuilt.
      DROP TRIGGER batch_images_deleted;
      CREATE TABLE batch_items_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        batch_id TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        status TEXT NOT NULL,
        request TEXT NOT NULL,
        image BLOB,
        metadata TEXT,
        result TEXT,
        error_code TEXT,
        error_message TEXT,
        charged INTEGER NOT NULL DEFAULT 0,
        finished_at INTEGER,
        UNIQUE (batch_id, idx)
      );
      INSERT INTO batch_items_new (id, batch_id, idx, status, request, image, metadata, result, error_code, error_message, charged, finished_at)
        SELECT id, batch_id, idx, status, request, image, metadata, result, error_code, error_message, charged, finished_at FROM batch_items;
      DROP TABLE batch_items;
      ALTER TABLE batch_items_new RENAME TO batch_items;
      CREATE INDEX batch_items_open ON batch_items(batch_id, idx) WHERE status IN ('pending', 'running');
      CREATE INDEX batch_items_running ON batch_items(status) WHERE status = 'running';
      -- The rebuilt table lost the triggers of migration 12 that count its waiting images.
      ${BATCH_IMAGE_TRIGGERS}
    `,
  },
  {
    version: 14,
    name: 'a rotated key may keep working for a while; email verification',
    sql: `
      -- When the key was rotated with a grace period (it works until its expires_at, and cannot be rotated
      -- again); NULL for a key never rotated, or rotated away at once (revoked_at says so).
      ALTER TABLE api_keys ADD COLUMN rotated_at INTEGER;
      -- A key's end moved (a grace period): another process drops what it keeps of that account's keys.
      CREATE TRIGGER key_expiry_changed AFTER UPDATE OF expires_at ON api_keys WHEN NEW.expires_at IS NOT OLD.expires_at BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.account_id, 'keys');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;

      -- When the account proved its mailbox (a mailed link or a password reset), or was made without that
      -- being asked; NULL while its key and sessions wait for the link. Accounts of before count as verified.
      ALTER TABLE accounts ADD COLUMN email_verified_at INTEGER;
      UPDATE accounts SET email_verified_at = created_at;
      CREATE TRIGGER account_verified AFTER UPDATE OF email_verified_at ON accounts WHEN NEW.email_verified_at IS NOT OLD.email_verified_at BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.id, 'account');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
      -- Mailed verification links: only the SHA-256 of the token, single use; a newer one ends the older.
      CREATE TABLE email_verifications (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      CREATE INDEX email_verifications_account ON email_verifications(account_id, created_at);
    `,
  },
  {
    version: 15,
    name: 'credit holds, and claims with a lease on batch items and webhook deliveries',
    sql: `
      -- A credit held by a generation under way: it counts as spent until it is charged (deleted in the
      -- charge's transaction) or released, or until expires_at, which its process moves on while it runs.
      -- The holds of a process that was killed lapse by themselves.
      CREATE TABLE credit_holds (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        period TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX credit_holds_account ON credit_holds(account_id, period, expires_at);
      -- A claimed ('running') item belongs to the claim_token its claim drew until lease_until, which its
      -- process moves on while it runs; after that any process may take the item over with a new token, and
      -- the old claimant's writes, fenced by its token, are refused.
      ALTER TABLE batch_items ADD COLUMN claim_token TEXT;
      ALTER TABLE batch_items ADD COLUMN lease_until INTEGER;
      -- Items claimed before this version have no lease: theirs has ended.
      UPDATE batch_items SET lease_until = 0 WHERE status = 'running';
      -- An attempt under way holds the delivery the same way: no other process attempts it until the lease ends.
      ALTER TABLE webhook_deliveries ADD COLUMN claim_token TEXT;
      ALTER TABLE webhook_deliveries ADD COLUMN lease_until INTEGER;
      -- A pending delivery is due at its next attempt's time while unclaimed, at its claim's end while claimed.
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(coalesce(lease_until, next_attempt_at)) WHERE status = 'pending';
    `,
  },
  {
    version: 16,
    name: 'long descriptions in the alt-text cache',
    sql: `
      -- The long description of a complex image, asked with long_description; NULL when none, and for
      -- entries made before this column (whose keys never carry the option).
      ALTER TABLE alt_text_cache ADD COLUMN long_description TEXT;
    `,
  },
  {
    version: 17,
    name: 'the credit hold of a batch item ends with its claim',
    sql: `
      -- The batch item whose claim took the hold (NULL for a single call): when the item is taken over
      -- after its lease ended, the old claim's hold ends with it, so the new claim can hold the credit.
      ALTER TABLE credit_holds ADD COLUMN batch_item_id INTEGER;
      CREATE INDEX credit_holds_batch_item ON credit_holds(batch_item_id) WHERE batch_item_id IS NOT NULL;
    `,
  },
  {
    version: 18,
    name: 'organisations, members, invitations, the activity log and the review queue',
    sql: `
      -- An organisation is a billing account (kind 'organisation', as on GitHub): plans, credits, holds and
      -- the change feed work on it unchanged. A person's account is its own personal organisation.
      -- An organisation's row has no mailbox: its email is 'org:' || org_public_id, which no sign-in accepts.
      ALTER TABLE accounts ADD COLUMN kind TEXT NOT NULL DEFAULT 'person' CHECK (kind IN ('person', 'organisation'));
      ALTER TABLE accounts ADD COLUMN org_public_id TEXT;
      ALTER TABLE accounts ADD COLUMN org_name TEXT;
      UPDATE accounts SET org_public_id = 'org_' || lower(hex(randomblob(12)));
      CREATE UNIQUE INDEX accounts_org_public_id ON accounts(org_public_id);
      -- /metrics counts people, not organisations, from this index alone.
      CREATE INDEX accounts_kind ON accounts(kind);
      CREATE TABLE org_members (
        org_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'reviewer', 'author')),
        joined_at INTEGER NOT NULL,
        PRIMARY KEY (org_id, account_id)
      ) WITHOUT ROWID;
      CREATE INDEX org_members_account ON org_members(account_id);
      INSERT INTO org_members (org_id, account_id, role, joined_at) SELECT id, id, 'owner', created_at FROM accounts;
      -- A member's role changed or the member left: its cached keys and sessions are dropped on every replica.
      CREATE TRIGGER org_member_role_changed AFTER UPDATE OF role ON org_members BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (NEW.account_id, 'keys');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
      CREATE TRIGGER org_member_removed AFTER DELETE ON org_members BEGIN
        INSERT INTO account_changes (account_id, change) VALUES (OLD.account_id, 'keys');
        DELETE FROM account_changes WHERE seq <= (SELECT max(seq) FROM account_changes) - 1000;
      END;
      CREATE TABLE org_invitations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        org_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        email TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'reviewer', 'author')),
        token_hash TEXT NOT NULL UNIQUE,
        invited_by INTEGER REFERENCES accounts(id) ON DELETE SET NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      CREATE INDEX org_invitations_org ON org_invitations(org_id, email);
      CREATE INDEX org_invitations_email ON org_invitations(email) WHERE used_at IS NULL;
      -- The organisation a key spends for and acts in; a key made before this version is its maker's personal one.
      ALTER TABLE api_keys ADD COLUMN org_id INTEGER REFERENCES accounts(id) ON DELETE CASCADE;
      UPDATE api_keys SET org_id = account_id;
      CREATE INDEX api_keys_org ON api_keys(org_id, revoked_at);
      -- Append-only: no statement of the service updates or deletes a row but the organisation's deletion.
      CREATE TABLE org_activity (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        org_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        at INTEGER NOT NULL,
        actor_id INTEGER REFERENCES accounts(id) ON DELETE SET NULL,
        actor_email TEXT,
        action TEXT NOT NULL,
        subject TEXT,
        detail TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX org_activity_org ON org_activity(org_id, seq);
      CREATE TABLE suggestions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        public_id TEXT NOT NULL UNIQUE,
        org_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'edited', 'rejected')),
        target_kind TEXT NOT NULL,
        target_ref TEXT NOT NULL,
        target_site TEXT,
        target_fingerprint TEXT,
        current_alt TEXT,
        proposed_alt TEXT NOT NULL,
        language TEXT NOT NULL,
        image_url TEXT,
        image_format TEXT,
        image_width INTEGER,
        image_height INTEGER,
        thumbnail BLOB,
        wcag_compliant INTEGER,
        wcag_issues TEXT NOT NULL DEFAULT '[]',
        verdict TEXT,
        decorative INTEGER NOT NULL DEFAULT 0,
        batch_id TEXT,
        created_by INTEGER REFERENCES accounts(id) ON DELETE SET NULL,
        created_by_email TEXT,
        created_at INTEGER NOT NULL,
        decided_by INTEGER REFERENCES accounts(id) ON DELETE SET NULL,
        decided_by_email TEXT,
        decided_at INTEGER,
        final_alt TEXT,
        reason TEXT
      );
      -- The queue's filters, newest first: by status, by target kind and status, by author.
      CREATE INDEX suggestions_org ON suggestions(org_id, id);
      CREATE INDEX suggestions_org_status ON suggestions(org_id, status, id);
      CREATE INDEX suggestions_org_kind ON suggestions(org_id, target_kind, status, id);
      CREATE INDEX suggestions_org_author ON suggestions(org_id, created_by, id);
    `,
  },
  {
    version: 19,
    name: 'organisation webhooks: deliveries of decided suggestions',
    sql: `
      -- Where an organisation's suggestion.decided events go (one URL each); its signing secret is its
      -- account's webhook_secrets row, as for batch webhooks.
      CREATE TABLE org_webhooks (
        org_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      -- A delivery is of an ended batch (its body built at each attempt) or carries its own payload (the
      -- event as queued, in the decision's transaction): batch_id becomes nullable, still unique and deleted
      -- with its batch. Rebuilt, since SQLite cannot drop a NOT NULL; no table refers to this one.
      CREATE TABLE webhook_deliveries_new (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        batch_id TEXT UNIQUE REFERENCES batches(id) ON DELETE CASCADE,
        event TEXT NOT NULL,
        url TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        last_status INTEGER,
        last_error TEXT,
        last_attempt_at INTEGER,
        next_attempt_at INTEGER,
        delivered_at INTEGER,
        created_at INTEGER NOT NULL,
        claim_token TEXT,
        lease_until INTEGER,
        -- The decided suggestion's public id (no reference: the log outlives a reopen, and goes with the organisation).
        suggestion_id TEXT,
        payload TEXT,
        CHECK (batch_id IS NOT NULL OR payload IS NOT NULL)
      );
      INSERT INTO webhook_deliveries_new (seq, id, account_id, batch_id, event, url, status, attempts, last_status, last_error, last_attempt_at,
          next_attempt_at, delivered_at, created_at, claim_token, lease_until)
        SELECT seq, id, account_id, batch_id, event, url, status, attempts, last_status, last_error, last_attempt_at,
          next_attempt_at, delivered_at, created_at, claim_token, lease_until FROM webhook_deliveries;
      DROP TABLE webhook_deliveries;
      ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(coalesce(lease_until, next_attempt_at)) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_account ON webhook_deliveries(account_id, seq);
    `,
  },
  {
    version: 20,
    name: 'review batches: each answer becomes a suggestion',
    sql: `
      -- POST /api/batches {review: true}: each item that succeeds becomes a pending suggestion of the batch's
      -- organisation; the item names it (NULL before it is made, and for batches without review).
      ALTER TABLE batches ADD COLUMN review INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE batch_items ADD COLUMN suggestion_id TEXT;
    `,
  },
  {
    version: 21,
    name: 'animations in the alt-text cache',
    sql: `
      -- 1 when the image is an animation (the model saw a grid of its key frames); NULL in entries made
      -- before this column, which are answered as not animated.
      ALTER TABLE alt_text_cache ADD COLUMN animated INTEGER;
    `,
  },
]

/** The newest schema version this binary knows: the one its migrations lead to. */
export const latestSchemaVersion = (): number => Math.max(...MIGRATIONS.map((m) => m.version))

/**
 * Applies pending migrations up to `upTo` (default: all), each in its own transaction with its version
 * record. A lower `upTo` builds an older schema, to compare a backup of that version with.
 */
export function migrate(db: Database, busyWaitMs = DEFAULT_BUSY_WAIT_MS, path = db.filename, upTo = latestSchemaVersion()): number[] {
  busyRetrySync(
    () => db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)'),
    busyWaitMs,
    path,
  )
  const applied = new Set(
    db
      .query<{ version: number }, []>('SELECT version FROM schema_migrations')
      .all()
      .map((r) => r.version),
  )
  const latest = Math.max(0, ...applied)
  const known = latestSchemaVersion()
  if (latest > known) throw new Error(`database schema version ${latest} is newer than this binary knows (${known}); upgrade alttext`)
  const done: number[] = []
  // In version order, whatever the order of the list.
  for (const migration of MIGRATIONS.toSorted((a, b) => a.version - b.version)) {
    if (applied.has(migration.version) || migration.version > upTo) continue
    const apply = db.transaction(() => {
      db.exec(migration.sql)
      if (migration.rebuildsTables) {
        const broken = db.query<{ table: string; parent: string }, []>('PRAGMA foreign_key_check').all()
        if (broken.length > 0)
          throw new Error(`migration ${migration.version} would leave rows of ${broken[0]!.table} without their ${broken[0]!.parent}; nothing was changed`)
      }
      db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, Date.now())
    })
    if (migration.rebuildsTables) db.exec('PRAGMA foreign_keys = OFF')
    try {
      busyRetrySync(() => apply.immediate(), busyWaitMs, path)
    } finally {
      if (migration.rebuildsTables) db.exec('PRAGMA foreign_keys = ON')
    }
    done.push(migration.version)
  }
  return done
}
