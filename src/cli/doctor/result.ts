// One line of `alttext doctor`: what was checked, how it went, and what to do about it.
import { plural } from '../../shared/wording'

/** warn: works as it is, but needs a change before it is used more widely (it does not fail the run). */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip'

export type CheckResult = {
  /** Stable name of the check, for scripts: `database_schema`, `model_host`... */
  id: string
  /** What the line says it checked, e.g. "model host http://gpu1:11434". */
  name: string
  status: CheckStatus
  detail: string
  /** What to do about a failure or a warning. */
  fix?: string
  /** How long the check took, when that is part of its answer (the test generation, a database round trip). */
  ms?: number
}

export { errorText } from '../../shared/wording'
export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

export const result = (id: string, name: string, status: CheckStatus, detail: string, fix?: string, ms?: number): CheckResult => ({
  id,
  name,
  status,
  detail,
  ...(fix !== undefined && (status === 'fail' || status === 'warn') ? { fix } : {}),
  ...(ms !== undefined ? { ms: Math.round(ms) } : {}),
})

/**
 * The schema version against this binary's, with the engine's own way back (newer) and forward (older). Older
 * is a warning: the service migrates when it starts (an upgrade's usual state before its restart).
 */
export function schemaVersionCheck(version: number, latest: number, fixes: { newer: string; older: string }): CheckResult {
  const name = 'database schema'
  if (version === latest) return result('database_schema', name, 'pass', `version ${version}, this binary's`)
  if (version > latest)
    return result(
      'database_schema',
      name,
      'fail',
      `version ${version} is newer than this binary knows (${latest}): the service will refuse to start`,
      fixes.newer,
    )
  const which = latest - version === 1 ? `migration ${latest}` : `migrations ${version + 1}..${latest}`
  return result(
    'database_schema',
    name,
    'warn',
    `version ${version}; this binary's is ${latest}: ${plural(latest - version, 'migration')} pending; \`alttext serve\` will run ${which} when it starts`,
    fixes.older,
  )
}
