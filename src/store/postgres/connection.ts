// The pool of connections to PostgreSQL (Bun's own client) and the rules every operation of the store
// follows: a transaction that PostgreSQL aborts for a serialization failure or a deadlock is run again; a
// database that cannot be reached, a lock wait or a statement that ran out of time is StoreBusyError (503 to
// a client, retry shortly), not a fault; every session is bounded (SESSION_LIMITS); and no message names
// the URL's password. bigint columns arrive as strings: `num` (shared/rows.ts) turns them into numbers
// (every value the store keeps is far below 2^53).
import { SQL } from 'bun'
import { StoreBusyError } from '../contract'
import type { Row } from '../shared/rows'

/** SQLSTATEs after which the same transaction may succeed: serialization failure, deadlock detected. */
const RETRYABLE = new Set(['40001', '40P01'])
const MAX_ATTEMPTS = 10
/** Bun's own codes for a connection that failed or went away. */
const CONNECTION_CODES = new Set(['ERR_POSTGRES_CONNECTION_CLOSED', 'ERR_POSTGRES_CONNECTION_REFUSED', 'ERR_POSTGRES_CONNECTION_TIMEOUT'])
/**
 * SQLSTATEs of a server that cannot serve now: connection exceptions (class 08), shutting down or starting,
 * too many connections, and a session the server ended because it idled inside a transaction.
 */
const UNAVAILABLE = (sqlstate: string) => sqlstate.startsWith('08') || ['57P01', '57P02', '57P03', '53300', '25P03'].includes(sqlstate)
/** lock_timeout ran out: another session holds the row (perhaps a replica that went silent inside a transaction). */
const LOCK_NOT_AVAILABLE = '55P03'
/** statement_timeout ran out (or the statement was cancelled). */
const QUERY_CANCELED = '57014'

/**
 * Bounds of every session of the pool, sent as startup parameters when a connection opens. A replica that
 * goes silent inside a transaction (a network that drops its packets, a frozen process) keeps its row
 * locks until PostgreSQL ends its session: without these, every replica's requests for that account wait
 * behind it until the server's TCP keepalive (about 2 h on Linux) and fill their pools meanwhile.
 */
export type SessionLimits = {
  /** PostgreSQL ends a session idle inside a transaction this long, which releases its locks. */
  idleInTransactionMs: number
  /** A statement that waits this long for a lock fails (55P03): 503 database_busy, retry. */
  lockTimeoutMs: number
  /** A statement that runs this long is cancelled (57014): 503 database_busy, retry. */
  statementTimeoutMs: number
  /** The server probes a silent client after this many idle seconds, every `keepaliveIntervalSeconds`, `keepaliveCount` times. */
  keepaliveIdleSeconds: number
  keepaliveIntervalSeconds: number
  keepaliveCount: number
  /** The server drops a connection whose sent data stays unacknowledged this long (tcp_user_timeout). */
  unacknowledgedMs: number
}

/** Every transaction here is a few statements without a pause: 10 s idle inside one means its replica is gone. */
export const SESSION_LIMITS: SessionLimits = {
  idleInTransactionMs: 10_000,
  lockTimeoutMs: 3000,
  statementTimeoutMs: 30_000,
  keepaliveIdleSeconds: 30,
  keepaliveIntervalSeconds: 10,
  keepaliveCount: 3,
  unacknowledgedMs: 30_000,
}

/**
 * The startup parameters of a session under `limits`. Bun's client sets no TCP keepalive of its own, so the
 * server's (tcp_keepalives_*, tcp_user_timeout) is what notices a client that went silent outside a transaction.
 */
export function sessionParameters(limits: SessionLimits): Record<string, string | number> {
  return {
    application_name: 'alttext',
    idle_in_transaction_session_timeout: limits.idleInTransactionMs,
    lock_timeout: limits.lockTimeoutMs,
    statement_timeout: limits.statementTimeoutMs,
    tcp_keepalives_idle: limits.keepaliveIdleSeconds,
    tcp_keepalives_interval: limits.keepaliveIntervalSeconds,
    tcp_keepalives_count: limits.keepaliveCount,
    tcp_user_timeout: limits.unacknowledgedMs,
  }
}

export type PoolOptions = {
  max?: number
  /** Tests shorten them; the service always uses SESSION_LIMITS. */
  limits?: Partial<SessionLimits>
}

export type Db = {
  sql: SQL
  /** The bounds every session of the pool runs under. */
  limits: SessionLimits
  /** host:port/database, for messages: never the user or the password. */
  where: string
  /** Runs `work` in one READ COMMITTED transaction; again, from the start, when PostgreSQL aborted it for a serialization failure or deadlock. */
  transaction<T>(work: (tx: SQL) => Promise<T>): Promise<T>
  /**
   * `transaction`, for a body that locks the account's row first (lockAccount): this replica's such
   * transactions of one account run one after another, and those waiting for their turn wait here, for at
   * most `lockTimeoutMs`, without a connection of the pool. So a row lock held by a silent replica ties up
   * one connection per account, not the whole pool.
   */
  accountTransaction<T>(accountId: number, work: (tx: SQL) => Promise<T>): Promise<T>
  /** One statement (or reads) outside a transaction, with the same error mapping. */
  run<T>(work: (sql: SQL) => Promise<T>): Promise<T>
}

