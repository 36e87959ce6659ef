// The checks of `alttext doctor`, in the order a set-up is built: configuration, database (the SQLite
// file, or PostgreSQL: postgres.ts), Redis (redis.ts), model hosts (and a real generation on each), mail,
// public URL, clock. Each gives one result with a fix when it
// fails; a check that cannot run because an earlier one failed is skipped, not failed twice. The run owns
// the database connection it opens and closes it before it returns. Nothing here prints a secret: the
// SMTP URL is shown as host and port, the model API key never.
import type { Database } from 'bun:sqlite'
import { accessSync, constants, existsSync, statfsSync, statSync } from 'node:fs'
import { isIP } from 'node:net'
import { dirname, resolve } from 'node:path'
import { type Config, ConfigError, type Env, loadConfig } from '../../config'
import { createModelProvider } from '../../model-provider'
import type { HealthProblem, ModelProvider } from '../../model-provider/provider'
import { verifySmtp } from '../../modules/accounts/mailer'
import { buildPrompt, promptInput } from '../../modules/alt-text/prompt'
import { maxTokensFor } from '../../modules/alt-text/conversation'
import { cleanAltText } from '../../modules/alt-text/text'
import { GENERATION_DEADLINE_MS, GENERATION_DEADLINE_SECONDS } from '../../shared/limits'
import { plural } from '../../shared/wording'
import { describeUrl } from '../../store/postgres/connection'
import { newestRecord, openForInspection, quickCheck, servedNow, sqliteSchemaVersion, writeProbe } from '../../store/sqlite/inspect'
import { latestSchemaVersion } from '../../store/sqlite/migrations'
import { formatBytes } from '../shared/format'
import { databaseClockCheck, type PostgresFacts, postgresChecks } from './postgres'
import { redisChecks } from './redis'
import { type CheckResult, errorText, result, schemaVersionCheck, seconds } from './result'
// A red square on white, 256 px: any vision model describes it, and it is embedded in the binary.
import testImagePath from './test-image.png' with { type: 'file' }

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

/** A database write that waits longer than this for the lock fails the writable check. */
const WRITE_WAIT_MS = 3000
/** Less free space than this beside the database fails the writable check: SQLite needs room for its WAL. */
const MIN_FREE_BYTES = 100 * 1024 * 1024
/** Clocks further apart than this fail the clock check (sessions, expiries and webhook signatures rely on time). */
const CLOCK_TOLERANCE_MS = 60_000
/** A database record this far in the future means the clock was set back. */
const FUTURE_TOLERANCE_MS = 5 * 60_000

function loadedConfig(options: DoctorOptions): { config: Config } | { failure: CheckResult } {
  try {
    const config = loadConfig(options.env)
    // --db names a SQLite file, whatever ALTTEXT_DATABASE_URL says.
    return { config: options.dbPath ? { ...config, dbPath: options.dbPath, databaseUrl: undefined } : config }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    const failure = result(
      'configuration',
      'configuration',
      'fail',
      error.message,
      `correct ${error.variable} in the service's environment (alttext --help lists every variable and its default)`,
    )
    return { failure }
  }
}

type DatabaseState = { db: Database; file: string; version: number }

const OWNER_FIX = 'the user the service runs as must own the database file and its folder (e.g. chown -R alttext: /var/lib/alttext)'

/** The folder the service would create the file in: the nearest one of its parents that exists (the others it makes). */
function nearestFolder(file: string): string {
  let folder = dirname(file)
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder)
  return folder
}

/**
 * No file yet: before the first start that is as it should be, if the service may create it there. Nothing
 * is created here: the check looks at the folder only.
 */
