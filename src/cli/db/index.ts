// `alttext db copy FROM TO`: moves a site between SQLite and PostgreSQL (either way, or to another SQLite
// file), verified. See src/store/copy/ for how. No message shows a URL's password.
import { resolve } from 'node:path'
import { ConfigError, checkDatabaseUrl } from '../../config'
import { plural } from '../../shared/wording'
import { CopyError, type CopyReport, copyDatabase, parseLocation } from '../../store/copy'
import { EXIT, parseCommandArgs, UsageError } from '../shared/args'
import type { CommandIo } from '../shared/io'

const FLAGS = {
  live: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const HELP = [
  'Usage: alttext db copy [options] FROM TO',
  '',
  'Copies every record of an alttext database into an empty one: accounts, keys, credits, sessions, reset',
  'and verification links, usage, history, the alt-text cache, batches with their items and waiting',
  'images, webhook secrets and deliveries. FROM and TO are each a SQLite file path or a postgres:// URL',
  '(postgresql:// too, ?sslmode= allowed): SQLite to PostgreSQL to move a site onto several replicas,',
  'PostgreSQL to SQLite to move it back, SQLite to SQLite.',
  '',
  "Ids are kept, and TO's id sequences are moved past every id FROM ever handed out. FROM is read in one",
  'snapshot; TO is written in one transaction, read back and compared with FROM (rows and a checksum of',
  "each table) before it commits. A copy that does not match is rolled back: TO then holds none of FROM's rows.",
  '',
  "TO must be empty: a new file (created), a new PostgreSQL database (createdb, owned by the URL's user),",
  "or one the service migrated but never used. It is migrated to FROM's schema version. FROM and TO",
  'must be at one schema version: a TO at a newer one is refused (upgrade FROM first), as is a FROM newer',
  'than this alttext, or one its PostgreSQL schema does not reach yet.',
  '',
  'Stop the service first: a service serving FROM is refused (its later writes would be lost), and a',
  'service using TO always is.',
  '',
  'Options:',
  '  --live      copy FROM while a service serves it: a consistent snapshot of this moment, without',
  '              what the service writes afterwards (for a test copy, not for a move)',
  '  --json      print the report as one JSON object',
  '  -h, --help  show this help',
  '',
  "Exit codes: 0 copied and verified; 1 refused or failed, with none of FROM's rows in TO; 2 bad arguments.",
  '',
  'Examples:',
  "  alttext db copy /var/lib/alttext/alttext.db 'postgres://alttext:secret@db1:5432/alttext'",
  '  alttext db copy "$ALTTEXT_DATABASE_URL" /var/lib/alttext/alttext.db',
].join('\n')

const GROUP_HELP = [
  'Usage: alttext db COMMAND ...',
  '',
  'Commands on the database as a whole.',
  '',
  'Commands:',
  '  copy FROM TO  every record of an alttext database into an empty one (SQLite or PostgreSQL, either way)',
  '',
  'Each command has its own help: alttext db copy --help',
].join('\n')

/** Every spelling of the passwords in FROM and TO, to be cut out of any message (a driver's too). */
function secretsOf(locations: string[]): string[] {
  const secrets: string[] = []
  for (const text of locations) {
    if (parseLocation(text).engine !== 'postgres') continue
    const password = URL.parse(text.trim())?.password
    if (!password) continue
    secrets.push(password)
    try {
      secrets.push(decodeURIComponent(password))
    } catch {
      // Not percent-encoded as a whole: the raw form is enough.
    }
  }
  return secrets.filter((s) => s.length > 0)
}

const redact = (message: string, secrets: string[]) => secrets.reduce((text, secret) => text.replaceAll(secret, '***'), message)

function reportText(report: CopyReport): string {
  const width = Math.max(5, ...report.tables.map((t) => t.name.length))
  const rowsWidth = Math.max(4, ...report.tables.map((t) => String(t.rows).length))
  const total = report.tables.reduce((sum, t) => sum + t.rows, 0)
  return [
    `from:  ${report.from} (schema version ${report.schemaVersion})`,
    `to:    ${report.to}${report.migrated ? ` (migrated to schema version ${report.schemaVersion} by this copy)` : ` (schema version ${report.schemaVersion})`}`,
    '',
    `${'table'.padEnd(width)}  ${'rows'.padStart(rowsWidth)}  checksum (FROM = TO)`,
    ...report.tables.map((t) => `${t.name.padEnd(width)}  ${String(t.rows).padStart(rowsWidth)}  ${t.checksum.slice(0, 16)}`),
    '',
    `next ids: ${report.sequences.length > 0 ? report.sequences.map((s) => `${s.table}.${s.column} ${s.next}`).join(', ') : 'none kept'}`,
    ...report.notCopied.map((n) => `not copied: ${n.table}: ${n.why}`),
    `copied and verified: ${plural(report.tables.length, 'table')}, ${plural(total, 'row')}; every count and checksum equal, in ${(report.ms / 1000).toFixed(2)} s`,
  ].join('\n')
}

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const fail = (message: string, code: number): number => {
    io.stderr.write(`alttext db: ${message}${code === EXIT.usage ? '\nRun `alttext db copy --help` for the options.' : ''}\n`)
    return code
  }
  let parsed: ReturnType<typeof parseCommandArgs<typeof FLAGS>>
  try {
    parsed = parseCommandArgs(argv, FLAGS)
  } catch (error) {
    if (error instanceof UsageError) return fail(error.message, EXIT.usage)
    throw error
  }
  const { values, positionals } = parsed
  const [command, ...rest] = positionals
  if (command === undefined) {
    if (values.help) {
      io.stdout.write(`${GROUP_HELP}\n`)
      return EXIT.ok
    }
    return fail('name a command: alttext db copy FROM TO', EXIT.usage)
  }
  if (command !== 'copy') return fail(`unknown command "${command}": the one command is copy`, EXIT.usage)
  if (values.help) {
    io.stdout.write(`${HELP}\n`)
    return EXIT.ok
  }
  if (rest.length !== 2) return fail('give FROM and TO: alttext db copy FROM TO', EXIT.usage)
  const [from, to] = rest as [string, string]
  const secrets = secretsOf([from, to])
  for (const [role, text] of [
    ['FROM', from],
    ['TO', to],
  ] as const) {
    if (parseLocation(text).engine === 'postgres') {
      try {
        checkDatabaseUrl(text.trim(), role)
      } catch (error) {
        if (error instanceof ConfigError) return fail(redact(error.message, secrets), EXIT.usage)
        throw error
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return fail(`${role} must be a SQLite file path or a postgres:// URL`, EXIT.usage)
  }

  let report: CopyReport
  try {
    // A relative SQLite path is in the command's folder.
    const located = (text: string) => (parseLocation(text).engine === 'sqlite' ? resolve(io.cwd, text) : text)
    report = await copyDatabase(located(from), located(to), { live: values.live === true })
  } catch (error) {
    if (error instanceof CopyError) return fail(redact(error.message, secrets), EXIT.failed)
    // Anything else is still said without the password.
    return fail(`the copy failed, and TO holds none of FROM's rows: ${redact(error instanceof Error ? error.message : String(error), secrets)}`, EXIT.failed)
  }
  if (values.json)
    io.stdout.write(
      `${JSON.stringify({
        from: report.from,
        to: report.to,
        schema_version: report.schemaVersion,
        migrated: report.migrated,
        tables: report.tables,
        sequences: report.sequences,
        not_copied: report.notCopied,
        ms: Math.round(report.ms),
      })}\n`,
    )
  else io.stdout.write(`${reportText(report)}\n`)
  return EXIT.ok
}
