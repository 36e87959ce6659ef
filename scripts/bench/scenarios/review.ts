// Scenario 20: the review queue of a busy organisation (issue 32). An organisation holds 100 000
// suggestions (30 % pending; four target kinds, three authors and two languages interleaved, so each
// index of the queue has to do its part), filled in bulk SQL while the service is stopped (the service's
// own create path adds a thumbnail and an activity entry per row: minutes, not seconds, and nothing the
// reads measured here depend on). Then review-client.ts, on one keep-alive connection, sends in turn:
// GET /api/usage with a personal key (the baseline) and with an author's organisation key (the role
// check: same latency class), the pending queue (limit 50), the pending queue of one target kind, and
// one accept. Bounds: list p99 ≤ 20 ms on SQLite (≤ 30 ms on PostgreSQL), accept p99 ≤ 10 ms.
// PostgreSQL runs when the engine serves organisations; else its rows say why they were skipped.
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { postgresUnavailable, sharedPostgres } from '../../../test/support/postgres'
import { anomalies, BENCH_DIR, BUN, errorMessage, type Fixtures, log, loopback, QUICK, ROUNDS, register, serviceEnv } from '../lib/common'
import { baseEnv, runForResult, type ServiceHandle, startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, percentile, ratioFigure } from '../lib/stats'
import type { ReviewResult } from '../review-client'

export const REVIEW = {
  suggestions: 100_000,
  pendingShare: 0.3,
  kinds: ['wordpress', 'file', 'url', 'batch'],
  filterKind: 'file',
  iterations: QUICK ? 150 : 600,
  warmup: 50,
  listLimitMs: { sqlite: 20, postgres: 30 },
  acceptLimitMs: 10,
  /** An organisation key's /api/usage p50 against a personal key's, as "the same latency class". */
  roleRatioLimit: 1.5,
}
const SCENARIO = '20 review'

type Engine = 'sqlite' | 'postgres'
export type ReviewRound = ReviewResult & { engine: Engine }
export type ReviewOutcome = { rounds: ReviewRound[]; fillMs: Partial<Record<Engine, number>>; skipped: Partial<Record<Engine, string>> }

type Setup = { personalKey: string; authorKey: string; reviewerKey: string; orgPublicId: string; ownerEmail: string; authorEmail: string }

async function call(url: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(loopback(url + path), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  })
  const text = await response.text()
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(text) as Record<string, unknown>
  } catch {
    json = { text }
  }
  return { status: response.status, json }
}

