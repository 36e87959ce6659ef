// A PostgreSQL database as one end of `alttext db copy`. FROM is read in one REPEATABLE READ READ ONLY
// transaction (every table as of one moment); TO is written in one transaction, so a failed copy leaves
// it as it was. Tables are those of the connection's current schema (`public` unless the URL's user has
// another search_path), as the service's migrations make them.
import type { SQL } from 'bun'
import { unreachable } from '../postgres/connection'
import { latestPostgresVersion, migratePostgres } from '../postgres/migrations'
import {
  connectionFailure,
  MINIMUM_SERVER_VERSION,
  openOperatorConnection,
  postgresSchemaVersion,
  serverVersion,
  serviceConnections,
} from '../postgres/inspect'
import type { Reader, Side, Writer } from './side'
import { type Column, CopyError, type Kind, pageShape, quoteName, type Table, type Value } from './values'

/** Bound on one INSERT's parameters (PostgreSQL's limit is 65535) and on its blob bytes. */
const INSERT_PARAMETERS = 5000
const INSERT_BYTES = 8 * 1024 * 1024
/** The name this command's connections have in pg_stat_activity: never counted as a replica's. */
const APPLICATION = 'alttext db copy'

type Row = Record<string, unknown>

function kindOf(type: string, where: string): Kind {
  if (['bigint', 'integer', 'smallint'].includes(type)) return 'integer'
  if (type === 'boolean') return 'boolean'
  if (['text', 'character varying', 'character'].includes(type)) return 'text'
  if (type === 'bytea') return 'bytes'
  throw new CopyError(`${where} has the type ${type}, which db copy does not know`)
}

async function describeTables(sql: SQL): Promise<Table[]> {
  const columns = (await sql.unsafe(
    `SELECT c.table_name, c.column_name, c.data_type, c.is_identity FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position`,
  )) as Row[]
  const keys = (await sql.unsafe(
    `SELECT c.relname AS table_name, a.attname AS column_name FROM pg_index i
     JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
     WHERE i.indisprimary AND n.nspname = current_schema() ORDER BY c.relname, k.position`,
  )) as Row[]
  const references = (await sql.unsafe(
    `SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid JOIN pg_namespace n ON n.oid = k.connamespace
     WHERE k.contype = 'f' AND n.nspname = current_schema()`,
  )) as Row[]
  const tables = new Map<string, Table>()
  for (const row of columns) {
    const name = String(row.table_name)
    const table = tables.get(name) ?? { name, columns: [], primaryKey: [], parents: [] }
    tables.set(name, table)
    const type = String(row.data_type)
    table.columns.push({
      name: String(row.column_name),
      kind: kindOf(type, `column ${name}.${row.column_name}`),
      sql: quoteName(String(row.column_name)),
      type,
      ...(row.is_identity === 'YES' ? { generated: true as const } : {}),
    })
  }
  for (const row of keys) tables.get(String(row.table_name))?.primaryKey.push(String(row.column_name))
  for (const row of references) {
    const table = tables.get(String(row.child))
    if (table && !table.parents.includes(String(row.parent))) table.parents.push(String(row.parent))
  }
  for (const table of tables.values())
    if (table.primaryKey.length === 0) throw new CopyError(`the table ${table.name} has no primary key; db copy reads every table by its primary key`)
  return [...tables.values()]
}

const toStored = (value: Value): string | boolean | Uint8Array | null => (typeof value === 'bigint' ? value.toString() : value)

function reader(sql: SQL): Reader {
  const highWater = async (table: Table, column: Column) => {
    const largest = ((await sql.unsafe(`SELECT max(${column.sql}) AS v FROM ${quoteName(table.name)}`)) as Row[])[0]?.v
    let mark = largest === null || largest === undefined ? 0 : Number(largest)
    if (column.generated) {
      // pg_sequence_last_value: null while the sequence has handed nothing out.
      const rows = (await sql.unsafe('SELECT pg_sequence_last_value(pg_get_serial_sequence($1, $2)::regclass) AS v', [
        quoteName(table.name),
        column.name,
      ])) as Row[]
      const last = rows[0]?.v
      if (last !== null && last !== undefined) mark = Math.max(mark, Number(last))
    }
    return mark
  }
  return {
    async *pages(table, columns) {
      const { at, key, list, size } = pageShape(table, columns)
      let after: unknown[] | null = null
      for (;;) {
        const where: string = after ? `WHERE (${key}) > (${at.map((_, i) => `$${i + 1}`).join(', ')})` : ''
        const page = (await sql
          .unsafe(`SELECT ${list} FROM ${quoteName(table.name)} ${where} ORDER BY ${key} LIMIT ${size}`, after ?? [])
          .values()) as unknown[][]
        if (page.length > 0) yield page
        if (page.length < size) return
        const last = page[page.length - 1]!
        after = at.map((i) => last[i])
      }
    },
    async count(table) {
      return Number(((await sql.unsafe(`SELECT count(*) AS n FROM ${quoteName(table.name)}`)) as Row[])[0]!.n)
    },
    highWater,
  }
}