function missingDatabase(file: string): CheckResult {
  const name = 'database'
  const folder = nearestFolder(file)
  const uid = process.getuid?.()
  const cannot = (why: string) =>
    result(
      'database',
      name,
      'fail',
      `there is no database at ${file}, and \`alttext serve\` could not create it: ${why}`,
      `${OWNER_FIX}, or point ALTTEXT_DB elsewhere`,
    )
  if (!statSync(folder).isDirectory()) return cannot(`${folder} is not a folder`)
  try {
    accessSync(folder, constants.W_OK | constants.X_OK)
  } catch (error) {
    return cannot(`${folder} is not writable by this user (uid ${uid}): ${errorText(error)}`)
  }
  return result(
    'database',
    name,
    'warn',
    `there is no database at ${file} yet: \`alttext serve\` will create it${folder === dirname(file) ? '' : ` (and its folder in ${folder})`}, at schema version ${latestSchemaVersion()}`,
    'nothing to do before the first start; if the service had data, point ALTTEXT_DB at its file or restore a backup (alttext restore FILE)',
  )
}

/** `named`: the file came from --db, to be checked as it is (a missing one is a wrong path, not a first start). */
function openDatabase(config: Config, named: boolean, cwd: string): { check: CheckResult; state: DatabaseState | null } {
  const file = resolve(cwd, config.dbPath)
  const name = 'database'
  const fail = (detail: string, fix: string) => ({ check: result('database', name, 'fail', detail, fix), state: null })
  if (!existsSync(file)) {
    if (named) return fail(`there is no database at ${file}`, 'check the path given to --db')
    return { check: missingDatabase(file), state: null }
  }
  try {
    accessSync(file, constants.R_OK)
  } catch (error) {
    return fail(`${file} is not readable by this user: ${errorText(error)}`, OWNER_FIX)
  }
  let db: Database
  try {
    db = openForInspection(file, WRITE_WAIT_MS)
  } catch (error) {
    return fail(`cannot open ${file}: ${errorText(error)}`, `${OWNER_FIX}; a damaged file: restore a backup (alttext restore FILE)`)
  }
  const version = sqliteSchemaVersion(db)
  if (version === null) {
    db.close()
    return fail(`${file} is not an alttext database (no schema_migrations table)`, 'point ALTTEXT_DB at the alttext database file')
  }
  const served = servedNow(file) ? 'an alttext process is serving it' : 'no alttext process is serving it now'
  return { check: result('database', name, 'pass', `${file} (${formatBytes(statSync(file).size)}); ${served}`), state: { db, file, version } }
}

function writableCheck({ db, file }: DatabaseState, clock: () => number): CheckResult {
  const name = 'database writable'
  const folder = dirname(file)
  const uid = process.getuid?.()
  for (const [path, what] of [
    [file, 'the database file'],
    [folder, 'its folder (SQLite creates the -wal and -shm files there)'],
  ] as const) {
    try {
      accessSync(path, constants.W_OK)
    } catch (error) {
      return result('database_writable', name, 'fail', `${what} ${path} is not writable by this user (uid ${uid}): ${errorText(error)}`, OWNER_FIX)
    }
  }
  try {
    writeProbe(db, clock())
  } catch (error) {
    const text = errorText(error)
    const fix = /locked|busy/i.test(text)
      ? `another process held the write lock for ${WRITE_WAIT_MS / 1000} s: end a long sqlite3 session or VACUUM`
      : /full/i.test(text)
        ? 'free disk space on its file system'
        : OWNER_FIX
    return result('database_writable', name, 'fail', `a write to ${file} failed: ${text}`, fix)
  }
  const { bavail, bsize } = statfsSync(folder)
  const free = bavail * bsize
  if (free < MIN_FREE_BYTES)
    return result('database_writable', name, 'fail', `only ${formatBytes(free)} free beside ${file}`, 'free disk space on its file system')
  return result('database_writable', name, 'pass', `a write committed; ${formatBytes(free)} free on its file system`)
}

function schemaCheck({ version }: DatabaseState): CheckResult {
  return schemaVersionCheck(version, latestSchemaVersion(), {
    newer: 'run the newer alttext that migrated it, or restore a backup taken before the upgrade',
    older: 'back up first (alttext backup FILE), then restart the service with this binary',
  })
}

function integrityCheck({ db }: DatabaseState): CheckResult {
  const name = 'database integrity'
  const fix = 'stop the service and restore the latest good backup (alttext restore FILE)'
  try {
    const rows = quickCheck(db)
    if (rows.length === 1 && rows[0] === 'ok') return result('database_integrity', name, 'pass', 'quick_check ok')
    return result('database_integrity', name, 'fail', `quick_check found damage: ${rows.join('; ')}`, fix)
  } catch (error) {
    return result('database_integrity', name, 'fail', `quick_check failed: ${errorText(error)}`, fix)
  }
}

