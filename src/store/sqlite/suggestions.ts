// The review queue on bun:sqlite (see contract/suggestions.ts). A decision is one UPDATE guarded by
// `status = 'pending'` inside an immediate transaction: of two reviewers at once, exactly one changes the row.
// The same transaction queues the organisation's `suggestion.decided` delivery when it has a webhook.
import type { Database } from 'bun:sqlite'
import type { Actor, Decision, NewSuggestion, SuggestionFilter, SuggestionRecord, SuggestionStore } from '../contract'
import { newDeliveryId } from '../shared/ids'
import { type Row, SUGGESTION_COLUMNS, suggestionValues, toSuggestion } from '../shared/rows'
import { type SuggestionDecision, suggestionDecidedPayload } from '../shared/suggestion-view'
import type { Write } from './connection'

/** WHERE clauses of a filter, and their parameters after the organisation's (`?1`). */
function filtered(filter: SuggestionFilter): { where: string; params: (string | number)[] } {
  const where = ['org_id = ?1']
  const params: (string | number)[] = []
  const add = (clause: string, value: string | number) => {
    params.push(value)
    where.push(clause.replace('?', `?${params.length + 1}`))
  }
  if (filter.status !== undefined) add('status = ?', filter.status)
  if (filter.targetKind !== undefined) add('target_kind = ?', filter.targetKind)
  if (filter.createdBy !== undefined) add('created_by = ?', filter.createdBy)
  if (filter.language !== undefined) add('language = ?', filter.language)
  return { where: where.join(' AND '), params }
}