/** An organisation, its owner's organisation key, and an author (added by `alttext admin orgs add-member`) with a key there. */
async function setUp(fx: Fixtures, service: ServiceHandle, engine: Engine, adminEnv: Record<string, string>): Promise<Setup | string> {
  const ownerEmail = `review-owner-${engine}@example.com`
  const authorEmail = `review-author-${engine}@example.com`
  const owner = await register(service.url, ownerEmail)
  const author = await register(service.url, authorEmail)
  const org = await call(service.url, '/api/orgs', owner.apiKey, { name: `Bench review ${engine}` })
  if (org.status !== 201)
    return `POST /api/orgs answered ${org.status} (${JSON.stringify(org.json).slice(0, 200)}): organisations not served by this engine yet`
  const orgPublicId = String(org.json.id)
  const admin = Bun.spawn([fx.binary, 'admin', 'orgs', 'add-member', orgPublicId, authorEmail, '--role', 'author'], {
    env: { ...baseEnv(), ...adminEnv },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [adminOut, adminErr, adminCode] = await Promise.all([new Response(admin.stdout).text(), new Response(admin.stderr).text(), admin.exited])
  if (adminCode !== 0) throw new Error(`alttext admin orgs add-member failed (exit ${adminCode}): ${adminOut}${adminErr}`)
  const reviewer = await call(service.url, '/api/keys', owner.apiKey, { label: 'bench reviewer', org_id: orgPublicId })
  const authorKey = await call(service.url, '/api/keys', author.apiKey, { label: 'bench author', org_id: orgPublicId })
  if (reviewer.status !== 201 || authorKey.status !== 201)
    throw new Error(`POST /api/keys {org_id} answered ${reviewer.status} / ${authorKey.status}: ${JSON.stringify(authorKey.json).slice(0, 200)}`)
  return {
    personalKey: owner.apiKey,
    authorKey: String(authorKey.json.api_key),
    reviewerKey: String(reviewer.json.api_key),
    orgPublicId,
    ownerEmail,
    authorEmail,
  }
}

// One deterministic mix, written once per engine: status by i % 10, kind by i / 10, author by i / 40.
const STATUS_SQL = (i: string) =>
  `CASE WHEN ${i} % 10 < 3 THEN 'pending' WHEN ${i} % 10 < 7 THEN 'accepted' WHEN ${i} % 10 = 7 THEN 'edited' ELSE 'rejected' END`

function fillSqlite(dbPath: string, s: Setup): number {
  const started = performance.now()
  const db = new Database(dbPath, { strict: true })
  try {
    db.exec('PRAGMA foreign_keys = ON')
    const id = (sql: string, value: string) => db.query<{ id: number }, [string]>(sql).get(value)!.id
    const orgId = id('SELECT id FROM accounts WHERE org_public_id = ?', s.orgPublicId)
    const ownerId = id('SELECT id FROM accounts WHERE email = ?', s.ownerEmail)
    const authorId = id('SELECT id FROM accounts WHERE email = ?', s.authorEmail)
    const authors: [number | null, string | null][] = [
      [ownerId, s.ownerEmail],
      [authorId, s.authorEmail],
      [null, null],
    ]
    const insert = db.query(
      `INSERT INTO suggestions (public_id, org_id, status, target_kind, target_ref, target_site, proposed_alt, language, image_url, image_format,
         image_width, image_height, wcag_compliant, created_by, created_by_email, created_at, decided_by, decided_by_email, decided_at, final_alt)
       VALUES (?1, ?2, ${STATUS_SQL('?3')}, ?4, ?5, 'https://example.com', ?6, ?7, ?8, 'png', 1024, 683, 1, ?9, ?10, ?11,
         CASE WHEN ?3 % 10 < 3 THEN NULL ELSE ?12 END, CASE WHEN ?3 % 10 < 3 THEN NULL ELSE ?13 END,
         CASE WHEN ?3 % 10 < 3 THEN NULL ELSE ?11 + 3600000 END, CASE WHEN ?3 % 10 < 3 OR ?3 % 10 > 7 THEN NULL ELSE ?6 END)`,
    )
    const now = Date.now() - REVIEW.suggestions * 1000
    db.transaction(() => {
      for (let i = 0; i < REVIEW.suggestions; i++) {
        const [by, byEmail] = authors[Math.floor(i / 40) % 3]!
        insert.run(
          `sug_${i.toString(16).padStart(24, '0')}`,
          orgId,
          i,
          REVIEW.kinds[Math.floor(i / 10) % REVIEW.kinds.length]!,
          `ref-${i}`,
          `A proposed alt text for image ${i}: sailing boats moored in a small harbour at sunset.`,
          i % 5 === 0 ? 'de' : 'en',
          `https://example.com/images/${i}.png`,
          by,
          byEmail,
          now + i * 1000,
          ownerId,
          s.ownerEmail,
        )
      }
    }).immediate()
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    db.exec('ANALYZE')
  } finally {
    db.close()
  }
  return performance.now() - started
}

async function fillPostgres(databaseUrl: string, s: Setup): Promise<number> {
  const started = performance.now()
  const sql = new SQL(databaseUrl)
  try {
    const [org] = await sql`SELECT id FROM accounts WHERE org_public_id = ${s.orgPublicId}`
    const [owner] = await sql`SELECT id FROM accounts WHERE email = ${s.ownerEmail}`
    const [author] = await sql`SELECT id FROM accounts WHERE email = ${s.authorEmail}`
    const now = Date.now() - REVIEW.suggestions * 1000
    await sql.unsafe(
      `INSERT INTO suggestions (public_id, org_id, status, target_kind, target_ref, target_site, proposed_alt, language, image_url, image_format,
         image_width, image_height, wcag_compliant, created_by, created_by_email, created_at, decided_by, decided_by_email, decided_at, final_alt)
       SELECT 'sug_' || lpad(to_hex(i), 24, '0'), $1, ${STATUS_SQL('i')}, (ARRAY[${REVIEW.kinds.map((k) => `'${k}'`).join(', ')}])[(i / 10) % ${REVIEW.kinds.length} + 1],
         'ref-' || i, 'https://example.com', 'A proposed alt text for image ' || i || ': sailing boats moored in a small harbour at sunset.',
         CASE WHEN i % 5 = 0 THEN 'de' ELSE 'en' END, 'https://example.com/images/' || i || '.png', 'png', 1024, 683, true,
         (ARRAY[$2::bigint, $3::bigint, NULL])[(i / 40) % 3 + 1], (ARRAY[$4::text, $5::text, NULL])[(i / 40) % 3 + 1], $6::bigint + i * 1000,
         CASE WHEN i % 10 < 3 THEN NULL ELSE $2::bigint END, CASE WHEN i % 10 < 3 THEN NULL ELSE $4::text END,
         CASE WHEN i % 10 < 3 THEN NULL ELSE $6::bigint + i * 1000 + 3600000 END,
         CASE WHEN i % 10 < 3 OR i % 10 > 7 THEN NULL ELSE 'A proposed alt text for image ' || i || ': sailing boats moored in a small harbour at sunset.' END
       FROM generate_series(0, ${REVIEW.suggestions - 1}) AS i ORDER BY i`,
      [org!.id, owner!.id, author!.id, s.ownerEmail, s.authorEmail, now],
    )
    // As autovacuum would have by the time an organisation holds this many: the visibility map lets the count use the index alone.
    await sql.unsafe('VACUUM ANALYZE suggestions')
  } finally {
    await sql.close()
  }
  return performance.now() - started
}

function pendingIds(count: number): string[] {
  // Spread over the whole table (not only the newest), in an order unrelated to the ids.
  const pending: string[] = []
  for (let i = 0; i < REVIEW.suggestions && pending.length < REVIEW.suggestions * REVIEW.pendingShare; i++)
    if (i % 10 < 3) pending.push(`sug_${i.toString(16).padStart(24, '0')}`)
  const step = 7919 // a prime: visits the pending ids in a scattered order
  return Array.from({ length: count }, (_, k) => pending[(k * step) % pending.length]!)
}

async function rounds(engine: Engine, url: string, s: Setup, out: ReviewRound[]): Promise<void> {
  const perRound = REVIEW.iterations + REVIEW.warmup
  const ids = pendingIds(perRound * ROUNDS)
  for (let round = 0; round < ROUNDS; round++) {
    const result = await runForResult<ReviewResult>('review-client', [BUN, join(BENCH_DIR, 'review-client.ts')], {
      BENCH_REVIEW: JSON.stringify({
        url,
        personalKey: s.personalKey,
        authorKey: s.authorKey,
        reviewerKey: s.reviewerKey,
        kind: REVIEW.filterKind,
        ids: ids.slice(round * perRound, (round + 1) * perRound),
        iterations: REVIEW.iterations,
        warmup: REVIEW.warmup,
      }),
    })
    out.push({ ...result, engine })
    const bad = Object.entries(result.statuses).filter(([key]) => !key.endsWith(' 200'))
    if (bad.length) anomalies.push(`review ${engine} round ${round + 1}: answers other than 200: ${JSON.stringify(Object.fromEntries(bad))}`)
    if (result.shortPages) anomalies.push(`review ${engine} round ${round + 1}: ${result.shortPages} lists were not 50 pending suggestions`)
    const p99 = (xs: number[]) => percentile(xs, 99).toFixed(2)
    log(
      `review ${engine} round ${round + 1}: p99 usage personal ${p99(result.usagePersonal)} ms, org key ${p99(result.usageOrg)} ms; ` +
        `list ${p99(result.list)} ms, list ${REVIEW.filterKind} ${p99(result.listKind)} ms, accept ${p99(result.accept)} ms; total ${result.total}`,
    )
  }
}

export async function measureReview(fx: Fixtures): Promise<ReviewOutcome> {
  log(`scenario 20 (review queue): ${REVIEW.suggestions} suggestions in one organisation; ${REVIEW.iterations} iterations per round, ${ROUNDS} rounds`)
  const dir = join(fx.dir, 'review')
  mkdirSync(dir, { recursive: true })
  const outcome: ReviewOutcome = { rounds: [], fillMs: {}, skipped: {} }

  // SQLite: set up through HTTP and the admin command, fill while stopped, measure after a restart.
  const dbPath = join(dir, 'alttext.db')
  const env = serviceEnv(fx, dbPath, fx.ollamaFast)
  let service = await startService(fx.binary, env, join(fx.logDir, 'review-sqlite.log'))
  let setup: Setup | string
  try {
    setup = await setUp(fx, service, 'sqlite', { ALTTEXT_DB: dbPath })
  } finally {
    await service.stop()
  }
  if (typeof setup === 'string') throw new Error(setup)
  outcome.fillMs.sqlite = fillSqlite(dbPath, setup)
  log(`review: SQLite filled with ${REVIEW.suggestions} suggestions in ${(outcome.fillMs.sqlite / 1000).toFixed(1)} s`)
  service = await startService(fx.binary, env, join(fx.logDir, 'review-sqlite-2.log'))
  try {
    await rounds('sqlite', service.url, setup, outcome.rounds)
  } finally {
    await service.stop()
  }

  // PostgreSQL, when this machine has it and the engine serves organisations.
  const unavailable = postgresUnavailable()
  if (unavailable) {
    outcome.skipped.postgres = `PostgreSQL not available: ${unavailable}`
    log(`review: PostgreSQL SKIPPED: ${unavailable}`)
    return outcome
  }
  try {
    const cluster = await sharedPostgres()
    const databaseUrl = await cluster.createDatabase()
    const pgEnv = serviceEnv(fx, join(dir, 'unused.db'), fx.ollamaFast, { ALTTEXT_DATABASE_URL: databaseUrl })
    const pg = await startService(fx.binary, pgEnv, join(fx.logDir, 'review-pg.log'))
    try {
      const pgSetup = await setUp(fx, pg, 'postgres', { ALTTEXT_DATABASE_URL: databaseUrl })
      if (typeof pgSetup === 'string') {
        outcome.skipped.postgres = pgSetup
        log(`review: PostgreSQL SKIPPED: ${pgSetup}`)
        return outcome
      }
      outcome.fillMs.postgres = await fillPostgres(databaseUrl, pgSetup)
      log(`review: PostgreSQL filled with ${REVIEW.suggestions} suggestions in ${(outcome.fillMs.postgres / 1000).toFixed(1)} s`)
      await rounds('postgres', pg.url, pgSetup, outcome.rounds)
    } finally {
      await pg.stop()
    }
  } catch (error) {
    // The engine may not serve organisations yet (another branch finishes it): a start that fails says why in its last line.
    const lines = errorMessage(error)
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
    const why = lines.length > 1 ? `${lines[0]!.slice(0, 120)} … ${lines.at(-1)!.slice(0, 200)}` : (lines[0] ?? '').slice(0, 300)
    outcome.skipped.postgres = `failed: ${why}`
    log(`review: PostgreSQL SKIPPED: ${why}`)
    anomalies.push(`review PostgreSQL: ${outcome.skipped.postgres}`)
  }
  return outcome
}

/** The bounds as pass/fail lines, printed under the table. */
export function reviewVerdicts(outcome: ReviewOutcome): string[] {
  return reviewRows(outcome)
    .filter((r) => r.met !== null)
    .map((r) => {
      const shown = r.target?.includes('×') && r.ratio ? `${r.ratio.value.median.toFixed(2)}× (median of rounds)` : `${r.value.max.toFixed(2)} (worst round)`
      return `review: ${r.figure}: ${shown} — ${r.met ? 'holds' : 'DOES NOT HOLD'} (${r.target})`
    })
}

export function reviewRows(outcome: ReviewOutcome): Row[] {
  const rows: Row[] = []
  const engines: Engine[] = ['sqlite', 'postgres']
  for (const engine of engines) {
    const name = engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'
    const rounds = outcome.rounds.filter((r) => r.engine === engine)
    if (rounds.length === 0) {
      const why = outcome.skipped[engine] ?? 'not measured'
      rows.push({ scenario: SCENARIO, figure: `${name}: skipped — ${why}`, unit: 'count', value: figure([]), met: null })
      continue
    }
    const p = (pick: (r: ReviewRound) => number[], q: number) => figure(rounds.map((r) => percentile(pick(r), q)))
    const baseline = (q: number) => ({ label: `GET /api/usage p${q}, personal key`, value: p((r) => r.usagePersonal, q) })
    const ratio = (pick: (r: ReviewRound) => number[], q: number) => ({
      kind: 'x' as const,
      value: ratioFigure(
        rounds.map((r) => percentile(pick(r), q)),
        rounds.map((r) => percentile(r.usagePersonal, q)),
      ),
    })
    const listLimit = REVIEW.listLimitMs[engine]
    const listed: [string, (r: ReviewRound) => number[], number][] = [
      [`GET /api/suggestions?status=pending&limit=50`, (r) => r.list, listLimit],
      [`GET /api/suggestions?status=pending&target_kind=${REVIEW.filterKind}&limit=50`, (r) => r.listKind, listLimit],
      ['POST /api/suggestions/:id/accept', (r) => r.accept, REVIEW.acceptLimitMs],
    ]
    for (const [what, pick, limit] of listed) {
      for (const q of [50, 99]) {
        const value = p(pick, q)
        rows.push({
          scenario: SCENARIO,
          figure: `${name}: ${what} p${q}, ${REVIEW.suggestions.toLocaleString('en-US')} suggestions in the organisation (one connection)`,
          unit: 'ms',
          value,
          baseline: baseline(q),
          ratio: ratio(pick, q),
          ...(q === 99 ? { target: `≤ ${limit} ms`, met: value.max <= limit } : { met: null }),
        })
      }
    }
    for (const q of [50, 99]) {
      const value = p((r) => r.usageOrg, q)
      const r = ratio((x) => x.usageOrg, q)
      rows.push({
        scenario: SCENARIO,
        figure: `${name}: GET /api/usage p${q}, an author's organisation key (the role check, warm key)`,
        unit: 'ms',
        value,
        baseline: baseline(q),
        ratio: r,
        ...(q === 50 ? { target: `≤ ${REVIEW.roleRatioLimit}× the personal key`, met: r.value.median <= REVIEW.roleRatioLimit } : { met: null }),
      })
    }
    rows.push({
      scenario: SCENARIO,
      figure: `${name}: filling ${REVIEW.suggestions.toLocaleString('en-US')} suggestions (bulk SQL, service stopped${engine === 'postgres' ? ' or running' : ''})`,
      unit: 'ms',
      value: figure([outcome.fillMs[engine] ?? Number.NaN]),
      met: null,
    })
    rows.push({
      scenario: SCENARIO,
      figure: `${name}: answers other than 200, lists not of 50 pending`,
      unit: 'count',
      value: figure(rounds.map((r) => Object.entries(r.statuses).reduce((n, [key, count]) => n + (key.endsWith(' 200') ? 0 : count), 0) + r.shortPages)),
      target: '0',
      met: rounds.every((r) => r.shortPages === 0 && Object.keys(r.statuses).every((key) => key.endsWith(' 200'))),
    })
  }
  return rows
}
