// `alttext restore FILE`: puts a backup in place of the database while no service runs on it. The old
// database is kept beside it, so a restore can itself be undone. See src/store/sqlite/backup.ts for how.
import { resolve } from 'node:path'
import { plural } from '../../shared/wording'
import { BackupError, restoreDatabase } from '../../store/sqlite/backup'
import { EXIT, operatorHelpText } from '../shared/args'
import { formatBytes } from '../shared/format'
import type { CommandIo } from '../shared/io'
import { DATABASE_VARIABLES, databaseFile, fileArguments, failureOf, formatTables, refusePostgres, tableCounts } from './shared'

const FLAGS = {
  db: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const HELP = operatorHelpText(
  {
    usage: 'alttext restore [options] FILE',
    summary: [
      'Replaces the database with the backup FILE. Stop the service first: the restore is refused while an',
      'alttext process serves the database, and no service can start on it until the restore is done.',
      'FILE is checked first (PRAGMA integrity_check, an alttext database, a schema version this binary',
      'knows, and exactly that schema: no trigger, view, index, table or column more or less, and each',
      "table's column types, generated columns, defaults, keys and constraints as the schema has them);",
      'the database it replaces is kept beside it as <db>.before-restore-<time> (with its -wal and -shm).',
      'An older schema is brought up to date when the service next starts.',
    ].join('\n'),
    options: [
      { flag: '--db FILE', meaning: 'the database to replace (default: $ALTTEXT_DB, else ./data/alttext.db)' },
      { flag: '--json', meaning: 'print what was restored as one JSON object' },
    ],
    notes: [
      'With ALTTEXT_DATABASE_URL set (and no --db), the data is in PostgreSQL: nothing is changed, and the command\nexplains pg_restore and point-in-time recovery instead (exit code 1).',
      'Exit codes: 0 restored; 1 refused or failed (a service is running, FILE is damaged, too new or its schema differs,\nPostgreSQL mode); the database is then unchanged; 2 bad arguments.',
    ],
    examples: ['systemctl stop alttext && alttext restore /backups/alttext-2026-11-23.db && systemctl start alttext'],
  },
  DATABASE_VARIABLES,
)

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const fail = failureOf('restore', io.stderr)
  const args = fileArguments(argv, FLAGS, HELP, fail, 'give the backup FILE to restore', io.stdout)
  if (typeof args === 'number') return args
  const { file, values } = args
  const postgres = refusePostgres('restore', values.db, fail, io.env)
  if (postgres !== null) return postgres

  let result: ReturnType<typeof restoreDatabase>
  try {
    result = restoreDatabase(resolve(io.cwd, file), databaseFile(values.db, io))
  } catch (error) {
    if (error instanceof BackupError) return fail(error.message, EXIT.failed)
    throw error
  }
  const { restored } = result
  const pending = result.latestSchemaVersion - restored.schemaVersion
  if (values.json) {
    const report = {
      database: result.database,
      previous: result.previous,
      bytes: restored.bytes,
      schema_version: restored.schemaVersion,
      latest_schema_version: result.latestSchemaVersion,
      integrity_check: 'ok',
      tables: tableCounts(restored),
    }
    io.stdout.write(`${JSON.stringify(report)}\n`)
    return EXIT.ok
  }
  io.stdout.write(
    [
      `restored: ${result.database}`,
      `  from:     ${file}`,
      `  size:     ${formatBytes(restored.bytes)} (${plural(restored.bytes, 'byte')})`,
      `  schema:   version ${restored.schemaVersion}${pending > 0 ? ` (this binary's is ${result.latestSchemaVersion}: ${plural(pending, 'migration')} run at the next start)` : ''}`,
      '  check:    integrity_check ok',
      `  rows:     ${formatTables(restored)}`,
      `  previous: ${result.previous ?? 'none (there was no database)'}`,
      '',
    ].join('\n'),
  )
  return EXIT.ok
}
