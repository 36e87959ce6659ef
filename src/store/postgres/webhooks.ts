// Webhook secrets and deliveries on PostgreSQL (see WebhookStore in ../webhooks.ts for what each operation
// promises). An attempt claims its delivery with a random token and a lease in one UPDATE whose condition
// PostgreSQL re-checks after waiting for a concurrent claim: of replicas that try one delivery at once,
// one gets it, and the others see it claimed. Outcomes are written only under the claim's token. Leases
// are judged by the database's clock (clock.ts). A decision queues its organisation's delivery with
// queueSuggestionDecided, in the decision's transaction (suggestions.ts).
import type { SQL } from 'bun'
import { randomHex } from '../../shared/crypto'
import type { Actor, DeliveryRecord, SuggestionRecord, WebhookStore } from '../contract'
import { newDeliveryId } from '../shared/ids'
import { DELIVERY_COLUMNS, num, numOrNull, toDelivery, type Row } from '../shared/rows'
import { type SuggestionDecision, suggestionDecidedPayload } from '../shared/suggestion-view'
import { judgedNow, nowMs, type StoreClock } from './clock'
import { changed, type Db, first, lockAccount } from './connection'
import { appendActivity } from './orgs'

const rows = async (s: SQL, text: string, values: unknown[] = []) => (await s.unsafe(text, values)) as Row[]

/** When a pending delivery's attempt is due: at its next attempt's time while unclaimed, at the end of its claim's lease. */
const DUE_AT = 'coalesce(lease_until, next_attempt_at)'
/**
 * Whether it is due: an unclaimed one by the caller's `now` (`$1`; its next attempt's time is the caller's
 * too), a claimed one by the database's clock (`nowParam`, clock.ts): a replica whose clock runs ahead
 * does not take over an attempt under way.
 */
const isDue = (nowParam: string) => `((lease_until IS NULL AND next_attempt_at <= $1) OR lease_until <= ${nowMs(nowParam)})`

/** The organisation's `org.webhook_set` entry: its new URL, or null when the webhook was removed. */
const appendWebhookSet = (tx: SQL, orgId: number, url: string | null, actor: Actor) => appendActivity(tx, orgId, 'org.webhook_set', null, { url }, actor)

/**
 * Inside a decision's (or a reopening's) transaction: queues the organisation's `suggestion.decided`
 * delivery, due at once, when it has a webhook; nothing otherwise. So the event commits with the decision.
 */
export async function queueSuggestionDecided(tx: SQL, suggestion: SuggestionRecord, decision: SuggestionDecision, actor: Actor): Promise<void> {
  const hook = await first(tx, 'SELECT w.url, a.org_public_id FROM org_webhooks w JOIN accounts a ON a.id = w.org_id WHERE w.org_id = $1', [suggestion.orgId])
  if (!hook) return
  await tx.unsafe(
    `INSERT INTO webhook_deliveries (id, account_id, suggestion_id, payload, event, url, status, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, 'suggestion.decided', $5, 'pending', $6, $6)`,
    [
      newDeliveryId(),
      suggestion.orgId,
      suggestion.publicId,
      suggestionDecidedPayload(hook.org_public_id as string, suggestion, decision, actor),
      hook.url,
      actor.now,
    ],
  )
}

