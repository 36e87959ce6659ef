// Rows as the store's records, one mapping for both engines. What differs between them is normalised
// here: PostgreSQL hands bigint columns out as strings (connection.ts), SQLite booleans are 0 and 1.
import type {
  AccountOverview,
  AccountRecord,
  BatchRecord,
  BatchStatus,
  CachedAltText,
  DeliveryRecord,
  DeliveryStatus,
  HistoryRecord,
  ItemRecord,
  ItemStatus,
  KeyRecord,
  SessionRecord,
  WebhookEvent,
} from '../contract'
import type { ActivityAction, ActivityEntry, Actor, InvitationRecord, MemberRecord, Membership, OrgRecord, Role } from '../contract/orgs'
import type { NewSuggestion, SuggestionRecord, SuggestionStatus } from '../contract/suggestions'

/** A row as either engine returns it: column name → value. */
export type Row = Record<string, unknown>

/** A bigint column's value as a number (PostgreSQL sends it as a string; SQLite already as a number). */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value)
}

export function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value)
}

/** A boolean column: PostgreSQL's boolean, or SQLite's 0 and 1. */
export const bool = (value: unknown): boolean => value === true || value === 1 || value === 1n

export const boolOrNull = (value: unknown): boolean | null => (value === null || value === undefined ? null : bool(value))

/** A JSON column: text in both engines (PostgreSQL keeps JSON as written), already parsed if a driver did. */
const json = <T>(value: unknown, fallback: T): T =>
  value === null || value === undefined ? fallback : typeof value === 'string' ? (JSON.parse(value) as T) : (value as T)

export const ACCOUNT_COLUMNS = 'id, email, password_hash, plan, monthly_credits, disabled_at, created_at, email_verified_at'

/** The account's columns in a join (`accounts a`), prefixed `a_` so they cannot clash with the other table's. */
export const ACCOUNT_JOIN_COLUMNS =
  'a.id AS a_id, a.email AS a_email, a.password_hash AS a_password_hash, a.plan AS a_plan, a.monthly_credits AS a_monthly_credits, a.disabled_at AS a_disabled_at, a.created_at AS a_created_at, a.email_verified_at AS a_email_verified_at'

/** An account from its row, or from a join's columns prefixed `a_`. */
export const toAccount = (r: Row, prefix = ''): AccountRecord => ({
  id: num(r[`${prefix}id`]),
  email: r[`${prefix}email`] as string,
  passwordHash: r[`${prefix}password_hash`] as string,
  plan: r[`${prefix}plan`] as string,
  monthlyCredits: numOrNull(r[`${prefix}monthly_credits`]),
  disabledAt: numOrNull(r[`${prefix}disabled_at`]),
  createdAt: num(r[`${prefix}created_at`]),
  emailVerifiedAt: numOrNull(r[`${prefix}email_verified_at`]),
})

/** An account as the operator lists it, from its row with `active_keys` and `last_active` (0: never used). */
export const toOverview = (r: Row): AccountOverview => {
  const lastActive = num(r.last_active)
  return { account: toAccount(r), activeKeys: num(r.active_keys), lastActiveAt: lastActive > 0 ? lastActive : null }
}

export const KEY_COLUMNS = 'id, account_id, org_id, prefix, label, created_at, expires_at, revoked_at, last_used_at'

/** The key's columns in a join (`api_keys k`), unprefixed: toKey reads them as they are. */
export const KEY_JOIN_COLUMNS = 'k.id, k.account_id, k.org_id, k.prefix, k.label, k.created_at, k.expires_at, k.revoked_at, k.last_used_at'

export const toKey = (r: Row): KeyRecord => ({
  id: num(r.id),
  accountId: num(r.account_id),
  orgId: num(r.org_id),
  prefix: r.prefix as string,
  label: r.label as string | null,
  createdAt: num(r.created_at),
  expiresAt: numOrNull(r.expires_at),
  revokedAt: numOrNull(r.revoked_at),
  lastUsedAt: numOrNull(r.last_used_at),
})

export const SESSION_COLUMNS = 'id, account_id, created_at, last_seen_at, expires_at'

export const toSession = (r: Row): SessionRecord => ({
  id: num(r.id),
  accountId: num(r.account_id),
  createdAt: num(r.created_at),
  lastSeenAt: num(r.last_seen_at),
  expiresAt: num(r.expires_at),
})