function modelFix(problem: HealthProblem | undefined, config: Config, host: string): string {
  const openai = config.modelApi === 'openai'
  switch (problem) {
    case 'model_missing':
      return openai
        ? `serve ${config.model} on ${host} (vLLM --served-model-name, llama-server --alias), or set ALTTEXT_MODEL to a name its /v1/models lists`
        : `run "ollama pull ${config.model}" on ${host}, or set ALTTEXT_MODEL to a vision model it has`
    case 'no_vision':
      return 'set ALTTEXT_MODEL to a vision model (docs/models.md lists some for each kind of hardware)'
    case 'unreachable':
      return `start the model server at ${host}, or correct ALTTEXT_MODEL_HOSTS (or OLLAMA_HOST); check firewalls between the two`
    default:
      return `${host} answered, but not as ${openai ? 'an OpenAI-compatible' : 'an Ollama'} server should: check ALTTEXT_MODEL_API${openai ? ' and ALTTEXT_MODEL_API_KEY' : ''}`
  }
}

async function hostCheck(provider: ModelProvider, config: Config, host: string, timeoutMs: number): Promise<CheckResult> {
  const name = `model host ${host}`
  const health = await provider.health(AbortSignal.timeout(timeoutMs)).catch((error: unknown) => ({
    ok: false,
    detail: errorText(error),
    publicDetail: '',
    problem: 'failed' as const,
  }))
  if (health.ok) return result('model_host', name, 'pass', `${health.detail} (${config.modelApi} API)`)
  return result('model_host', name, 'fail', health.detail, modelFix(health.problem, config, host))
}

async function generationCheck(provider: ModelProvider, host: string, timeoutMs: number): Promise<CheckResult> {
  const name = `test generation on ${host}`
  const input = promptInput({ language: 'en', style: 'descriptive', context: undefined, keywords: [], max_length: 125 })
  // The plain-text prompt: every server answers it (the service asks structured where it may, and falls back to this).
  const prompt = buildPrompt(input)
  const image = new Uint8Array(await Bun.file(testImagePath).arrayBuffer())
  const started = performance.now()
  let raw: string
  try {
    const answer = await provider.describe({
      image: { data: image, mime: 'image/png' },
      system: prompt.system,
      prompt: prompt.user,
      maxTokens: maxTokensFor(input.maxLength),
      signal: AbortSignal.timeout(timeoutMs),
    })
    raw = answer.content
  } catch (error) {
    const ms = performance.now() - started
    return result(
      'test_generation',
      name,
      'fail',
      `failed after ${seconds(ms)}: ${errorText(error)}`,
      'the host passed its check but could not describe an image: see the model server log',
      ms,
    )
  }
  const ms = performance.now() - started
  const text = cleanAltText(raw, input.language)
  if (!text)
    return result('test_generation', name, 'fail', `the model answered no usable text in ${seconds(ms)}`, 'try another vision model (ALTTEXT_MODEL)', ms)
  if (ms > GENERATION_DEADLINE_MS)
    return result(
      'test_generation',
      name,
      'fail',
      `"${text}" took ${seconds(ms)}, longer than a request's ${GENERATION_DEADLINE_SECONDS} s deadline`,
      'the first call after the model server starts loads the model: run alttext doctor again; if it stays slow, use a smaller model or a GPU',
      ms,
    )
  return result('test_generation', name, 'pass', `"${text}" in ${seconds(ms)}`, undefined, ms)
}