export function createSuggestionStore(db: Database, write: Write): SuggestionStore {
  const q = {
    insert: db.query<Row, (string | number | null | Uint8Array)[]>(
      `INSERT INTO suggestions (public_id, org_id, status, target_kind, target_ref, target_site, target_fingerprint, current_alt, proposed_alt, language,
         image_url, image_format, image_width, image_height, thumbnail, wcag_compliant, wcag_issues, verdict, decorative, batch_id,
         created_by, created_by_email, created_at)
       VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${SUGGESTION_COLUMNS}`,
    ),
    get: db.query<Row, [number, string]>(`SELECT ${SUGGESTION_COLUMNS} FROM suggestions WHERE org_id = ? AND public_id = ?`),
    thumbnail: db.query<{ thumbnail: Uint8Array | null }, [number, string]>('SELECT thumbnail FROM suggestions WHERE org_id = ? AND public_id = ?'),
    decide: db.query<Row, [string, string | null, string | null, number | null, string | null, number, number, string]>(
      `UPDATE suggestions SET status = ?, final_alt = ?, reason = ?, decided_by = ?, decided_by_email = ?, decided_at = ?
       WHERE org_id = ? AND public_id = ? AND status = 'pending' RETURNING ${SUGGESTION_COLUMNS}`,
    ),
    reopen: db.query<Row, [number, string]>(
      `UPDATE suggestions SET status = 'pending', final_alt = NULL, reason = NULL, decided_by = NULL, decided_by_email = NULL, decided_at = NULL
       WHERE org_id = ? AND public_id = ? AND status <> 'pending' RETURNING ${SUGGESTION_COLUMNS}`,
    ),
    exists: db.query<{ status: string }, [number, string]>('SELECT status FROM suggestions WHERE org_id = ? AND public_id = ?'),
    append: db.query<null, [number, number, number | null, string | null, string, string | null, string]>(
      'INSERT INTO org_activity (org_id, at, actor_id, actor_email, action, subject, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    // Webhooks (webhooks.ts owns these tables): the organisation's URL, and its delivery, due at once.
    orgWebhook: db.query<{ url: string; org_public_id: string }, [number]>(
      'SELECT w.url, a.org_public_id FROM org_webhooks w JOIN accounts a ON a.id = w.org_id WHERE w.org_id = ?',
    ),
    queueDelivery: db.query<null, [string, number, string, string, string, number]>(
      `INSERT INTO webhook_deliveries (id, account_id, suggestion_id, payload, event, url, status, next_attempt_at, created_at)
       VALUES (?1, ?2, ?3, ?4, 'suggestion.decided', ?5, 'pending', ?6, ?6)`,
    ),
  }

  /** Queues the decision's webhook delivery when the organisation has a webhook (inside the caller's transaction). */
  const queueDecided = (orgId: number, row: Row, decision: SuggestionDecision, actor: Actor) => {
    const hook = q.orgWebhook.get(orgId)
    if (hook === null) return
    const suggestion = toSuggestion(row)
    q.queueDelivery.run(
      newDeliveryId(),
      orgId,
      suggestion.publicId,
      suggestionDecidedPayload(hook.org_public_id, suggestion, decision, actor),
      hook.url,
      actor.now,
    )
  }
  // One prepared statement per filter shape (at most 16), made on first use.
  const lists = new Map<string, ReturnType<typeof db.query<Row, (string | number)[]>>>()
  const counts = new Map<string, ReturnType<typeof db.query<{ n: number }, (string | number)[]>>>()

  const create = db.transaction((orgId: number, s: NewSuggestion, actor: Actor) => {
    const row = q.insert.get(...suggestionValues(orgId, s, actor, (value) => (value ? 1 : 0)))!
    q.append.run(
      orgId,
      actor.now,
      actor.accountId,
      actor.email,
      'suggestion.created',
      s.publicId,
      JSON.stringify({ target_kind: s.target.kind, target_ref: s.target.ref }),
    )
    return toSuggestion(row)
  })

  const decide = db.transaction((orgId: number, publicId: string, decision: Decision, actor: Actor) => {
    const finalAlt = decision.status === 'rejected' ? null : decision.finalAlt
    const reason = decision.status === 'rejected' ? decision.reason : null
    const row = q.decide.get(decision.status, finalAlt, reason, actor.accountId, actor.email, actor.now, orgId, publicId)
    if (!row) return q.exists.get(orgId, publicId) ? ('already_decided' as const) : null
    const detail = decision.status === 'rejected' ? { reason } : { final_alt: finalAlt }
    q.append.run(orgId, actor.now, actor.accountId, actor.email, `suggestion.${decision.status}`, publicId, JSON.stringify(detail))
    queueDecided(orgId, row, decision.status, actor)
    return toSuggestion(row)
  })

  const reopen = db.transaction((orgId: number, publicId: string, actor: Actor) => {
    const row = q.reopen.get(orgId, publicId)
    if (!row) return q.exists.get(orgId, publicId) ? ('not_decided' as const) : null
    q.append.run(orgId, actor.now, actor.accountId, actor.email, 'suggestion.reopened', publicId, '{}')
    queueDecided(orgId, row, 'reopened', actor)
    return toSuggestion(row)
  })

  const listQuery = (filter: SuggestionFilter) => {
    const { where, params } = filtered(filter)
    let statement = lists.get(where)
    if (!statement) {
      const n = params.length
      statement = db.query<Row, (string | number)[]>(
        `SELECT ${SUGGESTION_COLUMNS} FROM suggestions WHERE ${where} AND id < ?${n + 2} ORDER BY id DESC LIMIT ?${n + 3}`,
      )
      lists.set(where, statement)
    }
    return { statement, params }
  }

  return {
    create: (orgId, suggestion, actor) => write(() => create.immediate(orgId, suggestion, actor)),
    get: async (orgId, publicId) => {
      const row = q.get.get(orgId, publicId)
      return row ? toSuggestion(row) : null
    },
    list: async (orgId, filter, limit, beforeId): Promise<SuggestionRecord[]> => {
      const { statement, params } = listQuery(filter)
      return statement.all(orgId, ...params, beforeId ?? Number.MAX_SAFE_INTEGER, limit).map(toSuggestion)
    },
    count: async (orgId, filter, cap) => {
      const { where, params } = filtered(filter)
      let statement = counts.get(where)
      if (!statement) {
        statement = db.query<{ n: number }, (string | number)[]>(
          `SELECT count(*) AS n FROM (SELECT 1 FROM suggestions WHERE ${where} LIMIT ?${params.length + 2})`,
        )
        counts.set(where, statement)
      }
      return statement.get(orgId, ...params, cap)!.n
    },
    thumbnail: async (orgId, publicId) => {
      const bytes = q.thumbnail.get(orgId, publicId)?.thumbnail
      return bytes ? new Uint8Array(bytes) : null
    },
    decide: (orgId, publicId, decision, actor) => write(() => decide.immediate(orgId, publicId, decision, actor)),
    reopen: (orgId, publicId, actor) => write(() => reopen.immediate(orgId, publicId, actor)),
  }
}
