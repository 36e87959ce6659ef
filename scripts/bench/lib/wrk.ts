// The load generator: Debian's wrk (C, epoll, one thread drives many connections). Chosen over
// autocannon because on a 2-core machine the generator competes with what it measures: wrk spends a
// fraction of the CPU per request that a JavaScript generator does, so the service and the bare
// Bun.serve baseline get the same, larger share of the machine, and the ratio between them is not
// squeezed towards 1 by a saturated generator.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ensureCommands } from './debian'
import { baseEnv } from './procs'

export const WRK_DIR = join(import.meta.dir, '..', 'wrk')
const PDEATHSIG = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', '--pdeathsig', 'KILL', '--'] : []

export type WrkResult = {
  requests: number
  duration_us: number
  bytes: number
  connect: number
  read: number
  write: number
  /** Answers with status >= 400 (wrk's count). */
  status: number
  timeout: number
  /** Latencies in microseconds. */
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
  /** alt-text.lua only: cache hits, misses and non-200 answers. */
  hits: number
  misses: number
  bad: number
  /** Requests per second. */
  rps: number
}

/** Installs wrk with apt-get when it is missing (Debian; needs root, as on this project's machines). */
export async function ensureWrk(): Promise<string> {
  return (await ensureCommands({ wrk: 'wrk' })).wrk!
}

export type WrkOptions = {
  url: string
  script: 'static.lua' | 'alt-text.lua'
  connections: number
  threads?: number
  durationS: number
  /** Per-request timeout of wrk (its default of 2 s is too short for the intake). */
  timeoutS?: number
  env?: Record<string, string>
}

export async function runWrk(wrk: string, options: WrkOptions): Promise<WrkResult> {
  const args = [
    wrk,
    `-t${options.threads ?? 1}`,
    `-c${options.connections}`,
    `-d${options.durationS}s`,
    `--timeout`,
    `${options.timeoutS ?? 16}s`,
    '-s',
    join(WRK_DIR, options.script),
    options.url,
  ]
  const proc = Bun.spawn([...PDEATHSIG, ...args], { env: { ...baseEnv(), ...options.env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${args.join(' ')}\n${out}\n${err}`)
  const parsed = JSON.parse(line.slice('BENCH_JSON '.length)) as Omit<WrkResult, 'rps'>
  return { ...parsed, rps: parsed.requests / (parsed.duration_us / 1e6) }
}
