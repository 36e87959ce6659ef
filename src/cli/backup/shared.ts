// What `alttext backup` and `alttext restore` share: the database they work on, the variables they read,
// and how a database's contents are shown.
import { resolve } from 'node:path'
import { CONFIG_VARIABLES, ConfigError, configuredDatabaseUrl, databasePath } from '../../config'
import { describeUrl } from '../../store/postgres/connection'
import type { DatabaseSummary } from '../../store/sqlite/backup'
import { EXIT, parseCommandArgs, UsageError } from '../shared/args'
import type { CommandIo, Sink } from '../shared/io'

/** The variables these commands read. */
export const DATABASE_VARIABLES = CONFIG_VARIABLES.filter((variable) => variable.name === 'ALTTEXT_DB' || variable.name === 'ALTTEXT_DATABASE_URL')

/** `--db` wins over ALTTEXT_DB, as for the service; a relative path is under the command's folder. */
export const databaseFile = (flag: string | undefined, io: CommandIo): string => resolve(io.cwd, flag?.trim() || databasePath(io.env))

/** `accounts 12, api_keys 30, …`: every table and its rows. */
export const formatTables = (summary: DatabaseSummary): string => summary.tables.map((table) => `${table.name} ${table.rows}`).join(', ')

/** The same, for --json: `{accounts: 12, …}`. */
export const tableCounts = (summary: DatabaseSummary): Record<string, number> => Object.fromEntries(summary.tables.map((table) => [table.name, table.rows]))

/** Says why `alttext <command>` failed on stderr (with a hint to --help for bad arguments); returns the exit code. */
export const failureOf =
  (command: string, stderr: Sink) =>
  (message: string, code: number): number => {
    stderr.write(`alttext ${command}: ${message}${code === EXIT.usage ? `\nRun \`alttext ${command} --help\` for the options.` : ''}\n`)
    return code
  }

type Flags = Parameters<typeof parseCommandArgs>[1]

/** The command's one FILE and its flags; or the exit code, once --help is printed on `stdout` or bad arguments are said. */
export function fileArguments<T extends Flags>(
  argv: string[],
  flags: T,
  help: string,
  fail: (message: string, code: number) => number,
  missing: string,
  stdout: Sink,
): { file: string; values: ReturnType<typeof parseCommandArgs<T>>['values'] } | number {
  let parsed: ReturnType<typeof parseCommandArgs<T>>
  try {
    parsed = parseCommandArgs(argv, flags)
  } catch (error) {
    if (error instanceof UsageError) return fail(error.message, EXIT.usage)
    throw error
  }
  const { values, positionals } = parsed
  if ((values as { help?: boolean }).help) {
    stdout.write(`${help}\n`)
    return EXIT.ok
  }
  if (positionals.length !== 1) return fail(positionals.length === 0 ? missing : 'give exactly one FILE', EXIT.usage)
  return { file: positionals[0]!, values }
}

/** What PostgreSQL's own tools do instead, for `alttext backup` and `alttext restore` with ALTTEXT_DATABASE_URL set. */
const POSTGRES_ADVICE = {
  backup: (where: string) => [
    `ALTTEXT_DATABASE_URL is set: the data is in PostgreSQL at ${where}, and alttext backup copies only a SQLite file. No backup was made.`,
    '',
    'Back up PostgreSQL with its own tools (run them where they reach the server, as a user that may read the database):',
    '',
    '  pg_dump --format=custom --file=/var/backups/alttext/alttext-$(date +%F).dump "$ALTTEXT_DATABASE_URL"',
    '      a consistent snapshot of the database while the replicas keep running (one REPEATABLE READ',
    '      transaction); check it with pg_restore --list FILE; restore it with pg_restore (alttext restore --help).',
    '',
    '  pg_basebackup --pgdata=/var/backups/pg/base-$(date +%F) --format=tar --gzip --wal-method=stream --checkpoint=fast',
    '      a copy of the whole server. With WAL archiving on the server (postgresql.conf: wal_level = replica,',
    "      archive_mode = on, archive_command = 'test ! -f /var/backups/pg/wal/%f && cp %p /var/backups/pg/wal/%f')",
    '      it restores to any moment since the base backup: point-in-time recovery (recovery_target_time).',
    '',
    'Or, with every replica stopped, a SQLite copy of everything: alttext db copy "$ALTTEXT_DATABASE_URL" FILE.db',
    'To back up a SQLite file instead, name it: alttext backup --db DATABASE FILE. More: docs/operations.md, "Backups on PostgreSQL".',
  ],
  restore: (where: string) => [
    `ALTTEXT_DATABASE_URL is set: the data is in PostgreSQL at ${where}, and alttext restore puts back only a SQLite file. Nothing was changed.`,
    '',
    'Restore PostgreSQL with its own tools. Stop every replica first, restore into a new, empty database, check',
    'it, point ALTTEXT_DATABASE_URL at it and start the replicas (the old database stays until you drop it):',
    '',
    '  createdb --owner=alttext alttext_restored',
    '  pg_restore --no-owner --role=alttext --exit-on-error --dbname=alttext_restored FILE.dump',
    '      from a pg_dump archive;',
    '  a base backup and the archived WAL, for point-in-time recovery: unpack the base backup into an empty data',
    "      directory, set restore_command = 'cp /var/backups/pg/wal/%f %p' and recovery_target_time =",
    "      '2026-11-23 09:40:00+00', create recovery.signal, start the server; it replays the WAL up to that moment.",
    '',
    'Or from a SQLite backup, into a new, empty database: alttext db copy BACKUP.db "postgres://…/alttext_restored"',
    'To restore a SQLite file instead, name it: alttext restore --db DATABASE FILE. More: docs/operations.md, "Backups on PostgreSQL".',
  ],
}

/**
 * With ALTTEXT_DATABASE_URL set and no --db: says what PostgreSQL's tools do instead and returns exit
 * code 1, since nothing was backed up or restored (2 for a malformed variable). Null: a SQLite file it is.
 */
export function refusePostgres(
  command: 'backup' | 'restore',
  dbFlag: string | undefined,
  fail: (message: string, code: number) => number,
  env: CommandIo['env'],
): number | null {
  if (dbFlag?.trim()) return null
  let url: string | undefined
  try {
    url = configuredDatabaseUrl(env)
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message, EXIT.usage)
    throw error
  }
  if (url === undefined) return null
  return fail(POSTGRES_ADVICE[command](describeUrl(url)).join('\n'), EXIT.failed)
}