function writer(sql: SQL): Writer {
  return {
    ...reader(sql),
    async clear(table) {
      await sql.unsafe(`DELETE FROM ${quoteName(table.name)}`)
    },
    async insert(table, columns, rows) {
      const names = columns.map((c) => c.sql).join(', ')
      // Ids are copied as they are: identity columns take them only when told so.
      const overriding = columns.some((c) => c.generated) ? ' OVERRIDING SYSTEM VALUE' : ''
      const perStatement = Math.max(1, Math.floor(INSERT_PARAMETERS / columns.length))
      let chunk: Value[][] = []
      let bytes = 0
      const flush = async () => {
        if (chunk.length === 0) return
        const values: unknown[] = []
        const tuples = chunk.map((row) => `(${row.map((value, i) => `$${values.push(toStored(value))}::${columns[i]!.type}`).join(', ')})`)
        await sql.unsafe(`INSERT INTO ${quoteName(table.name)} (${names})${overriding} VALUES ${tuples.join(', ')}`, values)
        chunk = []
        bytes = 0
      }
      for (const row of rows) {
        chunk.push(row)
        for (const value of row) if (value instanceof Uint8Array) bytes += value.byteLength
        if (chunk.length >= perStatement || bytes >= INSERT_BYTES) await flush()
      }
      await flush()
    },
    async raiseSequence(table, column, value) {
      if (!column.generated) return false
      if (value > 0) await sql.unsafe('SELECT setval(pg_get_serial_sequence($1, $2), $3, true)', [quoteName(table.name), column.name, value])
      return true
    },
  }
}

/**
 * Connects (the first query says whether the server answers, and its version), and refuses a database
 * that alttext replicas are connected to: as FROM unless `live`, as TO always.
 */
export async function openPostgresSide(url: string, role: 'FROM' | 'TO', options: { live: boolean }): Promise<Side> {
  const { sql, where } = openOperatorConnection(url, APPLICATION)
  const label = `PostgreSQL ${where}`
  try {
    let version: Awaited<ReturnType<typeof serverVersion>>
    try {
      version = await serverVersion(sql)
    } catch (error) {
      throw new CopyError(`${role}: ${connectionFailure(error, where)}`)
    }
    if (version.num < MINIMUM_SERVER_VERSION) throw new CopyError(`${role}: ${label} is PostgreSQL ${version.text}; alttext needs 15 or newer`)
    const replicas = await serviceConnections(sql)
    if (replicas > 0 && (role === 'TO' || !options.live))
      throw new CopyError(
        role === 'TO'
          ? `TO: ${replicas} connection(s) of alttext are open to ${where}: stop every alttext service (and alttext admin) using it; db copy writes only into a database no service uses`
          : `FROM: ${replicas} connection(s) of alttext are open to ${where}: stop every alttext service using it first, so that nothing written after the copy is lost. --live copies it anyway, as of this moment (for a test copy, not a move)`,
      )
  } catch (error) {
    await sql.close()
    throw error
  }
  const failed = (error: unknown): never => {
    if (unreachable(error))
      throw new CopyError(`${role}: PostgreSQL at ${where} could no longer be reached: ${(error as Error).message}; nothing was written to TO`)
    throw error
  }
  return {
    engine: 'PostgreSQL',
    label,
    knownVersion: latestPostgresVersion(),
    schemaVersion: () => postgresSchemaVersion(sql).catch(failed),
    async hasTables() {
      const rows = (await sql
        .unsafe("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' LIMIT 1")
        .catch(failed)) as Row[]
      return rows.length > 0
    },
    tables: () => describeTables(sql).catch(failed),
    async migrate(version) {
      await migratePostgres(sql, where, version).catch((error: unknown) => {
        if (unreachable(error)) failed(error)
        throw new CopyError(`TO: cannot migrate ${where} to schema version ${version}: ${(error as Error).message}`)
      })
    },
    read: (work) =>
      (sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', (tx) => work(reader(tx))) as Promise<Awaited<ReturnType<typeof work>>>).catch(failed),
    write: (work) => (sql.begin((tx) => work(writer(tx))) as Promise<Awaited<ReturnType<typeof work>>>).catch(failed),
    close: async () => {
      await sql.close()
    },
  }
}
