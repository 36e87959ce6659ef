// Argument handling shared by the client commands: node:util's parseArgs (strict: unknown options and
// missing values are usage errors), checked numbers and lists, the exit codes, and `--help` text.
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { CLIENT_VARIABLES } from '../../config'

/** Exit codes of the client commands: 0 only when every item succeeded. */
export const EXIT = {
  ok: 0,
  /** Some items failed (or the run stopped early: out of credits, interrupted). */
  failed: 1,
  /** Bad arguments or configuration; nothing was sent. */
  usage: 2,
} as const

/** Bad arguments: the command prints the message and a hint to `--help`, and exits 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>

/** The options every client command takes. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options

/** parseArgs in strict mode with positionals; its errors become UsageErrors with a readable message. */
export function parseCommandArgs<T extends Options>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/s, '').replace(/^Unknown option/, 'unknown option'))
  }
}

/** A whole-number flag within bounds; undefined when not given. */
export function wholeNumberFlag(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`--${name} must be a whole number, got "${raw}"`)
  const value = Number(raw.trim())
  if (value < min || value > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

/** A flag that takes one of `choices`; `fallback` when not given. */
export function choiceFlag<C extends string>(name: string, raw: string | undefined, choices: readonly C[], fallback: C): C {
  if (raw === undefined) return fallback
  const value = raw.trim().toLowerCase()
  const found = choices.find((choice) => choice === value)
  if (found === undefined) throw new UsageError(`--${name} must be ${choices.join(', ')}; got "${raw}"`)
  return found
}

/** A comma-separated (or repeated) list flag, entries trimmed, empty ones dropped; undefined when not given. */
export function listFlag(raw: string | string[] | undefined): string[] | undefined {
  if (raw === undefined) return undefined
  const entries = (Array.isArray(raw) ? raw : [raw])
    .flatMap((value) => value.split(','))
    .map((entry) => entry.trim())
    .filter(Boolean)
  return entries.length > 0 ? entries : undefined
}

export type HelpSpec = {
  /** `alttext describe [options] FILES|DIRS|URLS...` */
  usage: string
  /** A paragraph saying what the command does. */
  summary: string
  /** Each option: its flag as typed and what it means. */
  options: { flag: string; meaning: string }[]
  /** Example command lines. */
  examples?: string[]
  /** Further paragraphs (exit codes, resume...). */
  notes?: string[]
}

type Variable = { name: string; default: string; meaning: string }

/**
 * A variable's line in a --help: the default in brackets after the meaning, since a meaning or a
 * default may hold parentheses of its own ("unset (alttext@<public host>)").
 */
export const variableLine = (variable: Variable, width: number): string =>
  `  ${variable.name.padEnd(width)}  ${variable.meaning} [default: ${variable.default}]`

/** The layout of every command's `--help`, that of `alttext --help`. */
function helpLayout(spec: HelpSpec, options: HelpSpec['options'], variables: Variable[]): string {
  const width = Math.max(...options.map((option) => option.flag.length))
  const variableWidth = Math.max(...variables.map((variable) => variable.name.length))
  return [
    `Usage: ${spec.usage}`,
    '',
    spec.summary,
    '',
    'Options:',
    ...options.map((option) => `  ${option.flag.padEnd(width)}  ${option.meaning}`),
    '',
    'Environment:',
    ...variables.map((variable) => variableLine(variable, variableWidth)),
    ...(spec.notes ?? []).flatMap((note) => ['', note]),
    ...(spec.examples?.length ? ['', 'Examples:', ...spec.examples.map((example) => `  ${example}`)] : []),
  ].join('\n')
}

const HELP_OPTION = { flag: '-h, --help', meaning: 'show this help' }

/** `--help` text of a client command, with the client options and variables appended. */
export function helpText(spec: HelpSpec): string {
  const options = [
    ...spec.options,
    { flag: '--url URL', meaning: 'the alttext service (default: $ALTTEXT_URL, else http://localhost:3000)' },
    { flag: '--key KEY', meaning: 'API key (default: $ALTTEXT_API_KEY); prefer the variable: flags show in `ps`' },
    { flag: '-q, --quiet', meaning: 'no progress output; failures and the summary only' },
    HELP_OPTION,
  ]
  return helpLayout(spec, options, CLIENT_VARIABLES)
}

/** `--help` text of an operator command (backup, restore, doctor), which works on the server's own files and configuration. */
export function operatorHelpText(spec: HelpSpec, variables: Variable[]): string {
  return helpLayout(spec, [...spec.options, HELP_OPTION], variables)
}
