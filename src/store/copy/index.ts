// `alttext db copy FROM TO`: every row of every table of an alttext database into an empty one, SQLite or
// PostgreSQL either way, table by table at the SQL level, in foreign-key order, ids kept. FROM is read in
// one snapshot; TO is written in one transaction, which is read back and compared with FROM (rows and a
// checksum of each table) before it commits: a copy that does not match is rolled back and TO stays empty.
// Then TO's id sequences are moved past every id FROM ever handed out, so none is given twice.
//
// Both must be at one schema version: TO, empty, is migrated to FROM's version (never further) by this
// binary's migrations; a TO at a newer version than FROM is refused, as is a FROM newer than this binary.
import { existsSync, realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { describeUrl } from '../postgres/connection'
import { openPostgresSide } from './postgres'
import type { Reader, Side, Writer } from './side'
import { openSqliteSource, openSqliteTarget } from './sqlite'
import { type Column, CopyError, createChecksum, type Kind, normalize, type Table, type Value } from './values'

export { CopyError } from './values'

/** Tables not copied, and why: said in the report. */
const NOT_COPIED: Record<string, string> = {
  schema_migrations: 'each database keeps its own record of its migrations (the versions are compared instead)',
  account_changes:
    "SQLite's log that tells a running service what another process changed; a database no service has read has nothing to tell (PostgreSQL notifies instead)",
}

/** Tables the migrations put rows in (one fixed row each): TO's are replaced by FROM's. */
const SEEDED = new Set(['health_probe', 'reset_token_decoys'])

/**
 * Tables kept by triggers on other tables (migration 12's count of waiting batch images): copied last,
 * replacing what TO's triggers wrote while the other tables went in.
 */
const KEPT_BY_TRIGGERS = ['batch_image_bytes']

export type Location = { engine: 'sqlite'; path: string } | { engine: 'postgres'; url: string }

/** A postgres:// or postgresql:// URL, or else a file path. */
export function parseLocation(text: string): Location {
  return /^postgres(ql)?:\/\//i.test(text.trim()) ? { engine: 'postgres', url: text.trim() } : { engine: 'sqlite', path: text }
}

/** The same database named twice is refused: a resolved path (links followed), or host:port/database. */
function identityOf(location: Location): string {
  if (location.engine === 'postgres') return `postgres:${describeUrl(location.url).toLowerCase()}`
  const path = resolve(location.path)
  return `sqlite:${existsSync(path) ? realpathSync(path) : path}`
}

type Pair = { name: string; kind: Kind; from: Column; to: Column }
type PlannedTable = { name: string; from: Table; to: Table; pairs: Pair[] }

export type CopiedTable = { name: string; rows: number; checksum: string }

export type CopyReport = {
  from: string
  to: string
  fromEngine: Side['engine']
  toEngine: Side['engine']
  schemaVersion: number
  /** TO had no schema (or an older one) and was migrated by this copy. */
  migrated: boolean
  tables: CopiedTable[]
  /** The id sequences TO was moved on: the next id each hands out. */
  sequences: { table: string; column: string; next: number }[]
  notCopied: { table: string; why: string }[]
  ms: number
}

/** Columns of one table on both sides, paired by name; SQLite's hidden rowid pairs with PostgreSQL's one extra identity column. */
function pairColumns(from: Table, to: Table): Pair[] {
  const pairs: Pair[] = []
  const toByName = new Map(to.columns.map((c) => [c.name, c]))
  const unpairedFrom: Column[] = []
  for (const column of from.columns) {
    const other = toByName.get(column.name)
    if (other) {
      pairs.push({ name: column.name, kind: pairKind(from.name, column, other), from: column, to: other })
      toByName.delete(column.name)
    } else unpairedFrom.push(column)
  }
  const unpairedTo = [...toByName.values()]
  // generation_history: SQLite's rowid is PostgreSQL's seq, the order of insertion.
  const rowidFrom = unpairedFrom.find((c) => c.hidden)
  const identityTo = unpairedTo.filter((c) => !c.hidden && c.generated)
  if (rowidFrom && identityTo.length === 1) {
    pairs.push({ name: identityTo[0]!.name, kind: 'integer', from: rowidFrom, to: identityTo[0]! })
    unpairedFrom.splice(unpairedFrom.indexOf(rowidFrom), 1)
    unpairedTo.splice(unpairedTo.indexOf(identityTo[0]!), 1)
  }
  const identityFrom = unpairedFrom.filter((c) => !c.hidden && c.generated)
  const rowidTo = unpairedTo.find((c) => c.hidden)
  if (rowidTo && identityFrom.length === 1) {
    pairs.push({ name: identityFrom[0]!.name, kind: 'integer', from: identityFrom[0]!, to: rowidTo })
    unpairedFrom.splice(unpairedFrom.indexOf(identityFrom[0]!), 1)
    unpairedTo.splice(unpairedTo.indexOf(rowidTo), 1)
  }
  // A hidden rowid with no place on the other side was never part of the data.
  const extraFrom = unpairedFrom.filter((c) => !c.hidden)
  const extraTo = unpairedTo.filter((c) => !c.hidden)
  if (extraFrom.length > 0 || extraTo.length > 0) {
    const says = [
      ...extraFrom.map((c) => `${from.name}.${c.name} is in FROM but not in TO`),
      ...extraTo.map((c) => `${to.name}.${c.name} is in TO but not in FROM`),
    ]
    throw new CopyError(`FROM and TO have different columns although their schema versions match: ${says.join('; ')}`)
  }
  // One order on both sides: the checksums must see the values in the same order.
  return pairs.toSorted((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function pairKind(table: string, a: Column, b: Column): Kind {
  if (a.kind === b.kind) return a.kind
  const kinds = new Set([a.kind, b.kind])
  // SQLite keeps PostgreSQL's booleans as 0 and 1.
  if (kinds.has('boolean') && kinds.has('integer')) return 'boolean'
  throw new CopyError(`the column ${table}.${a.name} is ${a.kind} in FROM but ${b.kind} in TO`)
}

/** Parents before children; among tables free to go, by name. Tables kept by triggers go last. */
function foreignKeyOrder(tables: Table[]): Table[] {
  const byName = new Map(tables.map((t) => [t.name, t]))
  const done = new Set<string>()
  const ordered: Table[] = []
  const rest = tables.filter((t) => !KEPT_BY_TRIGGERS.includes(t.name)).toSorted((a, b) => (a.name < b.name ? -1 : 1))
  while (rest.length > 0) {
    const next = rest.find((t) => t.parents.every((p) => p === t.name || done.has(p) || !byName.has(p)))
    if (!next) throw new CopyError(`the tables ${rest.map((t) => t.name).join(', ')} refer to each other in a cycle; db copy cannot order them`)
    ordered.push(next)
    done.add(next.name)
    rest.splice(rest.indexOf(next), 1)
  }
  return [...ordered, ...tables.filter((t) => KEPT_BY_TRIGGERS.includes(t.name))]
}

function plan(fromTables: Table[], toTables: Table[]): PlannedTable[] {
  const copied = (tables: Table[]) => tables.filter((t) => !(t.name in NOT_COPIED))
  const from = copied(fromTables)
  const to = new Map(copied(toTables).map((t) => [t.name, t]))
  const onlyFrom = from.filter((t) => !to.has(t.name)).map((t) => t.name)
  const onlyTo = [...to.keys()].filter((name) => !from.some((t) => t.name === name))
  if (onlyFrom.length > 0 || onlyTo.length > 0)
    throw new CopyError(
      `FROM and TO have different tables although their schema versions match${onlyFrom.length > 0 ? `; only in FROM: ${onlyFrom.join(', ')}` : ''}${onlyTo.length > 0 ? `; only in TO: ${onlyTo.join(', ')}` : ''}`,
    )
  return foreignKeyOrder(from).map((table) => ({ name: table.name, from: table, to: to.get(table.name)!, pairs: pairColumns(table, to.get(table.name)!) }))
}

/** What TO holds beyond the rows its migrations wrote: `accounts 3, api_keys 4`; empty when nothing. */
async function contents(reader: Reader, tables: Table[]): Promise<string[]> {
  const held: string[] = []
  for (const table of tables) {
    if (table.name in NOT_COPIED) continue
    const rows = await reader.count(table)
    if (rows > (SEEDED.has(table.name) ? 1 : 0)) held.push(`${table.name} ${rows}`)
  }
  return held
}

const notEmpty = (label: string, held: string[]) =>
  new CopyError(
    `TO (${label}) is not empty: it holds rows (${held.join(', ')}). db copy writes only into an empty database: give a new file, or a new PostgreSQL database (createdb), and copy again`,
  )

/** Reads every row of the table and turns each value into its engine-free form, a page at a time. */
async function* rowsOf(reader: Reader, table: Table, pairs: Pair[], side: 'from' | 'to') {
  const columns = pairs.map((p) => p[side])
  // A value that does not fit is named by its row's primary key.
  const key = table.primaryKey.map((name) => ({ name, at: columns.findIndex((c) => c.name === name) }))
  const rowName = (raw: unknown[]) => key.map((k) => `${k.name} ${k.at < 0 ? '?' : String(raw[k.at])}`).join(', ')
  for await (const page of reader.pages(table, columns)) {
    yield page.map((raw) =>
      raw.map((value, i) =>
        normalize(
          pairs[i]!.kind,
          value,
          () => `${side === 'from' ? 'FROM' : 'TO'}: the row of ${table.name} with ${rowName(raw)}, in column ${pairs[i]!.name},`,
        ),
      ),
    )
  }
}

async function checksumOf(reader: Reader, table: Table, pairs: Pair[], side: 'from' | 'to') {
  const checksum = createChecksum()
  for await (const page of rowsOf(reader, table, pairs, side)) for (const row of page) checksum.add(row)
  return checksum
}

async function copyTables(reader: Reader, writer: Writer, planned: PlannedTable[], toTables: Table[], toLabel: string) {
  // Checked again in the writing transaction: nothing can have been added since the first look.
  const held = await contents(writer, toTables)
  if (held.length > 0) throw notEmpty(toLabel, held)

  const copied: CopiedTable[] = []
  const mismatches: string[] = []
  for (const table of planned) {
    await writer.clear(table.to)
    const checksum = createChecksum()
    const columns = table.pairs.map((p) => p.to)
    for await (const page of rowsOf(reader, table.from, table.pairs, 'from')) {
      for (const row of page) checksum.add(row)
      await writer.insert(table.to, columns, page as Value[][])
    }
    copied.push({ name: table.name, rows: checksum.rows, checksum: checksum.digest() })
  }
  // Rows TO's own triggers logged while the copy went in.
  for (const table of toTables) if (table.name === 'account_changes') await writer.clear(table)

  const sequences: CopyReport['sequences'] = []
  for (const table of planned) {
    for (const pair of table.pairs) {
      if (!pair.from.generated && !pair.to.generated) continue
      const fromMark = await reader.highWater(table.from, pair.from)
      const value = Math.max(fromMark, await writer.highWater(table.to, pair.to))
      if (!(await writer.raiseSequence(table.to, pair.to, value))) continue
      const reached = await writer.highWater(table.to, pair.to)
      if (reached < fromMark) mismatches.push(`${table.name}.${pair.name} would hand out ${reached + 1} again (FROM reached ${fromMark})`)
      sequences.push({ table: table.name, column: pair.name, next: reached + 1 })
    }
  }

  // Read back through the same transaction: what commits is what was compared.
  for (const [i, table] of planned.entries()) {
    const expected = copied[i]!
    const got = await checksumOf(writer, table.to, table.pairs, 'to')
    const counted = await writer.count(table.to)
    if (counted !== expected.rows || got.rows !== expected.rows) mismatches.push(`${table.name}: FROM has ${expected.rows} rows, TO ${counted}`)
    else if (got.digest() !== expected.checksum)
      mismatches.push(`${table.name}: the rows differ (checksum ${expected.checksum.slice(0, 16)} in FROM, ${got.digest().slice(0, 16)} in TO)`)
  }
  if (mismatches.length > 0)
    throw new CopyError(`the copy does not match FROM, so it was rolled back and TO holds none of its rows: ${mismatches.join('; ')}. Please report this`)
  return { copied, sequences }
}

async function openSide(location: Location, role: 'FROM' | 'TO', live: boolean): Promise<Side> {
  if (location.engine === 'postgres') return openPostgresSide(location.url, role, { live })
  return role === 'FROM' ? openSqliteSource(location.path, { live }) : openSqliteTarget(location.path)
}

/** Checks the two schema versions; returns whether TO must be migrated first. */
async function checkVersions(from: Side, to: Side): Promise<{ version: number; migrate: boolean }> {
  const version = await from.schemaVersion()
  if (version === null) throw new CopyError(`FROM (${from.label}) is not an alttext database: it has no schema_migrations table`)
  if (version > from.knownVersion)
    throw new CopyError(
      `FROM (${from.label}) has schema version ${version}, newer than this alttext knows for ${from.engine} (${from.knownVersion}): copy with the alttext that wrote it, or a newer one`,
    )
  if (version > to.knownVersion)
    throw new CopyError(
      `FROM has schema version ${version}, but this alttext's ${to.engine} schema reaches only version ${to.knownVersion}: what versions ${to.knownVersion + 1} to ${version} added cannot be held by ${to.engine} yet. Copy with an alttext whose ${to.engine} schema reaches ${version}`,
    )
  const toVersion = await to.schemaVersion()
  if (toVersion === null) {
    if (await to.hasTables())
      throw new CopyError(`TO (${to.label}) holds tables but is not an alttext database (no schema_migrations table): give an empty database`)
    return { version, migrate: true }
  }
  if (toVersion > version)
    throw new CopyError(
      `TO has schema version ${toVersion}, FROM ${version}: upgrade FROM first. Start this alttext's service on FROM once (it migrates at start; take a backup before), stop it, then copy again`,
    )
  return { version, migrate: toVersion < version }
}

/** Copies everything from FROM into the empty TO and verifies it; throws CopyError (TO left as it was) when refused or failed. */
export async function copyDatabase(fromText: string, toText: string, options: { live?: boolean } = {}): Promise<CopyReport> {
  const started = performance.now()
  const live = options.live === true
  const [fromLocation, toLocation] = [parseLocation(fromText), parseLocation(toText)]
  if (identityOf(fromLocation) === identityOf(toLocation))
    throw new CopyError(`FROM and TO are the same database (${identityOf(fromLocation).replace(/^\w+:/, '')})`)
  const from = await openSide(fromLocation, 'FROM', live)
  let to: Side | undefined
  let succeeded = false
  try {
    to = await openSide(toLocation, 'TO', live)
    const target = to
    const { version, migrate } = await checkVersions(from, target)
    if (migrate) {
      if (await target.hasTables()) {
        const held = await target.read((reader) => target.tables().then((tables) => contents(reader, tables)))
        if (held.length > 0) throw notEmpty(target.label, held)
      }
      await target.migrate(version)
    }
    const fromTables = await from.tables()
    const toTables = await target.tables()
    const planned = plan(fromTables, toTables)
    const { copied, sequences } = await from.read((reader) => target.write((writer) => copyTables(reader, writer, planned, toTables, target.label)))
    succeeded = true
    return {
      from: from.label,
      to: target.label,
      fromEngine: from.engine,
      toEngine: target.engine,
      schemaVersion: version,
      migrated: migrate,
      tables: copied,
      sequences,
      notCopied: [...fromTables, ...toTables]
        .map((t) => t.name)
        .filter((name, i, names) => name in NOT_COPIED && names.indexOf(name) === i)
        .map((table) => ({ table, why: NOT_COPIED[table]! })),
      ms: performance.now() - started,
    }
  } finally {
    await to?.close(succeeded)
    await from.close(succeeded)
  }
}
