// `alttext admin` on PostgreSQL (ALTTEXT_DATABASE_URL or --database-url), beside every replica: the
// replicas hear each change through the schema's NOTIFY triggers. Unlike a replica, the admin never
// migrates: a database at another schema version than this binary's is refused, so an operator's newer
// binary cannot change the schema under running replicas.
import { connectionFailure, openOperatorConnection, postgresSchemaVersion } from '../../store/postgres/inspect'
import { latestPostgresVersion } from '../../store/postgres/migrations'
import { createPostgresStore } from '../../store/postgres/store'
import type { Store } from '../../store/contract'

/** The store on PostgreSQL, or why not (never naming the URL's user or password). `source`: the variable or flag that gave the URL. */
export async function openPostgresForAdmin(url: string, source: string): Promise<{ store: Store } | { failure: string }> {
  const { sql, where } = openOperatorConnection(url, 'alttext admin')
  try {
    let version: number | null
    try {
      version = await postgresSchemaVersion(sql)
    } catch (error) {
      return { failure: `${source}: ${connectionFailure(error, where)}` }
    }
    const known = latestPostgresVersion()
    if (version === null)
      return {
        failure: `${source}: the database ${where} has no alttext schema: start the service on it once (it migrates at start), or fill it with alttext db copy`,
      }
    if (version > known)
      return {
        failure: `${source}: the database ${where} has schema version ${version}, newer than this binary knows (${known}): use the alttext that serves it`,
      }
    if (version < known)
      return {
        failure: `${source}: the database ${where} has schema version ${version}; this binary's is ${known}: upgrade the service first (it migrates at start), or use the alttext that serves it`,
      }
  } finally {
    await sql.close()
  }
  let postgres: Awaited<ReturnType<typeof createPostgresStore>>
  try {
    postgres = await createPostgresStore(url, { max: 2 })
  } catch (error) {
    return { failure: `${source}: ${error instanceof Error ? error.message : String(error)}` }
  }
  const store: Store = postgres
  return { store }
}
