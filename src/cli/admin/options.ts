// `alttext admin`'s command line: its subcommands, what each takes, and their --help texts.
import { parseCommandArgs, UsageError, wholeNumberFlag } from '../shared/args'
import type { Role } from '../../store/contract'
import { DEFAULT_PLAN_NAME, emailArgument, orgArgument, orgNameArgument, planNameArgument, roleArgument } from './service'

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
  org: { type: 'string' },
  owner: { type: 'string' },
  plan: { type: 'string' },
  role: { type: 'string' },
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
  /** Its first argument is an account's EMAIL, for which --org ORG may stand instead (plans and credits). */
  orOrg?: true
}

const ORG_TARGET = 'the organisation (org_…) instead of an account: EMAIL or --org, not both'

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
  'orgs list': {
    args: '',
    positionals: 0,
    brief: 'every team organisation: plan, credits, members, keys',
    summary: [
      'Every team organisation: its id (org_…), name, plan, credits left of the total this period, members,',
      "active keys and when it was made. A personal organisation is its person's account: see `accounts list`.",
    ].join('\n'),
    flags: { json: 'print JSON: {period_start, period_end, orgs: [...]}' },
  },
  'orgs show': {
    args: 'ORG',
    positionals: 1,
    brief: 'one organisation, with its members and roles',
    summary: "One organisation (team or personal): its plan, this period's credits (monthly plus granted), active keys, and its members with their roles.",
    flags: { json: 'print JSON: {period_start, period_end, org, members: [{email, role, joined_at}]}' },
  },
  'orgs create': {
    args: 'NAME --owner EMAIL',
    positionals: 1,
    brief: 'make a team organisation with its first owner',
    summary: [
      'Makes a team organisation named NAME (quote it when it has spaces), owned by the account EMAIL, on the',
      'free plan (ALTTEXT_FREE_CREDITS a month), or with --credits N on a plan of its own. Prints its id (org_…).',
    ].join('\n'),
    flags: {
      owner: 'the account that owns it (required)',
      credits: `credits per monthly period instead of the free plan, 0-${MAX_CREDITS}`,
      plan: 'with --credits: the plan name (default: custom); a-z, 0-9, _ and -',
      json: 'print JSON, as `orgs show --json`',
    },
  },
  'orgs add-member': {
    args: 'ORG EMAIL --role ROLE',
    positionals: 2,
    brief: 'add an account to a team organisation',
    summary: [
      'Adds the account EMAIL to the team organisation ORG with ROLE: owner, admin, reviewer or author (each',
      'may do all the ones after it may). No invitation is mailed. A personal organisation has no other members.',
    ].join('\n'),
    flags: { role: 'owner, admin, reviewer or author (required)' },
  },
  'orgs set-role': {
    args: 'ORG EMAIL ROLE',
    positionals: 3,
    brief: "change a member's role",
    summary: [
      "Changes the member's role in ORG to ROLE (owner, admin, reviewer or author); its keys for the organisation",
      'act with the new role within a second. The last owner cannot be demoted: make another member owner first.',
    ].join('\n'),
    flags: {},
  },
  'orgs remove-member': {
    args: 'ORG EMAIL',
    positionals: 2,
    brief: 'remove a member and revoke its keys there',
    summary: [
      'Removes the member from ORG and revokes every API key it made for the organisation, within a second. Its',
      'account and personal organisation stay. The last owner cannot be removed: make another member owner first.',
    ].join('\n'),
    flags: {},
  },
  'plans set': {
    args: 'EMAIL|--org ORG --credits N [--name NAME]',
    positionals: 1,
    brief: 'N credits a month instead of the free plan',
    summary: [
      'Gives the account, or the organisation, a monthly allowance of N credits instead of the free plan',
      '(ALTTEXT_FREE_CREDITS), from this period on. Usage, validate-key and the console show the plan name and',
      "the new total. An organisation's activity log records the change.",
    ].join('\n'),
    flags: {
      org: ORG_TARGET,
      credits: `credits per monthly period, 0-${MAX_CREDITS} (required)`,
      name: 'the plan name shown to the account (default: custom); a-z, 0-9, _ and -',
    },
    orOrg: true,
  },
  'plans reset': {
    args: 'EMAIL|--org ORG',
    positionals: 1,
    brief: 'back to the free plan',
    summary: 'Puts the account, or the organisation, back on the free plan (ALTTEXT_FREE_CREDITS a month).',
    flags: { org: ORG_TARGET },
    orOrg: true,
  },
  'credits grant': {
    args: 'EMAIL|--org ORG N',
    positionals: 2,
    brief: 'N one-off credits for this period',
    summary: [
      'Adds N one-off credits to the account, or the organisation, for this period only (the calendar month, UTC),',
      "on top of its plan. An organisation's activity log records the grant.",
    ].join('\n'),
    flags: { org: ORG_TARGET },
    orOrg: true,
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
  '(no such account or organisation, email taken, last owner, already a member, database busy or',
  'unreachable), 2 for a usage error. Changes to an organisation are recorded in its activity log as the',
  "operator's.",
].join('\n')

