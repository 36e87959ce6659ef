// The pool of connections to PostgreSQL (Bun's own client) and the rules every operation of the store
// follows: a transaction that PostgreSQL aborts for a serialization failure or a deadlock is run again; a
// database that cannot be reached is StoreBusyError (503 to a client, retry shortly), not a fault; and no
// message names the URL's password. bigint columns arrive as strings: `num` turns them into numbers
// (every value the store keeps is far below 2^53).
import { SQL } from 'bun'
import { StoreBusyError } from '../errors'

/** SQLSTATEs after which the same transaction may succeed: serialization failure, deadlock detected. */
const RETRYABLE = new Set(['40001', '40P01'])
const MAX_ATTEMPTS = 10
/** Bun's own codes for a connection that failed or went away. */
const CONNECTION_CODES = new Set(['ERR_POSTGRES_CONNECTION_CLOSED', 'ERR_POSTGRES_CONNECTION_REFUSED', 'ERR_POSTGRES_CONNECTION_TIMEOUT'])
/** SQLSTATEs of a server that cannot serve now: connection exceptions (class 08), shutting down or starting, too many connections. */
const UNAVAILABLE = (sqlstate: string) => sqlstate.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(sqlstate)

export type Db = {
  sql: SQL
  /** host:port/database, for messages: never the user or the password. */
  where: string
  /** Runs `work` in one READ COMMITTED transaction; again, from the start, when PostgreSQL aborted it for a serialization failure or deadlock. */
  transaction<T>(work: (tx: SQL) => Promise<T>): Promise<T>
  /** One statement (or reads) outside a transaction, with the same error mapping. */
  run<T>(work: (sql: SQL) => Promise<T>): Promise<T>
}

type Row = Record<string, unknown>

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

export function openPool(url: string, options: { max?: number } = {}): Db {
  const where = describeUrl(url)
  const sql = new SQL(url, {
    max: options.max ?? 10,
    // A database that does not answer a new connection in 10 s is down for this request's purposes.
    connectionTimeout: 10,
    idleTimeout: 60,
    connection: { application_name: 'alttext' },
  })
  const mapped = (error: unknown): unknown => {
    if (unreachable(error))
      return new StoreBusyError(
        5,
        `PostgreSQL at ${where} cannot be reached: ${(error as Error).message}`,
        'the database cannot be reached right now; retry shortly',
      )
    const sqlstate = sqlstateOf(error)
    if (sqlstate !== undefined && RETRYABLE.has(sqlstate))
      return new StoreBusyError(
        1,
        `PostgreSQL at ${where}: a transaction was aborted ${MAX_ATTEMPTS} times in a row (SQLSTATE ${sqlstate})`,
        'the database is busy with concurrent changes; nothing was changed, retry shortly',
      )
    return error
  }
  return {
    sql,
    where,
    async transaction(work) {
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

/** A bigint column (a string from Bun's client) as a number; null stays null. */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value)
}

export function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value)
}
