// `alttext backup FILE`: a consistent copy of the database, taken while the service runs, synced and
// checked (`PRAGMA integrity_check`) before it gets its name. See src/store/sqlite/backup.ts for how.
import { resolve } from 'node:path'
import { plural } from '../../shared/wording'
import { BackupError, backupDatabase } from '../../store/sqlite/backup'
import { EXIT, operatorHelpText } from '../shared/args'
import { formatBytes } from '../shared/format'
import type { CommandIo } from '../shared/io'
import { DATABASE_VARIABLES, databaseFile, fileArguments, failureOf, formatTables, refusePostgres, tableCounts } from './shared'

/** The backup's CPU priority (nice): below the service's, so a busy machine serves requests first. */
const BACKGROUND_NICENESS = 10

const FLAGS = {
  db: { type: 'string' },
  force: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const HELP = operatorHelpText(
  {
    usage: 'alttext backup [options] FILE',
    summary: [
      'Copies the database to FILE while the service keeps running: a consistent snapshot in one file',
      '(SQLite VACUUM INTO on a read-only connection; the service goes on reading and writing meanwhile).',
      'The copy is synced to disk and checked with PRAGMA integrity_check before it is given its name, so',
      'FILE is either a complete, checked backup or absent. It is readable by its owner only. The copy is',
      'flushed to disk as it is written, and runs at a lower CPU priority (nice 10), so the service keeps',
      'answering quickly meanwhile.',
    ].join('\n'),
    options: [
      { flag: '--db FILE', meaning: 'the database to copy (default: $ALTTEXT_DB, else ./data/alttext.db)' },
      { flag: '--force', meaning: 'replace FILE if it exists (only once the new copy has passed its check)' },
      { flag: '--json', meaning: 'print what was written as one JSON object' },
    ],
    notes: [
      'With ALTTEXT_DATABASE_URL set (and no --db), the data is in PostgreSQL: nothing is copied, and the command\nexplains pg_dump, pg_basebackup and point-in-time recovery instead (exit code 1).',
      'Exit codes: 0 the backup is written and checked; 1 it was refused or failed (FILE exists, no database,\nthe copy failed its check, PostgreSQL mode); nothing is left behind; 2 bad arguments.',
    ],
    examples: ['alttext backup /backups/alttext-$(date +%F).db', 'ALTTEXT_DB=/var/lib/alttext/alttext.db alttext backup --force /backups/alttext-latest.db'],
  },
  DATABASE_VARIABLES,
)

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const fail = failureOf('backup', io.stderr)
  const args = fileArguments(argv, FLAGS, HELP, fail, 'give the FILE to write the backup to', io.stdout)
  if (typeof args === 'number') return args
  const { file, values } = args
  const postgres = refusePostgres('backup', values.db, fail, io.env)
  if (postgres !== null) return postgres

  // The service comes first: the copy and its check take a core for seconds on a large database.
  io.lowerPriority(BACKGROUND_NICENESS)
  let result: Awaited<ReturnType<typeof backupDatabase>>
  try {
    result = await backupDatabase(databaseFile(values.db, io), resolve(io.cwd, file), { force: values.force })
  } catch (error) {
    if (error instanceof BackupError) return fail(error.message, EXIT.failed)
    throw error
  }
  const { backup } = result
  if (values.json) {
    const report = {
      file: backup.path,
      source: result.source,
      bytes: backup.bytes,
      schema_version: backup.schemaVersion,
      integrity_check: 'ok',
      tables: tableCounts(backup),
      copy_ms: Math.round(result.copyMs),
      verify_ms: Math.round(result.verifyMs),
    }
    io.stdout.write(`${JSON.stringify(report)}\n`)
    return EXIT.ok
  }
  io.stdout.write(
    [
      `backup written: ${backup.path}`,
      `  from:    ${result.source}`,
      `  size:    ${formatBytes(backup.bytes)} (${plural(backup.bytes, 'byte')})`,
      `  schema:  version ${backup.schemaVersion}`,
      '  check:   integrity_check ok',
      `  time:    copy ${(result.copyMs / 1000).toFixed(2)} s, check ${(result.verifyMs / 1000).toFixed(2)} s`,
      `  rows:    ${formatTables(backup)}`,
      '',
    ].join('\n'),
  )
  return EXIT.ok
}