/** An alt-text cache row (`SELECT *`) as its entry. */
export const toCachedAltText = (row: Row): CachedAltText => ({
  altText: row.alt_text as string,
  wcagCompliant: bool(row.wcag_compliant),
  wcagIssues: JSON.parse(row.wcag_issues as string) as string[],
  language: row.language as string,
  model: row.model as string,
  width: num(row.width),
  height: num(row.height),
  format: row.format as CachedAltText['format'],
  decorativeReason: row.decorative_reason as string | null,
  textInImage: row.text_in_image as string | null,
  longDescription: row.long_description as string | null,
  animated: row.animated == null ? null : bool(row.animated),
})

export const BATCH_COLUMNS = 'id, account_id, status, total, succeeded, failed, created_at, completed_at, webhook_url, webhook_state, review'

export const toBatch = (r: Row): BatchRecord => ({
  id: r.id as string,
  accountId: num(r.account_id),
  status: r.status as BatchStatus,
  total: num(r.total),
  succeeded: num(r.succeeded),
  failed: num(r.failed),
  createdAt: num(r.created_at),
  completedAt: numOrNull(r.completed_at),
  webhookUrl: r.webhook_url as string | null,
  webhookState: r.webhook_state as string | null,
  review: bool(r.review),
})

/** A batch item's row (`idx`, `status`, `result`, …) as the client sees it. */
export const toItem = (r: Row): ItemRecord => ({
  index: num(r.idx),
  status: r.status as ItemStatus,
  result: r.result as string | null,
  errorCode: r.error_code as string | null,
  errorMessage: r.error_message as string | null,
  metadata: r.metadata as string | null,
  charged: bool(r.charged),
  suggestionId: (r.suggestion_id as string | null) ?? null,
})

export const toHistoryRecord = (r: Row): HistoryRecord => ({
  id: r.id as string,
  accountId: num(r.account_id),
  createdAt: num(r.created_at),
  source: r.source as HistoryRecord['source'],
  format: r.format as HistoryRecord['format'],
  bytes: num(r.bytes),
  width: num(r.width),
  height: num(r.height),
  altText: r.alt_text as string,
  decorative: bool(r.decorative),
  language: r.language as string,
  style: r.style as string,
  maxLength: num(r.max_length),
  cached: bool(r.cached),
  characterCount: num(r.character_count),
})

export const DELIVERY_COLUMNS =
  'seq, id, account_id, batch_id, suggestion_id, payload, event, url, status, attempts, last_status, last_error, last_attempt_at, next_attempt_at, delivered_at, created_at'

export const toDelivery = (r: Row): DeliveryRecord => ({
  seq: num(r.seq),
  id: r.id as string,
  accountId: num(r.account_id),
  batchId: r.batch_id as string | null,
  suggestionId: r.suggestion_id as string | null,
  payload: r.payload as string | null,
  event: r.event as WebhookEvent,
  url: r.url as string,
  status: r.status as DeliveryStatus,
  attempts: num(r.attempts),
  lastStatus: numOrNull(r.last_status),
  lastError: r.last_error as string | null,
  lastAttemptAt: numOrNull(r.last_attempt_at),
  nextAttemptAt: numOrNull(r.next_attempt_at),
  deliveredAt: numOrNull(r.delivered_at),
  createdAt: num(r.created_at),
})

/** An organisation is its billing account's row plus these. */
export const ORG_COLUMNS = `${ACCOUNT_COLUMNS}, kind, org_public_id, org_name`

/** The organisation's columns in a join (`accounts o`), prefixed `o_` (toOrg(r, 'o_')). */
export const ORG_JOIN_COLUMNS = ORG_COLUMNS.split(', ')
  .map((c) => `o.${c} AS o_${c}`)
  .join(', ')

/** An organisation from its account row, or from a join's columns prefixed (`o_`). */
export const toOrg = (r: Row, prefix = ''): OrgRecord => ({
  id: num(r[`${prefix}id`]),
  publicId: r[`${prefix}org_public_id`] as string,
  name: (r[`${prefix}org_name`] as string | null) ?? 'Personal',
  personal: r[`${prefix}kind`] === 'person',
  account: toAccount(r, prefix),
  createdAt: num(r[`${prefix}created_at`]),
})

/** A membership from ORG_JOIN_COLUMNS (`accounts o`) and the member row's `role` and `joined_at`. */
export const toMembership = (r: Row): Membership => ({ org: toOrg(r, 'o_'), role: r.role as Role, joinedAt: num(r.joined_at) })

