// What `alttext backup` and `alttext restore` share: the database they work on, the variables they read,
// and how a database's contents are shown.
import { CONFIG_VARIABLES, databasePath } from '../../config'
import type { DatabaseSummary } from '../../store/backup'

/** The one variable these commands read. */
export const DATABASE_VARIABLES = CONFIG_VARIABLES.filter((variable) => variable.name === 'ALTTEXT_DB')

/** `--db` wins over ALTTEXT_DB, as for the service. */
export const databaseFile = (flag: string | undefined): string => flag?.trim() || databasePath()

/** `accounts 12, api_keys 30, …`: every table and its rows. */
export const formatTables = (summary: DatabaseSummary): string => summary.tables.map((table) => `${table.name} ${table.rows}`).join(', ')

/** The same, for --json: `{accounts: 12, …}`. */
export const tableCounts = (summary: DatabaseSummary): Record<string, number> => Object.fromEntries(summary.tables.map((table) => [table.name, table.rows]))
