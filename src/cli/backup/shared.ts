// What `alttext backup` and `alttext restore` share: the database they work on, the variables they read,
// and how a database's contents are shown.
import { CONFIG_VARIABLES, databasePath } from '../../config'
import type { DatabaseSummary } from '../../store/backup'
import { EXIT, parseCommandArgs, UsageError } from '../shared/args'

/** The one variable these commands read. */
export const DATABASE_VARIABLES = CONFIG_VARIABLES.filter((variable) => variable.name === 'ALTTEXT_DB')

/** `--db` wins over ALTTEXT_DB, as for the service. */
export const databaseFile = (flag: string | undefined): string => flag?.trim() || databasePath()

/** `accounts 12, api_keys 30, …`: every table and its rows. */
export const formatTables = (summary: DatabaseSummary): string => summary.tables.map((table) => `${table.name} ${table.rows}`).join(', ')

/** The same, for --json: `{accounts: 12, …}`. */
export const tableCounts = (summary: DatabaseSummary): Record<string, number> => Object.fromEntries(summary.tables.map((table) => [table.name, table.rows]))

/** Says why `alttext <command>` failed on stderr (with a hint to --help for bad arguments); returns the exit code. */
export const failureOf =
  (command: string) =>
  (message: string, code: number): number => {
    process.stderr.write(`alttext ${command}: ${message}${code === EXIT.usage ? `\nRun \`alttext ${command} --help\` for the options.` : ''}\n`)
    return code
  }

type Flags = Parameters<typeof parseCommandArgs>[1]

/** The command's one FILE and its flags; or the exit code, once --help is printed or bad arguments are said. */
export function fileArguments<T extends Flags>(
  argv: string[],
  flags: T,
  help: string,
  fail: (message: string, code: number) => number,
  missing: string,
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
    process.stdout.write(`${help}\n`)
    return EXIT.ok
  }
  if (positionals.length !== 1) return fail(positionals.length === 0 ? missing : 'give exactly one FILE', EXIT.usage)
  return { file: positionals[0]!, values }
}
