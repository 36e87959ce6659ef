// The storage contract, the same for every engine (SQLite in sqlite/, PostgreSQL in postgres/).
// Operations, not tables: each one that must be atomic is one call, so a second database is a new
// implementation of these interfaces and nothing else changes. Times are Unix ms. A write that cannot get
// the database within its bounded wait rejects with StoreBusyError (errors.ts); no HTTP in here.
import type { AccountStore, EmailVerificationStore, ResetTokenStore } from './accounts'
import type { ActivityStore } from './activity'
import type { AccountChangeFeed, AdminStore, CountsStore } from './admin'
import type { BatchStore } from './batches'
import type { AltTextCacheStore } from './cache'
import type { CreditStore } from './credits'
import type { HistoryStore } from './history'
import type { KeyStore } from './keys'
import type { OrgStore } from './orgs'
import type { SessionStore } from './sessions'
import type { SuggestionStore } from './suggestions'
import type { WebhookStore } from './webhooks'

export interface Store {
  accounts: AccountStore
  keys: KeyStore
  resetTokens: ResetTokenStore
  verifications: EmailVerificationStore
  credits: CreditStore
  activity: ActivityStore
  cache: AltTextCacheStore
  sessions: SessionStore
  history: HistoryStore
  batches: BatchStore
  webhooks: WebhookStore
  /** Organisations, members, invitations and each one's activity log. */
  orgs: OrgStore
  /** The review queue. */
  suggestions: SuggestionStore
  counts: CountsStore
  /** The operator's changes (alttext admin). */
  admin: AdminStore
  /** Account changes written by any process, for the serving one to drop what it keeps in memory. */
  changes: AccountChangeFeed
  /** The schema once opened and the migrations this opening applied, for the start-up log (absent in test doubles). */
  schema?: { version: number; applied: number[] }
  /** Readiness: one small write that really commits (a full disk, a damaged page or a held lock fail it). */
  probe(): Promise<void>
  /** Closes the database (and releases SQLite's one-process-per-file lock); PostgreSQL's pool closes asynchronously. */
  close(): void | Promise<void>
}
