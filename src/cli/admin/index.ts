// `alttext admin`: operator commands on the accounts and organisations in the database file, or in
// PostgreSQL with ALTTEXT_DATABASE_URL. Opens the database beside a running service (never taking its lock), builds the
// service's own accounts service and credit ledger on it, runs one subcommand, prints the result, and
// closes what it opened.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { CONFIG_VARIABLES, type Config, ConfigError, checkDatabaseUrl, type Env, loadConfig } from '../../config'
import { createCreditLedger } from '../../credits/service'
import { createLogMailer, createSmtpMailer, type Mailer } from '../../modules/accounts/mailer'
import { createAccountsService } from '../../modules/accounts/service'
import { ApiError } from '../../shared/errors'
import type { Logger } from '../../shared/logger'
import { creditsLeft, plural } from '../../shared/wording'
import { StoreBusyError } from '../../store/contract'
import { createSqliteStore } from '../../store/sqlite/store'
import type { Store } from '../../store/contract'
import { EXIT, UsageError } from '../shared/args'
import type { CommandIo } from '../shared/io'
import { type AdminInvocation, parseAdminArgs } from './options'
import { openPostgresForAdmin } from './postgres'
import { type AccountView, AdminError, type AdminService, type CreditsView, createAdminService, type MemberView, type OrgView, printable } from './service'

/** How a run speaks: results on stdout, failures (with their exit code) and the service parts' trouble on stderr. */
type Output = {
  usageFailure(message: string): number
  failure(message: string): number
  print(text: string): void
  printJson(value: unknown): void
  /** The operator reads the command's own output; only trouble from the service's parts is worth a line. */
  logger: Logger
}

function outputOf(io: CommandIo): Output {
  const print = (text: string) => {
    io.stdout.write(`${text}\n`)
  }
  return {
    usageFailure(message) {
      io.stderr.write(`alttext admin: ${message}\nRun \`alttext admin --help\` for the commands.\n`)
      return EXIT.usage
    },
    failure(message) {
      io.stderr.write(`alttext admin: ${message}\n`)
      return EXIT.failed
    },
    print,
    printJson: (value) => print(JSON.stringify(value, null, 2)),
    logger: {
      access: () => {},
      info: () => {},
      warn: (msg, fields) => io.stderr.write(`${JSON.stringify({ level: 'warn', msg, ...fields })}\n`),
      error: (msg, fields) => io.stderr.write(`${JSON.stringify({ level: 'error', msg, ...fields })}\n`),
    },
  }
}

/** "2026-11-23 09:45" (UTC), or `none`. */
const when = (isoTime: string | null, none = 'never') => (isoTime ? `${isoTime.slice(0, 10)} ${isoTime.slice(11, 16)}` : none)

/** "credits left: 2 of 5 (3 a month + 2 granted); 3 used": left of the total first, as the console says it. */
const creditsLine = ({ credits: c }: { credits: CreditsView }) =>
  `credits left: ${creditsLeft(c.remaining, c.total)} (${c.monthly} a month${c.granted > 0 ? ` + ${c.granted} granted` : ''}); ${c.used} used`

function accountsTable(accounts: AccountView[]): string {
  const header = ['EMAIL', 'PLAN', 'CREDITS LEFT', 'KEYS', 'CREATED', 'LAST ACTIVE', 'STATUS']
  const rows = accounts.map((a) => [
    a.email,
    a.plan,
    creditsLeft(a.credits.remaining, a.credits.total),
    String(a.keys),
    when(a.created_at),
    when(a.last_active_at),
    a.status,
  ])
  return table(header, rows)
}