const table = (rows: { flag: string; meaning: string }[]) => {
  const width = Math.max(...rows.map((row) => row.flag.length))
  return rows.map((row) => `  ${row.flag.padEnd(width)}  ${row.meaning}`)
}

const PLACEHOLDERS: Partial<Record<Flag, string>> = { credits: 'N', name: 'NAME', org: 'ORG', owner: 'EMAIL', plan: 'NAME', role: 'ROLE' }

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
    'Operator commands on the accounts and organisations in the database: list them, make and delete accounts,',
    'disable and enable them, make organisations and manage their members, set monthly credits and grant',
    'one-off credits (to an account or an organisation).',
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
      /** plans set, orgs create --credits: the plan; credits grant: the amount. */
      plan?: { name: string; credits: number }
      amount?: number
      /** The organisation (org_…): the ORG argument of `orgs …`, or --org of plans and credits (then email is ''). */
      org?: string
      /** orgs create: the name and the owner's email. */
      orgName?: string
      owner?: string
      /** orgs add-member, orgs set-role. */
      role?: Role
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
  if (!GROUPS.has(group)) throw new UsageError(`unknown command "${group}": use accounts, orgs, plans or credits`)
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
  const byOrg = sub.orOrg === true && values.org !== undefined
  if (byOrg && rest.length === sub.positionals) throw new UsageError(`give EMAIL or --org ORG, not both: usage: ${usageOf(name, sub)}`)
  if (rest.length !== sub.positionals - (byOrg ? 1 : 0)) throw new UsageError(`usage: ${usageOf(name, sub)}`)
  const common = {
    name,
    email: '',
    db: values.db,
    databaseUrl: values['database-url'],
    json: values.json === true,
    printKey: values['print-key'] === true,
    yes: values.yes === true,
  }
  if (group === 'orgs') return orgsInvocation(name, rest, values, common)
  const [emailRaw, amountRaw] = byOrg ? ['', ...rest] : rest
  const invocation = {
    ...common,
    email: byOrg || emailRaw === undefined ? '' : emailArgument(emailRaw),
    ...(byOrg ? { org: orgArgument(values.org!) } : {}),
  }
  if (name === 'plans set') {
    const credits = wholeNumberFlag('credits', values.credits, 0, MAX_CREDITS)
    if (credits === undefined) throw new UsageError('plans set needs --credits N: the credits per monthly period')
    return { ...invocation, plan: { name: values.name === undefined ? DEFAULT_PLAN_NAME : planNameArgument(values.name, '--name'), credits } }
  }
  if (name === 'credits grant') {
    if (!/^\d+$/.test(amountRaw!.trim())) throw new UsageError(`N must be a whole number of credits, got "${amountRaw}"`)
    const amount = Number(amountRaw!.trim())
    if (amount < 1 || amount > MAX_CREDITS) throw new UsageError(`N must be between 1 and ${MAX_CREDITS}, got ${amount}`)
    return { ...invocation, amount }
  }
  return invocation
}

type Values = ReturnType<typeof parseCommandArgs<typeof FLAGS>>['values']
type Invocation = Exclude<AdminInvocation, { help: string }>

/** The arguments of `orgs …`: ORG first (but for create's NAME), then EMAIL, then ROLE. */
function orgsInvocation(name: SubcommandName, rest: string[], values: Values, common: Invocation): Invocation {
  if (name === 'orgs list') return common
  if (name === 'orgs create') {
    if (values.owner === undefined) throw new UsageError('orgs create needs --owner EMAIL: the account that owns the organisation')
    const credits = wholeNumberFlag('credits', values.credits, 0, MAX_CREDITS)
    if (credits === undefined && values.plan !== undefined)
      throw new UsageError('--plan NAME goes with --credits N: the credits per monthly period of that plan')
    return {
      ...common,
      orgName: orgNameArgument(rest[0]!),
      owner: emailArgument(values.owner),
      ...(credits === undefined ? {} : { plan: { name: values.plan === undefined ? DEFAULT_PLAN_NAME : planNameArgument(values.plan, '--plan'), credits } }),
    }
  }
  const [orgRaw, emailRaw, roleRaw] = rest
  const invocation = { ...common, org: orgArgument(orgRaw!), email: emailRaw === undefined ? '' : emailArgument(emailRaw) }
  if (name === 'orgs add-member') {
    if (values.role === undefined) throw new UsageError('orgs add-member needs --role ROLE: owner, admin, reviewer or author')
    return { ...invocation, role: roleArgument(values.role) }
  }
  if (name === 'orgs set-role') return { ...invocation, role: roleArgument(roleRaw!) }
  return invocation
}
