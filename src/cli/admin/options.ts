// `alttext admin`'s command line: its subcommands, what each takes, and their --help texts.
import { parseCommandArgs, UsageError, wholeNumberFlag } from '../shared/args'
import { DEFAULT_PLAN_NAME, emailArgument, planNameArgument } from './service'

/** The most credits a plan or a grant may give: the bound of ALTTEXT_FREE_CREDITS. */
const MAX_CREDITS = 1_000_000_000

const FLAGS = {
  db: { type: 'string' },
  'database-url': { type: 'string' },
  json: { type: 'boolean' },
  'print-key': { type: 'boolean' },
  yes: { type: 'boolean' },
  credits: { type: 'string' },
  name: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

type Flag = Exclude<keyof typeof FLAGS, 'db' | 'database-url' | 'help'>

type Subcommand = {
  /** What follows the subcommand's name in its usage line. */
  args: string
  /** How many arguments it takes (EMAIL, N). */
  positionals: number
  /** Its line in `alttext admin --help`. */
  brief: string
  summary: string
  flags: Partial<Record<Flag, string>>
}

export const SUBCOMMANDS = {
  'accounts list': {
    args: '',
    positionals: 0,
    brief: 'every account: plan, credits, keys, last activity',
    summary: 'Every account: email, plan, credits left of the total this period, active keys, created, last active, status.',
    flags: { json: 'print JSON: {period_start, period_end, accounts: [...]}' },
  },
  'accounts show': {
    args: 'EMAIL',
    positionals: 1,
    brief: 'one account in detail, with its keys',
    summary: "One account: its plan, this period's credits (monthly plus granted), its active keys, status and dates.",
    flags: { json: 'print JSON' },
  },
  'accounts create': {
    args: 'EMAIL',
    positionals: 1,
    brief: 'make an account (SMTP set: mails a password link)',
    summary: [
      'Makes an account on the free plan, whatever ALTTEXT_REGISTRATION says. With ALTTEXT_SMTP_URL set, the',
      'person is mailed a link (valid 60 minutes) to choose a password, and sees their API key then; without it,',
      'the first API key is printed, once, for you to hand over.',
    ].join('\n'),
    flags: {
      'print-key': 'print the first API key even when mail is configured, and send no mail',
      json: 'print JSON: {email, plan, prefix, api_key, mailed}',
    },
  },
  'accounts disable': {
    args: 'EMAIL',
    positionals: 1,
    brief: 'refuse its keys and sessions, within a second',
    summary: [
      'Disables the account: within a second its keys are refused (403 account_disabled), its sessions end,',
      'it cannot sign in, its batches stop. Nothing is deleted; `accounts enable` undoes it.',
    ].join('\n'),
    flags: {},
  },
  'accounts enable': {
    args: 'EMAIL',
    positionals: 1,
    brief: 'let it in again',
    summary: 'Enables a disabled account again: its keys work as before; it signs in anew.',
    flags: {},
  },
  'accounts delete': {
    args: 'EMAIL --yes',
    positionals: 1,
    brief: 'delete it with everything it has',
    summary: 'Deletes the account with its keys, sessions, credits, history, batches and webhooks, for good.',
    flags: { yes: 'confirm the deletion (required)' },
  },
  'plans set': {
    args: 'EMAIL --credits N [--name NAME]',
    positionals: 1,
    brief: 'N credits a month instead of the free plan',
    summary: [
      'Gives the account a monthly allowance of N credits instead of the free plan (ALTTEXT_FREE_CREDITS),',
      'from this period on. Usage, validate-key and the console show the plan name and the new total.',
    ].join('\n'),
    flags: {
      credits: `credits per monthly period, 0-${MAX_CREDITS} (required)`,
      name: 'the plan name shown to the account (default: custom); a-z, 0-9, _ and -',
    },
  },
  'plans reset': {
    args: 'EMAIL',
    positionals: 1,
    brief: 'back to the free plan',
    summary: 'Puts the account back on the free plan (ALTTEXT_FREE_CREDITS a month).',
    flags: {},
  },
  'credits grant': {
    args: 'EMAIL N',
    positionals: 2,
    brief: 'N one-off credits for this period',
    summary: 'Adds N one-off credits to the account for this period only (the calendar month, UTC), on top of its plan.',
    flags: {},
  },
} satisfies Record<string, Subcommand>

export type SubcommandName = keyof typeof SUBCOMMANDS

const COMMON_OPTIONS = [
  { flag: '--db FILE', meaning: 'the database file (default: $ALTTEXT_DB, else ./data/alttext.db)' },
  {
    flag: '--database-url URL',
    meaning: 'a PostgreSQL database instead (default: $ALTTEXT_DATABASE_URL); prefer the variable: flags show in `ps`',
  },
  { flag: '-h, --help', meaning: 'show this help' },
]

const NOTES = [
  'Works on the database file, also while `alttext serve` runs on it: the service sees each change within a',
  'second. With ALTTEXT_DATABASE_URL (or --database-url), on that PostgreSQL database instead, beside every',
  'replica; --db FILE wins over both. The database must exist (start the service once); PostgreSQL at this',
  "binary's schema version, since the admin never migrates it. Exit code 0 on success, 1 when it failed",
  '(no such account, email taken, database busy or unreachable), 2 for a usage error.',
].join('\n')

const table = (rows: { flag: string; meaning: string }[]) => {
  const width = Math.max(...rows.map((row) => row.flag.length))
  return rows.map((row) => `  ${row.flag.padEnd(width)}  ${row.meaning}`)
}

const PLACEHOLDERS: Partial<Record<Flag, string>> = { credits: 'N', name: 'NAME' }

const usageOf = (name: string, sub: Subcommand) => `alttext admin ${name}${sub.args ? ` ${sub.args}` : ''} [options]`

export function subcommandHelp(name: SubcommandName): string {
  const sub: Subcommand = SUBCOMMANDS[name]
  const flags = Object.entries(sub.flags).map(([flag, meaning]) => ({
    flag: `--${flag}${PLACEHOLDERS[flag as Flag] ? ` ${PLACEHOLDERS[flag as Flag]}` : ''}`,
    meaning,
  }))
  return [`Usage: ${usageOf(name, sub)}`, '', sub.summary, '', 'Options:', ...table([...flags, ...COMMON_OPTIONS]), '', NOTES].join('\n')
}

/** The help of `alttext admin`, or of one group of it (`alttext admin accounts --help`). */
export function adminHelp(group?: string): string {
  const names = (Object.keys(SUBCOMMANDS) as SubcommandName[]).filter((name) => group === undefined || name.startsWith(`${group} `))
  const rows = names.map((name) => {
    const sub: Subcommand = SUBCOMMANDS[name]
    return { flag: `${name}${sub.args ? ` ${sub.args}` : ''}`, meaning: sub.brief }
  })
  return [
    `Usage: alttext admin ${group ?? 'COMMAND'} ... [options]`,
    '',
    'Operator commands on the accounts in the database: list them, make and delete them, disable and enable',
    'them, set their monthly credits and grant one-off credits.',
    '',
    'Commands:',
    ...table(rows),
    '',
    'Options:',
    ...table(COMMON_OPTIONS),
    '',
    NOTES,
    '',
    'Each command has its own help: alttext admin accounts create --help',
  ].join('\n')
}

export type AdminInvocation =
  | { help: string }
  | {
      name: SubcommandName
      email: string
      db: string | undefined
      /** --database-url: PostgreSQL instead of ALTTEXT_DATABASE_URL. */
      databaseUrl: string | undefined
      json: boolean
      printKey: boolean
      yes: boolean
      /** plans set: the plan; credits grant: the amount. */
      plan?: { name: string; credits: number }
      amount?: number
    }

const GROUPS = new Set(Object.keys(SUBCOMMANDS).map((name) => name.split(' ')[0]!))

/** Reads the arguments after `alttext admin`: the subcommand, its arguments and flags, checked. */
export function parseAdminArgs(argv: string[]): AdminInvocation {
  const { values, positionals } = parseCommandArgs(argv, FLAGS)
  const [group, action, ...rest] = positionals
  if (group === undefined) {
    if (values.help) return { help: adminHelp() }
    throw new UsageError('name a command, e.g. `alttext admin accounts list`')
  }
  if (!GROUPS.has(group)) throw new UsageError(`unknown command "${group}": use accounts, plans or credits`)
  const name = `${group} ${action ?? ''}` as SubcommandName
  if (!(name in SUBCOMMANDS)) {
    if (action === undefined && values.help) return { help: adminHelp(group) }
    throw new UsageError(action === undefined ? `"${group}" needs a command: see \`alttext admin ${group} --help\`` : `unknown command "${group} ${action}"`)
  }
  if (values.help) return { help: subcommandHelp(name) }
  const sub: Subcommand = SUBCOMMANDS[name]
  for (const flag of Object.keys(values) as (keyof typeof values)[]) {
    if (flag !== 'db' && flag !== 'database-url' && !(flag in sub.flags)) throw new UsageError(`\`${name}\` takes no --${flag}`)
  }
  if (values.db !== undefined && values['database-url'] !== undefined) throw new UsageError('give --db FILE or --database-url URL, not both')
  if (rest.length !== sub.positionals) throw new UsageError(`usage: ${usageOf(name, sub)}`)
  const [emailRaw, amountRaw] = rest
  const invocation = {
    name,
    email: emailRaw === undefined ? '' : emailArgument(emailRaw),
    db: values.db,
    databaseUrl: values['database-url'],
    json: values.json === true,
    printKey: values['print-key'] === true,
    yes: values.yes === true,
  }
  if (name === 'plans set') {
    const credits = wholeNumberFlag('credits', values.credits, 0, MAX_CREDITS)
    if (credits === undefined) throw new UsageError('plans set needs --credits N: the credits per monthly period')
    return { ...invocation, plan: { name: values.name === undefined ? DEFAULT_PLAN_NAME : planNameArgument(values.name), credits } }
  }
  if (name === 'credits grant') {
    if (!/^\d+$/.test(amountRaw!.trim())) throw new UsageError(`N must be a whole number of credits, got "${amountRaw}"`)
    const amount = Number(amountRaw!.trim())
    if (amount < 1 || amount > MAX_CREDITS) throw new UsageError(`N must be between 1 and ${MAX_CREDITS}, got ${amount}`)
    return { ...invocation, amount }
  }
  return invocation
}
