// The PostgreSQL schema, versioned beside SQLite's (../migrations.ts) with the same numbers: version N
// here brings the same tables and behaviour as version N there, so a database of either engine says what
// it holds by one number. Append only. Where SQLite's change makes no sense here, the version is a
// recorded no-op that says why.
//
// Types: ids are identity columns (a sequence never hands a value out twice, so ids are never reused,
// which SQLite needed AUTOINCREMENT and a rebuild for); Unix-ms times, ids and credit counts are bigint;
// SQLite's 0/1 flags are boolean, its BLOBs bytea. JSON stays text, kept exactly as written.
//
// Account changes reach every replica through NOTIFY on the channel `alttext_account_changes`, sent by
// triggers in the transaction that makes the change (delivered on commit, never on rollback); the
// payload is `<account id>:<kind>`. SQLite's account_changes table has no counterpart here.
import type { SQL } from 'bun'

export type PostgresMigration = { version: number; name: string; sql: string }

/** The channel the account-change triggers notify. */
export const ACCOUNT_CHANGES_CHANNEL = 'alttext_account_changes'

/** Held while migrating, so replicas that start together migrate an empty database once. ('altt' in ASCII.) */
const MIGRATION_LOCK = 0x616c7474

export const POSTGRES_MIGRATIONS: PostgresMigration[] = [
  {
    version: 1,
    name: 'accounts, keys, reset tokens, credits, activity',
    sql: `
      CREATE TABLE accounts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        email text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        plan text NOT NULL DEFAULT 'free',
        created_at bigint NOT NULL
      );
      CREATE TABLE api_keys (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        prefix text NOT NULL UNIQUE,
        key_hash text NOT NULL UNIQUE,
        label text,
        created_at bigint NOT NULL,
        expires_at bigint,
        revoked_at bigint,
        last_used_at bigint
      );
      CREATE INDEX api_keys_account ON api_keys(account_id, revoked_at);
      CREATE TABLE reset_tokens (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      CREATE INDEX reset_tokens_account ON reset_tokens(account_id);
      CREATE TABLE credit_usage (
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        period text NOT NULL,
        used bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, period)
      );
      CREATE TABLE api_calls (
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        day text NOT NULL,
        count bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, day)
      );
    `,
  },
  {
    version: 2,
    name: 'credit holds and the alt-text cache',
    sql: `
      CREATE TABLE credit_holds (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        period text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE TABLE alt_text_cache (
        cache_key text PRIMARY KEY,
        alt_text text NOT NULL,
        wcag_compliant boolean NOT NULL,
        wcag_issues text NOT NULL,
        language text NOT NULL,
        model text NOT NULL,
        width integer NOT NULL,
        height integer NOT NULL,
        format text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX alt_text_cache_expiry ON alt_text_cache(expires_at);
    `,
  },
  {
    version: 3,
    name: 'credit holds live in memory',
    sql: 'DROP TABLE credit_holds;',
  },
  {
    version: 4,
    name: 'readiness write probe and the forgot-password decoy',
    sql: `
      CREATE TABLE health_probe (
        id integer PRIMARY KEY CHECK (id = 1),
        checked_at bigint NOT NULL
      );
      INSERT INTO health_probe (id, checked_at) VALUES (1, 0);
      CREATE TABLE reset_token_decoys (
        id integer PRIMARY KEY CHECK (id = 1),
        token_hash text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      INSERT INTO reset_token_decoys (id, token_hash, created_at, expires_at) VALUES (1, '', 0, 0);
    `,
  },
  {
    version: 5,
    name: 'browser sessions',
    sql: `
      CREATE TABLE sessions (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        created_at bigint NOT NULL,
        last_seen_at bigint NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX sessions_account ON sessions(account_id);
    `,
  },
  {
    version: 6,
    name: 'daily usage counts and the generation history',
    sql: `
      CREATE TABLE usage_daily (
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        day text NOT NULL,
        generations bigint NOT NULL DEFAULT 0,
        cached bigint NOT NULL DEFAULT 0,
        failed bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, day)
      );
      -- seq: the order of insertion, which SQLite reads from its rowid (records of one millisecond).
      CREATE TABLE generation_history (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        created_at bigint NOT NULL,
        source text NOT NULL,
        format text NOT NULL,
        bytes bigint NOT NULL,
        width integer NOT NULL,
        height integer NOT NULL,
        alt_text text NOT NULL,
        decorative boolean NOT NULL,
        language text NOT NULL,
        style text NOT NULL,
        max_length integer NOT NULL,
        cached boolean NOT NULL,
        character_count integer NOT NULL
      );
      CREATE INDEX generation_history_account ON generation_history(account_id, created_at, seq);
    `,
  },
  {
    version: 7,
    name: 'decorative answers in the alt-text cache',
    sql: 'ALTER TABLE alt_text_cache ADD COLUMN decorative_reason text;',
  },
  {
    version: 8,
    name: 'batches',
    sql: `
      CREATE TABLE batches (
        id text PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        status text NOT NULL DEFAULT 'queued',
        total integer NOT NULL,
        succeeded integer NOT NULL DEFAULT 0,
        failed integer NOT NULL DEFAULT 0,
        created_at bigint NOT NULL,
        completed_at bigint,
        webhook_url text,
        webhook_state text,
        idempotency_key text,
        request_hash text
      );
      CREATE INDEX batches_account ON batches(account_id, created_at, id);
      CREATE UNIQUE INDEX batches_idempotency ON batches(account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX batches_ended ON batches(completed_at) WHERE completed_at IS NOT NULL;
      CREATE TABLE batch_items (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        batch_id text NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        idx integer NOT NULL,
        status text NOT NULL,
        request text NOT NULL,
        image bytea,
        metadata text,
        result text,
        error_code text,
        error_message text,
        charged boolean NOT NULL DEFAULT false,
        finished_at bigint,
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
      CREATE TABLE webhook_secrets (
        account_id bigint PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        secret text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE TABLE webhook_deliveries (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        batch_id text NOT NULL UNIQUE REFERENCES batches(id) ON DELETE CASCADE,
        event text NOT NULL,
        url text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        last_status integer,
        last_error text,
        last_attempt_at bigint,
        next_attempt_at bigint,
        delivered_at bigint,
        created_at bigint NOT NULL
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_account ON webhook_deliveries(account_id, seq);
      CREATE INDEX batches_webhook_pending ON batches(id) WHERE webhook_state = 'pending';
    `,
  },
  {
    version: 10,
    name: 'text in the image',
    sql: 'ALTER TABLE alt_text_cache ADD COLUMN text_in_image text;',
  },
  {
    version: 11,
    name: 'plans, grants, disabled accounts and the account change log',
    sql: `
      ALTER TABLE accounts ADD COLUMN monthly_credits bigint;
      ALTER TABLE accounts ADD COLUMN disabled_at bigint;
      ALTER TABLE credit_usage ADD COLUMN granted bigint NOT NULL DEFAULT 0;
      -- One function for every change trigger: the kind is the trigger's argument, the account is the
      -- row's id (accounts) or account_id (the others).
      CREATE FUNCTION alttext_account_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        changed bigint;
      BEGIN
        IF TG_TABLE_NAME = 'accounts' THEN
          changed := CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END;
        ELSE
          changed := CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END;
        END IF;
        PERFORM pg_notify('${ACCOUNT_CHANGES_CHANNEL}', changed || ':' || TG_ARGV[0]);
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER account_updated AFTER UPDATE OF plan, monthly_credits, disabled_at ON accounts
        FOR EACH ROW EXECUTE FUNCTION alttext_account_changed('account');
      CREATE TRIGGER account_deleted AFTER DELETE ON accounts
        FOR EACH ROW EXECUTE FUNCTION alttext_account_changed('deleted');
      CREATE TRIGGER key_revoked AFTER UPDATE OF revoked_at ON api_keys
        FOR EACH ROW EXECUTE FUNCTION alttext_account_changed('keys');
      -- A charge never touches granted: these fire for grants only.
      CREATE TRIGGER credits_granted AFTER UPDATE OF granted ON credit_usage
        FOR EACH ROW WHEN (NEW.granted IS DISTINCT FROM OLD.granted) EXECUTE FUNCTION alttext_account_changed('credits');
      CREATE TRIGGER credits_granted_new AFTER INSERT ON credit_usage
        FOR EACH ROW WHEN (NEW.granted <> 0) EXECUTE FUNCTION alttext_account_changed('credits');
    `,
  },
  {
    version: 12,
    name: 'uploaded batch images waiting, per account',
    sql: `
      CREATE TABLE batch_image_bytes (
        account_id bigint PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        bytes bigint NOT NULL
      );
      INSERT INTO batch_image_bytes (account_id, bytes)
        SELECT b.account_id, sum(octet_length(i.image)) FROM batch_items i JOIN batches b ON b.id = i.batch_id
        WHERE i.image IS NOT NULL GROUP BY b.account_id;
      -- Kept by triggers, so every path that adds or drops an image counts.
      CREATE FUNCTION alttext_batch_image_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        delta bigint;
        item_batch text;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          delta := coalesce(octet_length(NEW.image), 0);
          item_batch := NEW.batch_id;
        ELSIF TG_OP = 'UPDATE' THEN
          delta := coalesce(octet_length(NEW.image), 0) - coalesce(octet_length(OLD.image), 0);
          item_batch := NEW.batch_id;
        ELSE
          delta := -coalesce(octet_length(OLD.image), 0);
          item_batch := OLD.batch_id;
        END IF;
        IF delta <> 0 THEN
          INSERT INTO batch_image_bytes (account_id, bytes) SELECT account_id, delta FROM batches WHERE id = item_batch
            ON CONFLICT (account_id) DO UPDATE SET bytes = batch_image_bytes.bytes + excluded.bytes;
        END IF;
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER batch_image_added AFTER INSERT ON batch_items
        FOR EACH ROW WHEN (NEW.image IS NOT NULL) EXECUTE FUNCTION alttext_batch_image_bytes();
      CREATE TRIGGER batch_image_changed AFTER UPDATE OF image ON batch_items
        FOR EACH ROW WHEN (OLD.image IS DISTINCT FROM NEW.image) EXECUTE FUNCTION alttext_batch_image_bytes();
      CREATE TRIGGER batch_image_deleted AFTER DELETE ON batch_items
        FOR EACH ROW WHEN (OLD.image IS NOT NULL) EXECUTE FUNCTION alttext_batch_image_bytes();
      -- A batch deleted with its items (ON DELETE CASCADE) is gone before their triggers run: its items
      -- drop their images first, while it is still there to name the account.
      CREATE FUNCTION alttext_batch_images_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE batch_items SET image = NULL WHERE batch_id = OLD.id AND image IS NOT NULL;
        RETURN OLD;
      END
      $$;
      CREATE TRIGGER batch_images_deleted BEFORE DELETE ON batches
        FOR EACH ROW EXECUTE FUNCTION alttext_batch_images_deleted();
    `,
  },
  {
    version: 13,
    name: 'ids are never reused',
    // SQLite rebuilt its tables with AUTOINCREMENT here. Identity columns never hand out a value twice.
    sql: '',
  },
  {
    version: 14,
    name: 'a rotated key may keep working for a while; email verification',
    sql: `
      ALTER TABLE api_keys ADD COLUMN rotated_at bigint;
      CREATE TRIGGER key_expiry_changed AFTER UPDATE OF expires_at ON api_keys
        FOR EACH ROW WHEN (NEW.expires_at IS DISTINCT FROM OLD.expires_at) EXECUTE FUNCTION alttext_account_changed('keys');
      ALTER TABLE accounts ADD COLUMN email_verified_at bigint;
      UPDATE accounts SET email_verified_at = created_at;
      CREATE TRIGGER account_verified AFTER UPDATE OF email_verified_at ON accounts
        FOR EACH ROW WHEN (NEW.email_verified_at IS DISTINCT FROM OLD.email_verified_at) EXECUTE FUNCTION alttext_account_changed('account');
      CREATE TABLE email_verifications (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      CREATE INDEX email_verifications_account ON email_verifications(account_id, created_at);
    `,
  },
  {
    version: 15,
    name: 'credit holds, and claims with a lease on batch items and webhook deliveries',
    sql: `
      -- A credit held by a generation under way counts as spent until it is charged (deleted in the
      -- charge's transaction), released, or until expires_at, which its replica moves on while it runs.
      CREATE TABLE credit_holds (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        period text NOT NULL,
        expires_at bigint NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX credit_holds_account ON credit_holds(account_id, period, expires_at);
      -- A running item belongs to its claim_token until lease_until; then any replica may take it over.
      ALTER TABLE batch_items ADD COLUMN claim_token text;
      ALTER TABLE batch_items ADD COLUMN lease_until bigint;
      -- Items claimed before this version have no lease: theirs has ended.
      UPDATE batch_items SET lease_until = 0 WHERE status = 'running';
      ALTER TABLE webhook_deliveries ADD COLUMN claim_token text;
      ALTER TABLE webhook_deliveries ADD COLUMN lease_until bigint;
      -- A pending delivery is due at its next attempt's time while unclaimed, at its claim's end while claimed.
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries((coalesce(lease_until, next_attempt_at))) WHERE status = 'pending';
    `,
  },
  {
    version: 16,
    name: 'long descriptions in the alt-text cache',
    sql: 'ALTER TABLE alt_text_cache ADD COLUMN long_description text;',
  },
  {
    version: 17,
    name: 'the credit hold of a batch item ends with its claim',
    sql: `
      -- When the item is taken over after its lease ended, the old claim's hold ends with it.
      ALTER TABLE credit_holds ADD COLUMN batch_item_id bigint;
      CREATE INDEX credit_holds_batch_item ON credit_holds(batch_item_id) WHERE batch_item_id IS NOT NULL;
    `,
  },
  {
    version: 18,
    name: 'organisations, members, invitations, the activity log and the review queue',
    sql: `
      -- An organisation is a billing account (kind 'organisation'); a person's account is its own personal one.
      -- An organisation's row has no mailbox: its email is 'org:' || org_public_id, which no sign-in accepts.
      ALTER TABLE accounts ADD COLUMN kind text NOT NULL DEFAULT 'person' CHECK (kind IN ('person', 'organisation'));
      ALTER TABLE accounts ADD COLUMN org_public_id text;
      ALTER TABLE accounts ADD COLUMN org_name text;
      -- 24 hex digits, as SQLite's randomblob(12) gives (gen_random_uuid needs no extension).
      UPDATE accounts SET org_public_id = 'org_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24);
      CREATE UNIQUE INDEX accounts_org_public_id ON accounts(org_public_id);
      -- /metrics counts people, not organisations, from this index alone.
      CREATE INDEX accounts_kind ON accounts(kind);
      CREATE TABLE org_members (
        org_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'reviewer', 'author')),
        joined_at bigint NOT NULL,
        PRIMARY KEY (org_id, account_id)
      );
      CREATE INDEX org_members_account ON org_members(account_id);
      INSERT INTO org_members (org_id, account_id, role, joined_at) SELECT id, id, 'owner', created_at FROM accounts;
      -- A member's role changed or the member left: every replica forgets its cached keys, as after a revocation.
      CREATE TRIGGER org_member_role_changed AFTER UPDATE OF role ON org_members
        FOR EACH ROW WHEN (NEW.role IS DISTINCT FROM OLD.role) EXECUTE FUNCTION alttext_account_changed('keys');
      -- A member deleted with its account ('deleted' says more) is not announced again after it.
      CREATE FUNCTION alttext_org_member_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM accounts WHERE id = OLD.account_id) THEN
          PERFORM pg_notify('${ACCOUNT_CHANGES_CHANNEL}', OLD.account_id || ':keys');
        END IF;
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER org_member_removed AFTER DELETE ON org_members
        FOR EACH ROW EXECUTE FUNCTION alttext_org_member_removed();
      CREATE TABLE org_invitations (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        org_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'reviewer', 'author')),
        token_hash text NOT NULL UNIQUE,
        invited_by bigint REFERENCES accounts(id) ON DELETE SET NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      CREATE INDEX org_invitations_org ON org_invitations(org_id, email);
      CREATE INDEX org_invitations_email ON org_invitations(email) WHERE used_at IS NULL;
      -- The organisation a key spends for and acts in; a key made before this version is its maker's personal one.
      ALTER TABLE api_keys ADD COLUMN org_id bigint REFERENCES accounts(id) ON DELETE CASCADE;
      UPDATE api_keys SET org_id = account_id;
      CREATE INDEX api_keys_org ON api_keys(org_id, revoked_at);
      -- Append-only: no statement of the service updates or deletes a row but the organisation's deletion.
      CREATE TABLE org_activity (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        org_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        at bigint NOT NULL,
        actor_id bigint REFERENCES accounts(id) ON DELETE SET NULL,
        actor_email text,
        action text NOT NULL,
        subject text,
        detail text NOT NULL DEFAULT '{}'
      );
      CREATE INDEX org_activity_org ON org_activity(org_id, seq);
      CREATE TABLE suggestions (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        public_id text NOT NULL UNIQUE,
        org_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        status text NOT NULL CHECK (status IN ('pending', 'accepted', 'edited', 'rejected')),
        target_kind text NOT NULL,
        target_ref text NOT NULL,
        target_site text,
        target_fingerprint text,
        current_alt text,
        proposed_alt text NOT NULL,
        language text NOT NULL,
        image_url text,
        image_format text,
        image_width integer,
        image_height integer,
        thumbnail bytea,
        wcag_compliant boolean,
        wcag_issues text NOT NULL DEFAULT '[]',
        verdict text,
        decorative boolean NOT NULL DEFAULT false,
        batch_id text,
        created_by bigint REFERENCES accounts(id) ON DELETE SET NULL,
        created_by_email text,
        created_at bigint NOT NULL,
        decided_by bigint REFERENCES accounts(id) ON DELETE SET NULL,
        decided_by_email text,
        decided_at bigint,
        final_alt text,
        reason text
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
      -- Where an organisation's suggestion.decided events go; its signing secret is its account's webhook_secrets row.
      CREATE TABLE org_webhooks (
        org_id bigint PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        url text NOT NULL,
        created_at bigint NOT NULL
      );
      -- A delivery is of an ended batch, or carries its own payload (text, not jsonb: the bytes sent are the
      -- bytes queued, in key order), queued in the decision's transaction. batch_id stays unique (NULLs are distinct).
      ALTER TABLE webhook_deliveries ALTER COLUMN batch_id DROP NOT NULL;
      ALTER TABLE webhook_deliveries ADD COLUMN suggestion_id text;
      ALTER TABLE webhook_deliveries ADD COLUMN payload text;
      ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_subject CHECK (batch_id IS NOT NULL OR payload IS NOT NULL);
    `,
  },
  {
    version: 20,
    name: 'review batches: each answer becomes a suggestion',
    sql: `
      -- POST /api/batches {review: true}: each item that succeeds becomes a pending suggestion of the batch's organisation.
      ALTER TABLE batches ADD COLUMN review boolean NOT NULL DEFAULT false;
      ALTER TABLE batch_items ADD COLUMN suggestion_id text;
    `,
  },
  {
    version: 21,
    name: 'animations in the alt-text cache',
    sql: 'ALTER TABLE alt_text_cache ADD COLUMN animated boolean;',
  },
]