/** A member from `org_members m JOIN accounts a ON a.id = m.account_id`. */
export const MEMBER_COLUMNS = 'm.account_id, a.email, m.role, m.joined_at'

export const toMember = (r: Row): MemberRecord => ({
  accountId: num(r.account_id),
  email: r.email as string,
  role: r.role as Role,
  joinedAt: num(r.joined_at),
})

/** Never the token's hash: nothing but the accept looks it up. */
export const INVITATION_COLUMNS = 'id, org_id, email, role, invited_by, created_at, expires_at, used_at'

export const toInvitation = (r: Row): InvitationRecord => ({
  id: num(r.id),
  orgId: num(r.org_id),
  email: r.email as string,
  role: r.role as Role,
  invitedBy: numOrNull(r.invited_by),
  createdAt: num(r.created_at),
  expiresAt: num(r.expires_at),
  acceptedAt: numOrNull(r.used_at),
})

export const ACTIVITY_COLUMNS = 'seq, org_id, at, actor_id, actor_email, action, subject, detail'

export const toActivity = (r: Row): ActivityEntry => ({
  seq: num(r.seq),
  orgId: num(r.org_id),
  at: num(r.at),
  actorId: numOrNull(r.actor_id),
  actorEmail: r.actor_email as string | null,
  action: r.action as ActivityAction,
  subject: r.subject as string | null,
  detail: json<Record<string, unknown>>(r.detail, {}),
})

/** Every column but the thumbnail's bytes (SuggestionStore.thumbnail reads them), with whether there are any. */
export const SUGGESTION_COLUMNS =
  'id, public_id, org_id, status, target_kind, target_ref, target_site, target_fingerprint, current_alt, proposed_alt, language, ' +
  'image_url, image_format, image_width, image_height, (thumbnail IS NOT NULL) AS has_thumbnail, wcag_compliant, wcag_issues, verdict, ' +
  'decorative, batch_id, created_by, created_by_email, created_at, decided_by, decided_by_email, decided_at, final_alt, reason'

export const toSuggestion = (r: Row): SuggestionRecord => ({
  id: num(r.id),
  publicId: r.public_id as string,
  orgId: num(r.org_id),
  status: r.status as SuggestionStatus,
  target: {
    kind: r.target_kind as string,
    ref: r.target_ref as string,
    site: r.target_site as string | null,
    fingerprint: r.target_fingerprint as string | null,
  },
  currentAlt: r.current_alt as string | null,
  proposedAlt: r.proposed_alt as string,
  language: r.language as string,
  image: {
    url: r.image_url as string | null,
    format: r.image_format as string | null,
    width: numOrNull(r.image_width),
    height: numOrNull(r.image_height),
    hasThumbnail: bool(r.has_thumbnail),
  },
  checks: {
    wcagCompliant: boolOrNull(r.wcag_compliant),
    wcagIssues: json<string[]>(r.wcag_issues, []),
    verdict: json<Record<string, unknown> | null>(r.verdict, null),
    decorative: bool(r.decorative),
  },
  batchId: r.batch_id as string | null,
  createdBy: numOrNull(r.created_by),
  createdByEmail: r.created_by_email as string | null,
  createdAt: num(r.created_at),
  decidedBy: numOrNull(r.decided_by),
  decidedByEmail: r.decided_by_email as string | null,
  decidedAt: numOrNull(r.decided_at),
  finalAlt: r.final_alt as string | null,
  reason: r.reason as string | null,
})

/**
 * The values of a new suggestion's row, in the order of both engines' INSERT (public_id … created_at);
 * `flag` writes a boolean as the engine stores it (SQLite 0 and 1, PostgreSQL boolean).
 */
export const suggestionValues = <Flag extends number | boolean>(orgId: number, s: NewSuggestion, actor: Actor, flag: (value: boolean) => Flag) => [
  s.publicId,
  orgId,
  s.target.kind,
  s.target.ref,
  s.target.site,
  s.target.fingerprint,
  s.currentAlt,
  s.proposedAlt,
  s.language,
  s.image.url,
  s.image.format,
  s.image.width,
  s.image.height,
  s.image.thumbnail,
  s.checks.wcagCompliant === null ? null : flag(s.checks.wcagCompliant),
  JSON.stringify(s.checks.wcagIssues),
  s.checks.verdict === null ? null : JSON.stringify(s.checks.verdict),
  flag(s.checks.decorative),
  s.batchId,
  actor.accountId,
  actor.email,
  actor.now,
]
