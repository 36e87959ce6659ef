// `alttext admin` as an operator runs it, on the same database as a running service (its SQLite file, or
// its PostgreSQL database), with the environment that service was given. The command runs in this
// process (runCli): it opens the database as a separate process would, never taking the service's lock.
import { makePng } from '../support/images'
import { runCli } from '../support/process'
import type { TestService } from '../support/service'

export type AdminResult = { code: number; stdout: string; stderr: string }

/** Runs `alttext admin ARGS` on the service's database, either engine's, with the service's public URL (and `env`). */
export function adminOf(service: TestService, env: Record<string, string> = {}) {
  return (...args: string[]): Promise<AdminResult> =>
    runCli(['admin', ...args], {
      ALTTEXT_DB: service.dbPath,
      ...(service.config.databaseUrl === undefined ? {} : { ALTTEXT_DATABASE_URL: service.config.databaseUrl }),
      ALTTEXT_PUBLIC_URL: 'http://alttext.test',
      ...env,
    })
}

/** Runs it and parses its --json output; throws with the output unless it exited 0. */
export async function adminJson<T = any>(admin: (...args: string[]) => Promise<AdminResult>, ...args: string[]): Promise<T> {
  const result = await admin(...args, '--json')
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout) as T
}

let size = 40
/** An upload body no earlier request had, so the answer is generated (and charged), not cached. */
export const freshImage = () => ({ image_base64: Buffer.from(makePng(++size, 23)).toString('base64') })