async function mailCheck(config: Config, timeoutMs: number): Promise<CheckResult> {
  const name = 'mail (SMTP)'
  if (!config.smtpUrl) return result('mail', name, 'skip', "ALTTEXT_SMTP_URL is not set: password-reset links go to the service's log")
  const url = new URL(config.smtpUrl)
  const secure = url.protocol === 'smtps:'
  const relay = `${url.hostname}:${url.port || (secure ? 465 : 587)}`
  try {
    await verifySmtp(config.smtpUrl, timeoutMs)
    return result('mail', name, 'pass', `${relay} answered EHLO${url.username ? ' and accepted the login' : ''}`)
  } catch (error) {
    // Its message may quote the relay's answer, never the URL's password.
    return result(
      'mail',
      name,
      'fail',
      `${relay}: ${errorText(error)}`,
      'check ALTTEXT_SMTP_URL: host, port, smtp:// (STARTTLS) or smtps:// (TLS from the start), user and password',
    )
  }
}

const isLoopbackHost = (host: string) => {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'))
}

/** HOST unset, 0.0.0.0 or :: (in any spelling, dual-stack): the service listens on every address of the machine. */
const isAllAddresses = (host: string) => {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === '' || bare === '0.0.0.0') return true
  return isIP(bare) === 6 && bare.split(':').every((group) => /^0*$/.test(group))
}

const defaultPort = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80))

/** ALTTEXT_PUBLIC_URL goes into reset links, `docs` links and the cookie's Secure flag: it must be where users reach this service. */
function publicUrlCheck(config: Config): CheckResult {
  const name = 'public URL'
  const url = new URL(config.publicUrl)
  const listen = config.listenAddresses.map((address) => `${isIP(address) === 6 ? `[${address}]` : address}:${config.port}`).join(' and ')
  const fix = 'set ALTTEXT_PUBLIC_URL to the address users and their browsers reach this service at, e.g. https://alttext.example.org'
  if (url.pathname !== '/')
    return result('public_url', name, 'fail', `${config.publicUrl} has a path; the service serves its pages and API at the root of its address`, fix)
  if (isLoopbackHost(url.hostname)) {
    if (defaultPort(url) !== config.port)
      return result('public_url', name, 'fail', `${config.publicUrl} names port ${defaultPort(url)}, but the service listens on ${listen}`, fix)
    // The defaults (README's start): right for this machine, wrong for the others it also listens for.
    if (isAllAddresses(config.host))
      return result(
        'public_url',
        name,
        'warn',
        `${config.publicUrl} works on this machine; the service listens on ${listen}, and other machines that reach it would get reset and docs links to localhost, that is to themselves`,
        'before other machines use it, set ALTTEXT_PUBLIC_URL to the address they reach this service at, e.g. https://alttext.example.org',
      )
    if (!isLoopbackHost(config.host))
      return result(
        'public_url',
        name,
        'fail',
        `${config.publicUrl} is this machine's own name, but the service listens on ${listen} only: its reset and docs links would reach nothing`,
        fix,
      )
    return result('public_url', name, 'pass', `${config.publicUrl}, on this machine only (listens on ${listen})`)
  }
  if (url.protocol === 'https:')
    return result('public_url', name, 'pass', `${config.publicUrl} (TLS ended by a proxy in front of ${listen}); cookies are Secure`)
  if (isLoopbackHost(config.host))
    return result('public_url', name, 'pass', `${config.publicUrl}, through a proxy on this machine to ${listen}; plain http: cookies are not marked Secure`)
  return result('public_url', name, 'pass', `${config.publicUrl} (listens on ${listen}); plain http: cookies are not marked Secure`)
}

/** When did the clock of a model host say it was? From its Date header; null without one. */
async function hostTime(host: string, timeoutMs: number, clock: () => number): Promise<number | null> {
  try {
    const sent = clock()
    const response = await fetch(`${host}/`, { signal: AbortSignal.timeout(timeoutMs) })
    await response.arrayBuffer()
    const date = Date.parse(response.headers.get('date') ?? '')
    // The header has whole seconds; the middle of the exchange is the best guess of when it was written.
    return Number.isNaN(date) ? null : date + 500 - (clock() - sent) / 2
  } catch {
    return null
  }
}

