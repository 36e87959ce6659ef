// One end of `alttext db copy`, whichever its engine: what the copy asks of FROM (read everything in one
// snapshot) and of TO (migrate it, write everything in one transaction, read it back before the commit).
import type { Column, Table, Value } from './values'

export interface Reader {
  /** The table's rows by primary key, a page at a time; each row's values as the engine gives them, in `columns` order. */
  pages(table: Table, columns: Column[]): AsyncGenerator<unknown[][]>
  count(table: Table): Promise<number>
  /** The highest value the column was ever given: its sequence's mark where the engine keeps one, else the largest present; 0 for none. */
  highWater(table: Table, column: Column): Promise<number>
}

export interface Writer extends Reader {
  /** Deletes every row: only ever of a table the emptiness check passed (what migrations or the copy's own triggers put there). */
  clear(table: Table): Promise<void>
  insert(table: Table, columns: Column[], rows: Value[][]): Promise<void>
  /**
   * Makes the column's sequence hand out only values above `value`. False when the engine keeps no
   * sequence for it: a SQLite INTEGER PRIMARY KEY without AUTOINCREMENT goes on from its largest value.
   */
  raiseSequence(table: Table, column: Column, value: number): Promise<boolean>
}

export interface Side {
  engine: 'SQLite' | 'PostgreSQL'
  /** `SQLite file /srv/alttext.db`, `PostgreSQL 10.0.0.5:5432/alttext`: never a password. */
  label: string
  /** The newest schema version this binary has for the engine. */
  knownVersion: number
  /** The newest migration applied; null when the database has no alttext schema (a new file, a new database). */
  schemaVersion(): Promise<number | null>
  /** Whether it holds any table at all (a database with tables but no alttext schema is someone else's). */
  hasTables(): Promise<boolean>
  tables(): Promise<Table[]>
  /** Brings an empty database to `version` with this binary's migrations. */
  migrate(version: number): Promise<void>
  /** Runs `work` in one read transaction: every table as of one moment. */
  read<T>(work: (reader: Reader) => Promise<T>): Promise<T>
  /** Runs `work` in one write transaction, committed only when it returns. */
  write<T>(work: (writer: Writer) => Promise<T>): Promise<T>
  /** `succeeded` false: a database file this copy created is removed again. */
  close(succeeded: boolean): Promise<void>
}
