// The store engines a test runs the same assertions on: SQLite always, PostgreSQL when the harness can
// start it (under CI=true it must). Each `fresh()` is a database of its own. "Two instances" are two
// pools on one database: for SQLite the serving store and one opened beside it as alttext admin opens
// it; for PostgreSQL two replicas' stores.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/store'
import { createSqliteStore } from '../../src/store/sqlite/store'
import type { Store } from '../../src/store/contract'
import { postgresUnavailable, sharedPostgres } from './postgres'

export type OpenedStore = {
  store: Store
  /** Another instance on the same database (see the top of this file). */
  second(): Promise<Store>
  /** Rows in credit_holds, lapsed ones included. */
  holdRows(): Promise<number>
  /** Deletes a batch with its items behind the store's back (as an account deletion or a purge would). */
  deleteBatch(id: string): Promise<void>
  close(): Promise<void>
}

export type StoreEngine = { name: 'SQLite' | 'PostgreSQL'; skip: boolean; fresh(): Promise<OpenedStore> }

const sqlite: StoreEngine = {
  name: 'SQLite',
  skip: false,
  async fresh() {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-store-engine-'))
    const path = join(dir, 'alttext.db')
    const store = createSqliteStore(path)
    const others: Store[] = []
    return {
      store,
      second: async () => {
        const other = createSqliteStore(path, { processLock: false })
        others.push(other)
        return other
      },
      holdRows: async () => store.db.query<{ n: number }, []>('SELECT count(*) AS n FROM credit_holds').get()!.n,
      deleteBatch: async (id) => void store.db.query('DELETE FROM batches WHERE id = ?').run(id),
      close: async () => {
        for (const other of others) await other.close()
        await store.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  },
}

const unavailable = postgresUnavailable()
const ci = process.env.CI === 'true'

const postgres: StoreEngine = {
  name: 'PostgreSQL',
  skip: unavailable !== null && !ci,
  async fresh() {
    const cluster = await sharedPostgres()
    const url = await cluster.createDatabase()
    // The tests move time: their `now` stands in for the database's clock (clock: 'caller').
    const stores: PostgresStore[] = [await createPostgresStore(url, { clock: 'caller' })]
    const { sql } = stores[0]!.db
    return {
      store: stores[0]!,
      second: async () => {
        const other = await createPostgresStore(url, { clock: 'caller' })
        stores.push(other)
        return other
      },
      holdRows: async () => Number((await sql`SELECT count(*) AS n FROM credit_holds`)[0].n),
      deleteBatch: async (id) => void (await sql`DELETE FROM batches WHERE id = ${id}`),
      close: async () => {
        for (const store of stores) await store.close()
        await cluster.dropDatabase(url)
      },
    }
  },
}

/** Both engines; a file that uses them says once, in its output, when PostgreSQL is skipped and why. */
export function storeEngines(tag: string): StoreEngine[] {
  if (postgres.skip) console.warn(`[${tag}] PostgreSQL SKIPPED: ${unavailable}`)
  return [sqlite, postgres]
}
