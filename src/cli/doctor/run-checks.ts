// The checks of `alttext doctor`, in the order a set-up is built: configuration, database (the SQLite
// file: checks/sqlite.ts, or PostgreSQL: postgres.ts), Redis (redis.ts), model hosts (and a real generation
// on each), mail, public URL, clock; one file of checks/ each. Each gives one result with a fix when it
// fails; a check that cannot run because an earlier one failed is skipped, not failed twice. The run owns
// the database connection it opens and closes it before it returns. Nothing here prints a secret: the
// SMTP URL is shown as host and port, the model API key never.
import type { Env } from '../../config'
import { clockCheck } from './checks/clock'
import { configurationCheck } from './checks/configuration'
import { mailCheck } from './checks/mail'
import { modelHostChecks } from './checks/model-hosts'
import { publicUrlCheck } from './checks/public-url'
import { sqliteChecks } from './checks/sqlite'
import { type PostgresFacts, postgresChecks } from './postgres'
import { redisChecks } from './redis'
import { type CheckResult, result } from './result'

export type DoctorOptions = {
  /** The environment the service would run with. */
  env: Env
  /** The folder a relative database path is in. */
  cwd: string
  /** Milliseconds since the epoch: the clock the clock check compares. */
  clock: () => number
  /** --db: the database to check instead of ALTTEXT_DB's. */
  dbPath?: string
  /** Deadline of each network check (a model host's health, SMTP, a Date header). */
  timeoutMs: number
  /** Deadline of a test generation: longer than a request's, since the first call may load the model. */
  generationTimeoutMs: number
}

/** Runs every check, handing each result to `report` as soon as it is known; returns them all. */
export async function runChecks(options: DoctorOptions, report: (check: CheckResult) => void): Promise<CheckResult[]> {
  const results: CheckResult[] = []
  const add = (check: CheckResult) => {
    results.push(check)
    report(check)
  }

  const { check, config } = configurationCheck(options.env, options.dbPath)
  add(check)
  if (!config) {
    add(result('others', 'the other checks', 'skip', 'they need a valid configuration'))
    return results
  }

  let newest: number | null
  let postgres: PostgresFacts | null = null
  if (config.databaseUrl !== undefined) {
    postgres = await postgresChecks(config.databaseUrl, add)
    newest = postgres.newest
  } else newest = sqliteChecks(config, options.dbPath !== undefined, options.cwd, options.clock, add)

  await redisChecks(config, options.timeoutMs, add)
  await modelHostChecks(config, options, add)
  add(await mailCheck(config, options.timeoutMs))
  add(publicUrlCheck(config))
  add(await clockCheck(config, newest, options.timeoutMs, options.clock, postgres?.skewMs ?? null))
  return results
}
