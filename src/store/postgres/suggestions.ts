// The review queue on PostgreSQL (see SuggestionStore). A decision is one UPDATE of a pending row: two
// reviewers deciding at once, from any replicas, both reach the row, the second waits for the first's
// commit, finds it decided and changes nothing. Each change appends its activity entry in its transaction.
import type { SQL } from 'bun'
import type { Actor, SuggestionFilter, SuggestionRecord, SuggestionStore } from '../contract'
import { type Db, first } from './connection'
import { type Row, SUGGESTION_COLUMNS, suggestionValues, toSuggestion } from '../shared/rows'
import { appendActivity } from './orgs'
import { queueSuggestionDecided } from './webhooks'

/** What a decision or a reopening was, as the webhook's `decision` says it. */
export type SuggestionOutcome = 'accepted' | 'edited' | 'rejected' | 'reopened'

export type SuggestionHooks = {
  /**
   * Runs in the transaction of a decision or a reopening, after its row and entry are written, so what
   * it writes (the organisation's `suggestion.decided` delivery) commits or rolls back with them.
   */
  decided?(tx: SQL, suggestion: SuggestionRecord, outcome: SuggestionOutcome, actor: Actor): Promise<void>
}

/** The filter's conditions after `org_id = $1`, and their values from $2 on. */
function where(orgId: number, filter: SuggestionFilter): { sql: string; values: unknown[] } {
  const values: unknown[] = [orgId]
  const conditions = ['org_id = $1']
  const add = (column: string, value: unknown) => {
    values.push(value)
    conditions.push(`${column} = $${values.length}`)
  }
  if (filter.status !== undefined) add('status', filter.status)
  if (filter.targetKind !== undefined) add('target_kind', filter.targetKind)
  if (filter.createdBy !== undefined) add('created_by', filter.createdBy)
  if (filter.language !== undefined) add('language', filter.language)
  return { sql: conditions.join(' AND '), values }
}

export function createPostgresSuggestionStore({ transaction, run }: Db, hooks: SuggestionHooks = {}): SuggestionStore {
  /** After an UPDATE that matched nothing: does the organisation have the suggestion at all? */
  const exists = async (tx: SQL, orgId: number, publicId: string) =>
    (await first(tx, 'SELECT 1 AS one FROM suggestions WHERE org_id = $1 AND public_id = $2', [orgId, publicId])) !== null

  return {
    create: (orgId, s, actor) =>
      transaction(async (tx) => {
        const row = await first(
          tx,
          `INSERT INTO suggestions (public_id, org_id, status, target_kind, target_ref, target_site, target_fingerprint, current_alt, proposed_alt,
             language, image_url, image_format, image_width, image_height, thumbnail, wcag_compliant, wcag_issues, verdict, decorative, batch_id,
             created_by, created_by_email, created_at)
           VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
           RETURNING ${SUGGESTION_COLUMNS}`,
          suggestionValues(orgId, s, actor, (value) => value),
        )
        await appendActivity(tx, orgId, 'suggestion.created', s.publicId, { target_kind: s.target.kind, target_ref: s.target.ref }, actor)
        return toSuggestion(row!)
      }),
    get: (orgId, publicId) =>
      run(async (s) => {
        const row = await first(s, `SELECT ${SUGGESTION_COLUMNS} FROM suggestions WHERE org_id = $1 AND public_id = $2`, [orgId, publicId])
        return row ? toSuggestion(row) : null
      }),
    list: (orgId, filter, limit, beforeId) =>
      run(async (s) => {
        const { sql, values } = where(orgId, filter)
        const before = beforeId === null ? '' : ` AND id < $${values.length + 1}`
        if (beforeId !== null) values.push(beforeId)
        values.push(limit)
        return (
          (await s.unsafe(`SELECT ${SUGGESTION_COLUMNS} FROM suggestions WHERE ${sql}${before} ORDER BY id DESC LIMIT $${values.length}`, values)) as Row[]
        ).map(toSuggestion)
      }),
    count: (orgId, filter, cap) =>
      run(async (s) => {
        const { sql, values } = where(orgId, filter)
        values.push(cap)
        return Number((await first(s, `SELECT count(*) AS n FROM (SELECT 1 FROM suggestions WHERE ${sql} LIMIT $${values.length}) AS matching`, values))!.n)
      }),
    thumbnail: (orgId, publicId) =>
      run(async (s) => {
        const row = await first(s, 'SELECT thumbnail FROM suggestions WHERE org_id = $1 AND public_id = $2', [orgId, publicId])
        return row?.thumbnail ? new Uint8Array(row.thumbnail as Uint8Array) : null
      }),
    decide: (orgId, publicId, decision, actor) =>
      transaction(async (tx) => {
        const finalAlt = decision.status === 'rejected' ? null : decision.finalAlt
        const reason = decision.status === 'rejected' ? decision.reason : null
        // Only a pending row changes: a decision that waited for another one's commit finds it decided.
        const row = await first(
          tx,
          `UPDATE suggestions SET status = $3, final_alt = $4, reason = $5, decided_by = $6, decided_by_email = $7, decided_at = $8
           WHERE org_id = $1 AND public_id = $2 AND status = 'pending' RETURNING ${SUGGESTION_COLUMNS}`,
          [orgId, publicId, decision.status, finalAlt, reason, actor.accountId, actor.email, actor.now],
        )
        if (!row) return (await exists(tx, orgId, publicId)) ? ('already_decided' as const) : null
        const suggestion = toSuggestion(row)
        await appendActivity(tx, orgId, `suggestion.${decision.status}`, publicId, decision.status === 'rejected' ? { reason } : { final_alt: finalAlt }, actor)
        // The organisation webhook's event commits with the decision (webhooks.ts owns the delivery).
        await queueSuggestionDecided(tx, suggestion, decision.status, actor)
        await hooks.decided?.(tx, suggestion, decision.status, actor)
        return suggestion
      }),
    reopen: (orgId, publicId, actor) =>
      transaction(async (tx) => {
        const row = await first(
          tx,
          `UPDATE suggestions SET status = 'pending', final_alt = NULL, reason = NULL, decided_by = NULL, decided_by_email = NULL, decided_at = NULL
           WHERE org_id = $1 AND public_id = $2 AND status <> 'pending' RETURNING ${SUGGESTION_COLUMNS}`,
          [orgId, publicId],
        )
        if (!row) return (await exists(tx, orgId, publicId)) ? ('not_decided' as const) : null
        const suggestion = toSuggestion(row)
        await appendActivity(tx, orgId, 'suggestion.reopened', publicId, {}, actor)
        await queueSuggestionDecided(tx, suggestion, 'reopened', actor)
        await hooks.decided?.(tx, suggestion, 'reopened', actor)
        return suggestion
      }),
  }
}
