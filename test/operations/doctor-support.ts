// Helpers of the `alttext doctor` tests: a healthy set-up on loopback (a fake Ollama, a migrated database,
// an SMTP capture, a public URL that matches the listen address) and the command run against it.
import { join } from 'node:path'
import { alttext } from './backup-support'

export type DoctorCheck = { id: string; name: string; status: 'pass' | 'warn' | 'fail' | 'skip'; detail: string; fix?: string; ms?: number }
export type DoctorReport = { version: string; ok: boolean; passed: number; warned: number; failed: number; skipped: number; checks: DoctorCheck[] }

/** The environment of a healthy service: listens on loopback port 3999, and its public URL says so. */
export function healthyEnv(dir: string, modelHost: string, smtpUrl?: string): Record<string, string> {
  return {
    ALTTEXT_DB: join(dir, 'alttext.db'),
    OLLAMA_HOST: modelHost,
    HOST: '127.0.0.1',
    PORT: '3999',
    ALTTEXT_PUBLIC_URL: 'http://127.0.0.1:3999',
    ...(smtpUrl ? { ALTTEXT_SMTP_URL: smtpUrl } : {}),
  }
}

/** `alttext doctor` as text: its exit code, output, and its lines by check name. */
export async function doctorText(env: Record<string, string>, args: string[] = []) {
  const run = await alttext(['doctor', ...args], env)
  const lines = run.stdout.split('\n')
  /** The line of the check named `name` ("PASS  database: …"), with its fix line when there is one. */
  const line = (name: string) => {
    const at = lines.findIndex((l) => /^(PASS|WARN|FAIL|SKIP) {2}/.test(l) && l.slice(6).startsWith(`${name}: `))
    if (at < 0) return undefined
    return lines[at + 1]?.startsWith('      fix: ') ? `${lines[at]}\n${lines[at + 1]}` : lines[at]
  }
  return { ...run, line }
}

export async function doctorJson(env: Record<string, string>, args: string[] = []) {
  const run = await alttext(['doctor', '--json', ...args], env)
  return { ...run, report: JSON.parse(run.stdout) as DoctorReport }
}

export const byId = (report: DoctorReport, id: string) => report.checks.filter((check) => check.id === id)
