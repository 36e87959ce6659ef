// What `alttext db copy` knows of tables and values on either engine: four kinds of column, the one
// engine-free form of a value (so a row read from SQLite and the same row read from PostgreSQL compare
// equal), and a checksum of a table's rows that does not depend on their order or on either engine's
// collation.

/** integer: SQLite INTEGER, PostgreSQL bigint/integer; boolean: SQLite's 0/1 where PostgreSQL has boolean. */
export type Kind = 'integer' | 'boolean' | 'text' | 'bytes'

/** A value in its engine-free form; each side turns it into what it stores. */
export type Value = null | bigint | boolean | string | Uint8Array

export type Column = {
  /** The name the other engine pairs it by: SQLite's hidden rowid is `rowid`. */
  name: string
  kind: Kind
  /** How this engine's SQL names it (quoted, or `rowid`). */
  sql: string
  /** PostgreSQL's type for a cast in an insert (`bigint`, `bytea`…); SQLite's declared type. */
  type: string
  /** SQLite's rowid of a table without an INTEGER PRIMARY KEY: copied only where the other side has a place for it. */
  hidden?: true
  /** Values handed out by the database itself: a PostgreSQL identity column, a SQLite INTEGER PRIMARY KEY or rowid. */
  generated?: true
}

export type Table = {
  name: string
  columns: Column[]
  /** Column names (Column.name) of the primary key, in its order; the rows are read in this order. */
  primaryKey: string[]
  /** The tables this one refers to (foreign keys). */
  parents: string[]
}

/** A refusal or failure of the copy, said so the operator can act on it. Nothing was written to TO. */
export class CopyError extends Error {}

const describeRaw = (raw: unknown): string => {
  if (raw instanceof Uint8Array) return `${raw.byteLength} bytes`
  const text = typeof raw === 'string' ? JSON.stringify(raw) : String(raw)
  return text.length > 40 ? `${text.slice(0, 40)}…` : text
}

/**
 * The engine-free form of a value read from either engine, or a CopyError when the other engine could
 * not hold it as it is (SQLite lets any column hold any type: a 2 in a flag column, text in a number).
 */
export function normalize(kind: Kind, raw: unknown, where: () => string): Value {
  if (raw === null || raw === undefined) return null
  switch (kind) {
    case 'integer':
      if (typeof raw === 'bigint') return raw
      if (typeof raw === 'number' && Number.isSafeInteger(raw)) return BigInt(raw)
      // PostgreSQL's bigint arrives as a string.
      if (typeof raw === 'string' && /^-?\d+$/.test(raw)) return BigInt(raw)
      break
    case 'boolean':
      if (typeof raw === 'boolean') return raw
      if (raw === 0n || raw === 0) return false
      if (raw === 1n || raw === 1) return true
      break
    case 'text':
      if (typeof raw === 'string') return raw
      break
    case 'bytes':
      if (raw instanceof Uint8Array) return raw
      break
  }
  throw new CopyError(`${where()} holds ${describeRaw(raw)}, which is not a valid ${kind} value; fix or remove that row in FROM, then copy again`)
}

const SEPARATOR = new Uint8Array([0x1f])

/**
 * The sum of every row's SHA-256 (modulo 2^256): the same for the same rows in any order, so the rows
 * read from FROM and those read back from TO are compared without sorting either (the engines sort text
 * differently). Each value is written with its kind and length, so no two different rows hash alike.
 */
export function createChecksum() {
  const MOD = 1n << 256n
  let sum = 0n
  let rows = 0
  return {
    /** One row, its values in the order both sides agreed on. */
    add(values: Value[]): void {
      const hasher = new Bun.CryptoHasher('sha256')
      for (const value of values) {
        if (value === null) hasher.update('n')
        else if (typeof value === 'bigint') hasher.update(`i${value}`)
        else if (typeof value === 'boolean') hasher.update(value ? 'b1' : 'b0')
        else if (typeof value === 'string') hasher.update(`t${Buffer.byteLength(value)}:${value}`)
        else {
          hasher.update(`x${value.byteLength}:`)
          hasher.update(value)
        }
        hasher.update(SEPARATOR)
      }
      sum = (sum + BigInt(`0x${hasher.digest('hex')}`)) % MOD
      rows++
    },
    get rows() {
      return rows
    },
    /** 64 hex digits. */
    digest: () => sum.toString(16).padStart(64, '0'),
  }
}

/** `"name"`, for SQL on both engines (names come from the databases' own catalogs). */
export const quoteName = (name: string) => `"${name.replaceAll('"', '""')}"`

/** Rows per page; pages of tables with blobs (uploaded batch images) are small, so memory stays bounded. */
const PAGE_ROWS = 1000
const BLOB_PAGE_ROWS = 8

/** How a table is read page by page in primary-key order: the key's places among the columns, its SQL, the column list, the page size. */
export function pageShape(table: Table, columns: Column[]): { at: number[]; key: string; list: string; size: number } {
  const at = table.primaryKey.map((name) => {
    const index = columns.findIndex((c) => c.name === name)
    if (index < 0) throw new CopyError(`the primary key column ${table.name}.${name} is not copied`)
    return index
  })
  return {
    at,
    key: at.map((i) => columns[i]!.sql).join(', '),
    list: columns.map((c) => c.sql).join(', '),
    size: columns.some((c) => c.kind === 'bytes') ? BLOB_PAGE_ROWS : PAGE_ROWS,
  }
}