async function clockCheck(
  config: Config,
  newest: number | null,
  timeoutMs: number,
  clock: () => number,
  databaseSkewMs: number | null = null,
): Promise<CheckResult> {
  const name = 'clock'
  const now = clock()
  const fix = 'keep the clock synchronised (timedatectl set-ntp true, or chrony): credit periods, key expiry, sessions and webhook signatures follow it'
  const notes = [`${new Date(now).toISOString()} here`]
  // Replicas stamp the times they write with their own clocks: they must agree with each other, and the database server's is a shared reference.
  if (databaseSkewMs !== null) {
    const apart = databaseClockCheck(databaseSkewMs)
    if (apart) return apart
    notes.push(`the PostgreSQL server agrees within ${Math.max(1, Math.ceil(Math.abs(databaseSkewMs) / 1000))} s`)
  }
  if (newest !== null) {
    if (newest > now + FUTURE_TOLERANCE_MS)
      return result(
        'clock',
        name,
        'fail',
        `the database has a record from ${new Date(newest).toISOString()}, ${seconds(newest - now)} after this machine's time: the clock was set back`,
        fix,
      )
    notes.push(`newest database record ${new Date(newest).toISOString()}`)
  }
  for (const host of config.modelHosts) {
    const theirs = await hostTime(host, timeoutMs, clock)
    if (theirs === null) continue
    const skew = clock() - theirs
    if (Math.abs(skew) > CLOCK_TOLERANCE_MS)
      return result(
        'clock',
        name,
        'fail',
        `this machine's clock is ${seconds(Math.abs(skew))} ${skew > 0 ? 'ahead of' : 'behind'} the model server at ${host}`,
        fix,
      )
    notes.push(`the model server at ${host} agrees within ${Math.max(1, Math.ceil(Math.abs(skew) / 1000))} s`)
    break
  }
  if (notes.length === 1) return result('clock', name, 'skip', `${notes[0]}; nothing to compare with (no database record, no Date header from a model server)`)
  return result('clock', name, 'pass', notes.join('; '))
}

/** Runs every check, handing each result to `report` as soon as it is known; returns them all. */
export async function runChecks(options: DoctorOptions, report: (check: CheckResult) => void): Promise<CheckResult[]> {
  const results: CheckResult[] = []
  const add = (check: CheckResult) => {
    results.push(check)
    report(check)
  }
  const skip = (id: string, name: string, why: string) => add(result(id, name, 'skip', why))

  const loaded = loadedConfig(options)
  if ('failure' in loaded) {
    add(loaded.failure)
    skip('others', 'the other checks', 'they need a valid configuration')
    return results
  }
  const { config } = loaded
  const database = config.databaseUrl === undefined ? `database ${config.dbPath}` : `database PostgreSQL ${describeUrl(config.databaseUrl)}`
  add(
    result(
      'configuration',
      'configuration',
      'pass',
      `valid; model ${config.model} (${config.modelApi} API) on ${plural(config.modelHosts.length, 'host')}, ${database}`,
    ),
  )

  let newest: number | null = null
  let postgres: PostgresFacts | null = null
  if (config.databaseUrl !== undefined) {
    postgres = await postgresChecks(config.databaseUrl, add)
    newest = postgres.newest
  } else {
    const { check, state } = openDatabase(config, options.dbPath !== undefined, options.cwd)
    add(check)
    if (state) {
      try {
        newest = newestRecord(state.db)
        add(writableCheck(state, options.clock))
        add(schemaCheck(state))
        add(integrityCheck(state))
      } finally {
        state.db.close()
      }
    } else {
      const why = check.status === 'warn' ? 'there is no database yet' : 'the database could not be opened'
      for (const what of ['writable', 'schema', 'integrity']) skip(`database_${what}`, `database ${what}`, why)
    }
  }

  await redisChecks(config, options.timeoutMs, add)

  for (const host of config.modelHosts) {
    const provider = createModelProvider(config, host)
    const hostResult = await hostCheck(provider, config, host, options.timeoutMs)
    add(hostResult)
    if (hostResult.status === 'pass') add(await generationCheck(provider, host, options.generationTimeoutMs))
    else skip('test_generation', `test generation on ${host}`, 'the host failed its check')
  }

  add(await mailCheck(config, options.timeoutMs))
  add(publicUrlCheck(config))
  add(await clockCheck(config, newest, options.timeoutMs, options.clock, postgres?.skewMs ?? null))
  return results
}