const sqlstateOf = (error: unknown): string | undefined => (error instanceof SQL.PostgresError ? error.errno : undefined)

/** Whether the error says the database could not be reached or cannot serve now. */
export function unreachable(error: unknown): boolean {
  if (!(error instanceof SQL.PostgresError)) return false
  if (CONNECTION_CODES.has(error.code)) return true
  const sqlstate = error.errno
  return sqlstate !== undefined && UNAVAILABLE(sqlstate)
}

/** host:port/database of a URL, without user and password. */
export function describeUrl(url: string): string {
  const parsed = new URL(url)
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`
}

export function openPool(url: string, options: PoolOptions = {}): Db {
  const where = describeUrl(url)
  const limits = { ...SESSION_LIMITS, ...options.limits }
  const sql = new SQL(url, {
    max: options.max ?? 10,
    // A database that does not answer a new connection in 10 s is down for this request's purposes.
    connectionTimeout: 10,
    idleTimeout: 60,
    connection: sessionParameters(limits),
  })
  const mapped = (error: unknown): unknown => {
    if (unreachable(error))
      return new StoreBusyError(
        5,
        `PostgreSQL at ${where} cannot be reached: ${(error as Error).message}`,
        'the database cannot be reached right now; retry shortly',
      )
    const sqlstate = sqlstateOf(error)
    if (sqlstate === LOCK_NOT_AVAILABLE)
      return new StoreBusyError(
        1,
        `PostgreSQL at ${where}: a lock wait ran out after ${limits.lockTimeoutMs / 1000} s (SQLSTATE ${sqlstate}); another session holds the row`,
        'the database is busy with another change to the same data; nothing was changed, retry shortly',
      )
    if (sqlstate === QUERY_CANCELED)
      return new StoreBusyError(
        5,
        `PostgreSQL at ${where}: a statement was cancelled (SQLSTATE ${sqlstate}; statement_timeout ${limits.statementTimeoutMs / 1000} s)`,
        'the database did not answer in time; nothing was changed, retry shortly',
      )
    if (sqlstate !== undefined && RETRYABLE.has(sqlstate))
      return new StoreBusyError(
        1,
        `PostgreSQL at ${where}: a transaction was aborted ${MAX_ATTEMPTS} times in a row (SQLSTATE ${sqlstate})`,
        'the database is busy with concurrent changes; nothing was changed, retry shortly',
      )
    return error
  }
  /** Per account, the turn the next of this replica's account transactions waits for. */
  const turns = new Map<number, Promise<void>>()
  const transaction: Db['transaction'] = async (work) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await sql.begin((tx) => work(tx))) as Awaited<ReturnType<typeof work>>
      } catch (error) {
        const sqlstate = sqlstateOf(error)
        if (sqlstate === undefined || !RETRYABLE.has(sqlstate) || attempt >= MAX_ATTEMPTS) throw mapped(error)
        // Apart, at random, so the transactions that collided do not collide again.
        await Bun.sleep(Math.random() * 5 * attempt)
      }
    }
  }
  return {
    sql,
    limits,
    where,
    transaction,
    async accountTransaction(accountId, work) {
      const before = turns.get(accountId) ?? Promise.resolve()
      const { promise: done, resolve: finish } = Promise.withResolvers<void>()
      // The next one waits for this one and every one before it (one that gave up waiting is done at once).
      const turn = before.then(() => done)
      turns.set(accountId, turn)
      let timer: Timer | undefined
      try {
        const mine = await Promise.race([
          before.then(() => true),
          new Promise<false>((resolve) => {
            timer = setTimeout(() => resolve(false), limits.lockTimeoutMs)
          }),
        ])
        if (!mine)
          throw new StoreBusyError(
            1,
            `PostgreSQL at ${where}: this replica's changes to account ${accountId} waited ${limits.lockTimeoutMs / 1000} s for the one before them`,
            'the database is busy with another change to the same data; nothing was changed, retry shortly',
          )
        return await transaction(work)
      } finally {
        clearTimeout(timer)
        finish()
        if (turns.get(accountId) === turn) turns.delete(accountId)
      }
    },
    async run(work) {
      try {
        return await work(sql)
      } catch (error) {
        throw mapped(error)
      }
    },
  }
}

/** The first row of a statement's result, or null. */
export async function first(sql: SQL, text: string, values: unknown[] = []): Promise<Row | null> {
  const rows = (await sql.unsafe(text, values)) as Row[]
  return rows[0] ?? null
}

/**
 * Locks the account's row until the transaction ends, so "check, then write" on the account's rows is one
 * step across replicas (a second such transaction waits here); null when there is no such account.
 */
export const lockAccount = (tx: SQL, accountId: number): Promise<Row | null> =>
  first(tx, 'SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId])

/** How many rows a statement changed. */
export async function changed(sql: SQL, text: string, values: unknown[] = []): Promise<number> {
  const result = (await sql.unsafe(text, values)) as { count: number | null }
  return result.count ?? 0
}
