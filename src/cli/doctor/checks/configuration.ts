// The configuration check of `alttext doctor`: the environment loads as the service would load it. Every
// other check needs the Config it gives.
import { type Config, ConfigError, type Env, loadConfig } from '../../../config'
import { plural } from '../../../shared/wording'
import { describeUrl } from '../../../store/postgres/connection'
import { type CheckResult, result } from '../result'

/** `dbPath`: --db, a SQLite file to check instead of the configured database. `config` is null when it failed. */
export function configurationCheck(env: Env, dbPath: string | undefined): { check: CheckResult; config: Config | null } {
  let config: Config
  try {
    config = loadConfig(env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    const check = result(
      'configuration',
      'configuration',
      'fail',
      error.message,
      `correct ${error.variable} in the service's environment (alttext --help lists every variable and its default)`,
    )
    return { check, config: null }
  }
  // --db names a SQLite file, whatever ALTTEXT_DATABASE_URL says.
  if (dbPath) config = { ...config, dbPath, databaseUrl: undefined }
  const database = config.databaseUrl === undefined ? `database ${config.dbPath}` : `database PostgreSQL ${describeUrl(config.databaseUrl)}`
  const check = result(
    'configuration',
    'configuration',
    'pass',
    `valid; model ${config.model} (${config.modelApi} API) on ${plural(config.modelHosts.length, 'host')}, ${database}`,
  )
  return { check, config }
}
