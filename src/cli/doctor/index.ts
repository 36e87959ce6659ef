// `alttext doctor`: checks the set-up the service would run with (the same environment) and says, line by
// line, what passes and what to fix. Exit 0 only when nothing failed.
import { CONFIG_VARIABLES } from '../../config'
import { plural } from '../../shared/wording'
import { VERSION } from '../../version'
import { EXIT, operatorHelpText, parseCommandArgs, UsageError } from '../shared/args'
import type { CommandIo } from '../shared/io'
import { runChecks } from './run-checks'
import type { CheckResult } from './result'

const FLAGS = {
  db: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** How long the network checks wait for an answer. */
export type DoctorDeadlines = {
  /** Each network check (a model host's health, SMTP, a Date header, Redis). */
  timeoutMs: number
  /** A test generation: longer than a request's, since the first call may load the model. */
  generationTimeoutMs: number
}

/** A cold model server loads the model on the first call: that can take a minute or more. */
const DEADLINES: DoctorDeadlines = { timeoutMs: 5000, generationTimeoutMs: 180_000 }

const HELP = operatorHelpText(
  {
    usage: 'alttext doctor [options]',
    summary: [
      'Checks the set-up the service runs with, from the same environment variables, and prints one line per',
      'check (PASS, WARN or FAIL with a fix, or SKIP): the configuration; the database (there, writable,',
      'migrated, quick_check; with ALTTEXT_DATABASE_URL, PostgreSQL: version, permissions, schema, round',
      'trips); Redis with ALTTEXT_REDIS_URL (version, scripts and writes allowed, round trips); each model',
      'host (reachable, the model present and able to see images) and a test generation',
      'on it with a small built-in image, timed; the mail relay (connect and EHLO, when set); the public URL',
      'against the listen address; the clock (against the model server and the database). Safe while the',
      'service runs: the only write is the one-row probe /ready also makes.',
    ].join('\n'),
    options: [
      { flag: '--db FILE', meaning: 'check this SQLite database instead of $ALTTEXT_DB (or $ALTTEXT_DATABASE_URL)' },
      { flag: '--json', meaning: 'print {ok, passed, warned, failed, skipped, checks: [{id, name, status, detail, fix, ms}]} instead of lines' },
    ],
    notes: ['Exit codes: 0 no check failed (each passed, warned, or was skipped as not configured); 1 a check failed; 2 bad arguments.'],
    examples: ['sudo -u alttext env $(cat /etc/alttext.env) alttext doctor', 'alttext doctor --json | jq \'.checks[] | select(.status == "fail")\''],
  },
  CONFIG_VARIABLES,
)

const LABEL: Record<CheckResult['status'], string> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' }

const line = (check: CheckResult) => `${LABEL[check.status]}  ${check.name}: ${check.detail}${check.fix ? `\n      fix: ${check.fix}` : ''}\n`

/** `alttext doctor` with the users' deadlines. */
export const run = (argv: string[], io: CommandIo): Promise<number> => runDoctor(argv, io, DEADLINES)

/** The command with other deadlines: a test's model host that never answers fails in milliseconds. */
export async function runDoctor(argv: string[], io: CommandIo, deadlines: DoctorDeadlines): Promise<number> {
  let parsed: ReturnType<typeof parseCommandArgs<typeof FLAGS>>
  try {
    parsed = parseCommandArgs(argv, FLAGS)
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr.write(`alttext doctor: ${error.message}\nRun \`alttext doctor --help\` for the options.\n`)
    return EXIT.usage
  }
  const { values } = parsed
  if (values.help) {
    io.stdout.write(`${HELP}\n`)
    return EXIT.ok
  }

  if (!values.json) io.stdout.write(`alttext doctor ${VERSION}\n`)
  const results = await runChecks({ dbPath: values.db, env: io.env, cwd: io.cwd, clock: io.clock, ...deadlines }, (check) => {
    if (!values.json) io.stdout.write(line(check))
  })
  const count = (status: CheckResult['status']) => results.filter((check) => check.status === status).length
  const ok = count('fail') === 0
  if (values.json) {
    const counts = { passed: count('pass'), warned: count('warn'), failed: count('fail'), skipped: count('skip') }
    io.stdout.write(`${JSON.stringify({ version: VERSION, ok, ...counts, checks: results })}\n`)
  } else {
    const warned = count('warn')
    io.stdout.write(
      `\n${plural(results.length, 'check')}: ${count('pass')} passed, ${warned > 0 ? `${plural(warned, 'warning')}, ` : ''}${count('fail')} failed, ${count('skip')} skipped\n`,
    )
  }
  return ok ? EXIT.ok : EXIT.failed
}