function orgsTable(orgs: OrgView[]): string {
  const header = ['ID', 'NAME', 'PLAN', 'CREDITS LEFT', 'MEMBERS', 'KEYS', 'CREATED']
  const rows = orgs.map((o) => [
    o.id,
    printable(o.name),
    o.plan,
    creditsLeft(o.credits.remaining, o.credits.total),
    String(o.members),
    String(o.keys),
    when(o.created_at),
  ])
  return table(header, rows)
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

function accountText(shown: { period_start: string; period_end: string; account: AccountView }): string {
  const a = shown.account
  return [
    `email:        ${a.email}`,
    `status:       ${a.status}${a.disabled_at ? ` since ${when(a.disabled_at)}` : ''}`,
    `plan:         ${a.plan}`,
    creditsLine(a),
    `period:       ${when(shown.period_start)} to ${when(shown.period_end)} (UTC)`,
    `active keys:  ${a.keys}`,
    `created:      ${when(a.created_at)}`,
    `last active:  ${when(a.last_active_at)}`,
  ].join('\n')
}

function orgText(shown: { period_start: string; period_end: string; org: OrgView; members: MemberView[] }): string {
  const o = shown.org
  const width = Math.max(...shown.members.map((m) => m.role.length))
  return [
    `id:           ${o.id}`,
    `name:         ${printable(o.name)}`,
    `kind:         ${o.personal ? 'personal' : 'team'}`,
    `plan:         ${o.plan}`,
    creditsLine(o),
    `period:       ${when(shown.period_start)} to ${when(shown.period_end)} (UTC)`,
    `active keys:  ${o.keys}`,
    `created:      ${when(o.created_at)}`,
    `members:      ${o.members}`,
    ...shown.members.map((m) => `  ${m.role.padEnd(width)}  ${m.email}  joined ${when(m.joined_at)}`),
  ].join('\n')
}

/** What `orgs show --json` and `orgs create --json` print: the label is for text only. */
const orgJson = ({ label: _label, ...shown }: { label: string; period_start: string; period_end: string; org: OrgView; members: MemberView[] }) => shown

/** Why no database was found, and which variable or flag names the right one. */
function noDatabase(path: string, given: string, byFlag: boolean): string {
  const create = 'on a new install, start the service once to create it'
  if (byFlag) return `no database at ${path} (--db): check the path, or leave out --db to use ALTTEXT_DB; ${create}`
  const fix = "set ALTTEXT_DB to the service's database file, or pass --db FILE"
  const fallback = CONFIG_VARIABLES.find((variable) => variable.name === 'ALTTEXT_DB')?.default
  // The default is relative: from another directory it names another file.
  if (given === fallback)
    return `no database at ${path}: ALTTEXT_DB is not set, and its default ${fallback} is relative to the current directory; ${fix} (${create})`
  return `no database at ${path} (ALTTEXT_DB): ${fix}; ${create}`
}

async function runSubcommand(
  admin: AdminService,
  call: Exclude<AdminInvocation, { help: string }>,
  config: Config,
  smtp: boolean,
  out: Output,
): Promise<number> {
  const { print, printJson, failure, usageFailure } = out
  const { email } = call
  switch (call.name) {
    case 'accounts list': {
      const listed = await admin.list()
      if (call.json) printJson(listed)
      else print(listed.accounts.length === 0 ? 'no accounts yet' : accountsTable(listed.accounts))
      return EXIT.ok
    }
    case 'accounts show': {
      const shown = await admin.show(email)
      if (call.json) printJson(shown)
      else {
        const keys = shown.active_keys.map(
          (k) =>
            `  ${k.prefix}  ${k.label ?? '(no label)'}  created ${when(k.created_at)}, expires ${when(k.expires_at, 'never')}, last used ${when(k.last_used_at)}`,
        )
        print([accountText(shown), ...keys].join('\n'))
      }
      return EXIT.ok
    }
    case 'accounts create': {
      const mailLink = smtp && !call.printKey
      const made = await admin.create(email, { mailLink })
      const showKey = !made.mailed
      if (call.json)
        printJson({ email: made.account.email, plan: made.account.plan, prefix: made.prefix, api_key: showKey ? made.apiKey : null, mailed: made.mailed })
      else if (made.mailed) print(`created ${email}; a link to choose a password (valid 60 minutes) was mailed to it, and shows the API key once chosen`)
      else {
        print(`created ${email} (plan ${made.account.plan}); its first API key, shown only now (hand it over safely):`)
        print(made.apiKey)
        if (!mailLink)
          print(
            `to use the console, the person chooses a password with "Forgot your password?" at ${config.publicUrl}/forgot-password${smtp ? '' : ' (without ALTTEXT_SMTP_URL its link goes to the service log, for you to hand over)'}; that replaces this key`,
          )
      }
      if (made.mailError !== null) return failure(`the account was made, but the mail to ${email} failed: ${made.mailError}`)
      return EXIT.ok
    }
    case 'accounts disable':
    case 'accounts enable': {
      const disable = call.name === 'accounts disable'
      const result = await admin.setDisabled(email, disable)
      if (!result.changed) print(`${email} was already ${disable ? 'disabled' : 'enabled'}`)
      else if (disable)
        print(
          `${email} disabled: its keys and sessions stop working within a second, and it cannot sign in; \`alttext admin accounts enable ${email}\` undoes it`,
        )
      else print(`${email} enabled: its keys work again, and it can sign in`)
      return EXIT.ok
    }
    case 'accounts delete': {
      if (!call.yes) return usageFailure(`deleting ${email} removes its keys, credits, history and batches for good; add --yes to confirm`)
      const deleted = await admin.remove(email)
      print(
        `deleted ${email} with ${plural(deleted.keys, 'API key')}, ${plural(deleted.sessions, 'session')} and ${plural(deleted.history, 'history entry', 'history entries')}`,
      )
      return EXIT.ok
    }
    case 'plans set':
    case 'plans reset': {
      if (call.org !== undefined) {
        const shown = await admin.setOrgPlan(call.org, call.plan ?? null)
        print(`${shown.label}: plan ${shown.org.plan}; this period ${creditsLine(shown.org)}`)
        return EXIT.ok
      }
      const shown = await admin.setPlan(email, call.plan ?? null)
      print(`${email}: plan ${shown.account.plan}; this period ${creditsLine(shown.account)}`)
      return EXIT.ok
    }
    case 'credits grant': {
      if (call.org !== undefined) {
        const shown = await admin.grantOrg(call.org, call.amount!)
        print(`granted ${plural(call.amount!, 'credit')} to ${shown.label} until ${when(shown.period_end)} UTC; this period ${creditsLine(shown.org)}`)
        return EXIT.ok
      }
      const shown = await admin.grant(email, call.amount!)
      print(`granted ${plural(call.amount!, 'credit')} to ${email} until ${when(shown.period_end)} UTC; this period ${creditsLine(shown.account)}`)
      return EXIT.ok
    }
    case 'orgs list': {
      const listed = await admin.listOrgs()
      if (call.json) printJson(listed)
      else print(listed.orgs.length === 0 ? 'no team organisations yet (make one with `alttext admin orgs create NAME --owner EMAIL`)' : orgsTable(listed.orgs))
      return EXIT.ok
    }
    case 'orgs show': {
      const shown = await admin.showOrg(call.org!)
      if (call.json) printJson(orgJson(shown))
      else print(orgText(shown))
      return EXIT.ok
    }
    case 'orgs create': {
      const made = await admin.createOrg(call.orgName!, call.owner!, call.plan ?? null)
      if (call.json) printJson(orgJson(made))
      else print(`created ${made.label}, owned by ${call.owner}, on plan ${made.org.plan}; this period ${creditsLine(made.org)}`)
      return EXIT.ok
    }
    case 'orgs add-member': {
      const added = await admin.addMember(call.org!, email, call.role!)
      print(`added ${email} to ${added.label} as ${added.member.role}`)
      return EXIT.ok
    }
    case 'orgs set-role': {
      const changed = await admin.setRole(call.org!, email, call.role!)
      if (changed.from === changed.member.role) print(`${email} was already ${changed.member.role} in ${changed.label}`)
      else print(`${email} is now ${changed.member.role} in ${changed.label} (was ${changed.from}): its keys there act with the new role within a second`)
      return EXIT.ok
    }
    case 'orgs remove-member': {
      const removed = await admin.removeMember(call.org!, email)
      print(`removed ${email} from ${removed.label} and revoked ${plural(removed.revokedKeys, 'API key')} it made there; its own account stays`)
      return EXIT.ok
    }
  }
}

/** The environment the command reads: --db FILE is SQLite whatever ALTTEXT_DATABASE_URL says; --database-url wins over the variable. */
function environment(call: Exclude<AdminInvocation, { help: string }>, env: Env): Env {
  if (call.db !== undefined) return { ...env, ALTTEXT_DB: call.db, ALTTEXT_DATABASE_URL: undefined }
  if (call.databaseUrl !== undefined) return { ...env, ALTTEXT_DATABASE_URL: checkDatabaseUrl(call.databaseUrl.trim(), '--database-url') }
  return env
}

async function openStore(call: Exclude<AdminInvocation, { help: string }>, config: Config, cwd: string): Promise<{ store: Store } | { failure: string }> {
  if (config.databaseUrl !== undefined)
    return openPostgresForAdmin(config.databaseUrl, call.databaseUrl === undefined ? 'ALTTEXT_DATABASE_URL' : '--database-url')
  const dbPath = resolve(cwd, config.dbPath)
  const source = call.db === undefined ? 'ALTTEXT_DB' : '--db'
  // Never a fresh empty database for a mistyped path.
  if (!existsSync(dbPath)) return { failure: noDatabase(dbPath, config.dbPath, call.db !== undefined) }
  try {
    return { store: createSqliteStore(dbPath, { processLock: false }) }
  } catch (error) {
    return { failure: `${source}: ${error instanceof Error ? error.message : String(error)}` }
  }
}

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const out = outputOf(io)
  const { failure, usageFailure } = out
  let call: AdminInvocation
  let config: Config
  try {
    call = parseAdminArgs(argv)
    if ('help' in call) {
      out.print(call.help)
      return EXIT.ok
    }
    config = loadConfig(environment(call, io.env))
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) return usageFailure(error.message)
    throw error
  }

  const opened = await openStore(call, config, io.cwd)
  if ('failure' in opened) return failure(opened.failure)
  const { store } = opened
  const smtp = config.smtpUrl !== undefined
  const mailer: Mailer = config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.mailFrom) : createLogMailer(out.logger)
  try {
    const { clock } = io
    const credits = createCreditLedger(store.credits, config.freeCredits, clock)
    const accounts = createAccountsService({
      store,
      credits,
      mailer,
      logger: out.logger,
      publicUrl: config.publicUrl,
      registration: config.registration,
      verifyEmail: config.verifyEmail,
      lastUsed: () => undefined,
      clock,
      // Nothing of other accounts is kept here; the serving process hears of it through the change log.
      keysRevoked: () => {},
      accountRemoved: (accountId) => credits.forget(accountId),
      accountVerified: () => {},
    })
    return await runSubcommand(createAdminService({ store, accounts, credits, clock }), call, config, smtp, out)
  } catch (error) {
    if (error instanceof AdminError || error instanceof ApiError || error instanceof StoreBusyError) return failure(error.message)
    throw error
  } finally {
    mailer.close()
    await store.close()
  }
}