/** The newest schema version this binary knows. */
export const latestPostgresVersion = (): number => Math.max(...POSTGRES_MIGRATIONS.map((m) => m.version))

/**
 * Applies the pending migrations, each in its own transaction with its version record, while holding an
 * advisory lock: a replica that starts meanwhile waits, then finds them applied. A database whose schema
 * is newer than this binary is refused. Returns the versions applied.
 */
export async function migratePostgres(sql: SQL, where: string, upTo = latestPostgresVersion()): Promise<number[]> {
  const connection = await sql.reserve()
  try {
    // A replica waits here while another migrates, and a migration may rewrite a large table: neither is
    // bounded by the pool's lock and statement timeouts (connection.ts); the session gets them back after.
    await connection`SET lock_timeout = 0`
    await connection`SET statement_timeout = 0`
    await connection`SELECT pg_advisory_lock(${MIGRATION_LOCK})`
    try {
      await connection`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`
      const applied = new Set(((await connection`SELECT version FROM schema_migrations`) as { version: number }[]).map((r) => r.version))
      const latest = Math.max(0, ...applied)
      const known = latestPostgresVersion()
      if (latest > known) throw new Error(`the database ${where} has schema version ${latest}, newer than this binary knows (${known}); upgrade alttext`)
      const done: number[] = []
      for (const migration of POSTGRES_MIGRATIONS.toSorted((a, b) => a.version - b.version)) {
        if (applied.has(migration.version) || migration.version > upTo) continue
        await connection.begin(async (tx) => {
          if (migration.sql.trim() !== '') await tx.unsafe(migration.sql)
          await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${migration.version}, ${migration.name}, ${Date.now()})`
        })
        done.push(migration.version)
      }
      return done
    } finally {
      await connection`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`
    }
  } finally {
    await connection`RESET lock_timeout`.catch(() => {})
    await connection`RESET statement_timeout`.catch(() => {})
    await connection.release()
  }
}