export function createPostgresWebhookStore({ transaction, run }: Db, clock: StoreClock): WebhookStore {
  const written = (count: number | null) => (count === 1 ? ('written' as const) : ('lost' as const))

  return {
    secret: (accountId) =>
      run(async (s) => {
        const row = await first(s, 'SELECT secret, created_at FROM webhook_secrets WHERE account_id = $1', [accountId])
        return row ? { secret: row.secret as string, createdAt: num(row.created_at) } : null
      }),

    putSecret: (accountId, secret, now) =>
      transaction(async (tx) => {
        // The account's row lock: two puts at once tell apart which replaced, and a deleted account gets none.
        if (!(await lockAccount(tx, accountId))) return null
        const replaced = (await first(tx, 'SELECT 1 AS one FROM webhook_secrets WHERE account_id = $1', [accountId])) !== null
        await tx.unsafe(
          `INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, $3)
           ON CONFLICT (account_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at`,
          [accountId, secret, now],
        )
        return { replaced }
      }),

    orgWebhook: (orgId) =>
      run(async (s) => {
        const row = await first(s, 'SELECT url, created_at FROM org_webhooks WHERE org_id = $1', [orgId])
        return row ? { url: row.url as string, createdAt: num(row.created_at) } : null
      }),

    putOrgWebhook: (orgId, url, secret, actor) =>
      transaction(async (tx) => {
        // The organisation's row lock: a deleted organisation gets none, and two puts at once are one after the other.
        if (!(await lockAccount(tx, orgId))) return null
        await tx.unsafe(
          `INSERT INTO org_webhooks (org_id, url, created_at) VALUES ($1, $2, $3)
           ON CONFLICT (org_id) DO UPDATE SET url = excluded.url, created_at = excluded.created_at`,
          [orgId, url, actor.now],
        )
        await tx.unsafe(
          `INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, $3)
           ON CONFLICT (account_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at`,
          [orgId, secret, actor.now],
        )
        await appendWebhookSet(tx, orgId, url, actor)
        return { url, createdAt: actor.now }
      }),

    deleteOrgWebhook: (orgId, actor) =>
      transaction(async (tx) => {
        if ((await changed(tx, 'DELETE FROM org_webhooks WHERE org_id = $1', [orgId])) !== 1) return false
        await appendWebhookSet(tx, orgId, null, actor)
        return true
      }),

    queueEndedBatches: async (now, makeId, limit) => {
      // Looked for every second: a read first, so an idle service writes nothing for it.
      if (!(await run((s) => first(s, "SELECT 1 AS one FROM batches WHERE webhook_state = 'pending' LIMIT 1")))) return 0
      return transaction(async (tx) => {
        // Batches another replica is queueing are skipped, not waited for.
        const ended = await rows(
          tx,
          `SELECT id, account_id, webhook_url, status, completed_at FROM batches WHERE webhook_state = 'pending' LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED`,
          [limit],
        )
        let queued = 0
        for (const batch of ended) {
          await tx.unsafe("UPDATE batches SET webhook_state = 'queued' WHERE id = $1", [batch.id])
          // A batch that ended without a URL (or not as completed/cancelled) has nothing to send.
          if (batch.webhook_url === null || (batch.status !== 'completed' && batch.status !== 'cancelled')) continue
          // The event's time is when the batch ended, however late its delivery is queued (after a crash).
          await tx.unsafe(
            `INSERT INTO webhook_deliveries (id, account_id, batch_id, event, url, status, next_attempt_at, created_at)
             VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7) ON CONFLICT (batch_id) DO NOTHING`,
            [makeId(), batch.account_id, batch.id, `batch.${batch.status}`, batch.webhook_url, now, numOrNull(batch.completed_at) ?? now],
          )
          queued++
        }
        return queued
      })
    },

    due: (now, limit, perAccount, busy) =>
      run(async (s) => {
        const underWay = new Map<number, number>()
        const tally = (accountId: number) => underWay.set(accountId, (underWay.get(accountId) ?? 0) + 1)
        for (const accountId of busy.values()) tally(accountId)
        // Attempts under way in any replica: what each account's share is counted from.
        for (const row of await rows(s, `SELECT id, account_id FROM webhook_deliveries WHERE status = 'pending' AND lease_until > ${nowMs('$1')}`, [
          judgedNow(clock, now),
        ]))
          if (!busy.has(row.id as string)) tally(num(row.account_id))
        // Ranked within each account, so one account's backlog cannot fill the answer. Only rows of accounts
        // with attempts under way are passed over, at most perAccount of each.
        const candidates = await rows(
          s,
          `SELECT * FROM (
             SELECT ${DELIVERY_COLUMNS}, ${DUE_AT} AS due_at, row_number() OVER (PARTITION BY account_id ORDER BY ${DUE_AT}, seq) AS turn
             FROM webhook_deliveries
             WHERE status = 'pending' AND ${isDue('$5')} AND id NOT IN (SELECT jsonb_array_elements_text($2::text::jsonb))
           ) ranked WHERE turn <= $3 ORDER BY turn, due_at, seq LIMIT $4`,
          [now, JSON.stringify([...busy.keys()]), perAccount, limit + underWay.size * perAccount, judgedNow(clock, now)],
        )
        const picked: DeliveryRecord[] = []
        for (const row of candidates) {
          if (picked.length >= limit) break
          const accountId = num(row.account_id)
          const count = underWay.get(accountId) ?? 0
          if (count >= perAccount) continue
          underWay.set(accountId, count + 1)
          picked.push(toDelivery(row))
        }
        return picked
      }),

    nextDueAt: () => run(async (s) => numOrNull((await first(s, `SELECT min(${DUE_AT}) AS at FROM webhook_deliveries WHERE status = 'pending'`))?.at)),

    beginAttempt: (id, now, leaseMs, retryAt) =>
      transaction(async (tx) => {
        const token = randomHex(16)
        // A concurrent claim of the same delivery makes this wait, then find it claimed (not due): no row.
        const claimed = await first(
          tx,
          `UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = $1, claim_token = $2, lease_until = ${nowMs('$5')} + $3
           WHERE id = $4 AND status = 'pending' AND ${isDue('$5')} RETURNING attempts`,
          [now, token, leaseMs, id, judgedNow(clock, now)],
        )
        if (!claimed) return null
        const row = await first(tx, `UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE id = $2 RETURNING ${DELIVERY_COLUMNS}`, [
          retryAt(num(claimed.attempts)),
          id,
        ])
        return { delivery: toDelivery(row!), token }
      }),

    renewAttempt: (id, token, now, leaseMs) =>
      run(async (s) => {
        const result = (await s.unsafe(
          `UPDATE webhook_deliveries SET lease_until = ${nowMs('$4')} + $1 WHERE id = $2 AND claim_token = $3 AND status = 'pending'`,
          [leaseMs, id, token, judgedNow(clock, now)],
        )) as { count: number | null }
        return written(result.count)
      }),

    delivered: (id, token, status, now) =>
      run(async (s) => {
        const result = (await s.unsafe(
          `UPDATE webhook_deliveries SET status = 'delivered', last_status = $1, last_error = NULL, delivered_at = $2, next_attempt_at = NULL,
             claim_token = NULL, lease_until = NULL
           WHERE id = $3 AND claim_token = $4 AND status = 'pending'`,
          [status, now, id, token],
        )) as { count: number | null }
        return written(result.count)
      }),

    attemptFailed: (id, token, status, error, end, now) =>
      run(async (s) => {
        // A retry asked for meanwhile (next_attempt_at set again) keeps the delivery pending.
        const result = (await s.unsafe(
          `UPDATE webhook_deliveries SET last_status = $1, last_error = $2,
             status = CASE WHEN $3::text = 'final' OR ($3::text = 'retry' AND next_attempt_at IS NULL) THEN 'failed' ELSE status END,
             next_attempt_at = CASE $3::text WHEN 'final' THEN NULL WHEN 'interrupted' THEN coalesce(next_attempt_at, $4::bigint) ELSE next_attempt_at END,
             claim_token = NULL, lease_until = NULL
           WHERE id = $5 AND claim_token = $6 AND status = 'pending'`,
          [status, error, end, now, id, token],
        )) as { count: number | null }
        return written(result.count)
      }),

    list: (accountId, limit, beforeSeq) =>
      run(async (s) =>
        (
          await rows(s, `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE account_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, [
            accountId,
            beforeSeq ?? Number.MAX_SAFE_INTEGER,
            limit,
          ])
        ).map(toDelivery),
      ),

    retry: (accountId, id, now) =>
      run(async (s) => {
        const row = await first(
          s,
          `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $3 WHERE account_id = $1 AND id = $2 RETURNING ${DELIVERY_COLUMNS}`,
          [accountId, id, now],
        )
        return row ? toDelivery(row) : null
      }),
  }
}
