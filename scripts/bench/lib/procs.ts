// Child processes of the benchmark: every one is registered here and ended on exit, also on error or
// Ctrl-C. Where util-linux `setpriv` exists, children also get a parent-death signal, so even a
// `kill -9` of the orchestrator leaves nothing running.
import { existsSync, readFileSync, rmSync } from 'node:fs'
import type { Subprocess } from 'bun'

type Child = { name: string; proc: Subprocess }

const children = new Set<Child>()
const tempDirs = new Set<string>()
const PDEATHSIG = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', '--pdeathsig', 'KILL', '--'] : []

export const baseEnv = (): Record<string, string> => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' })

export function registerTempDir(dir: string): string {
  tempDirs.add(dir)
  return dir
}

/** Ends one child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(proc: Subprocess, graceMs = 5000): Promise<void> {
  for (const child of children) if (child.proc === proc) children.delete(child)
  if (proc.exitCode !== null || proc.signalCode !== null) return
  proc.kill('SIGTERM')
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs)
  await proc.exited
  clearTimeout(timer)
}

export async function cleanupAll(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child.proc, 3000)))
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
}

let cleanupInstalled = false
export function installCleanup(): void {
  if (cleanupInstalled) return
  cleanupInstalled = true
  const onSignal = (signal: string) => {
    console.error(`\nbench: ${signal}, stopping children`)
    void cleanupAll().finally(() => process.exit(130))
  }
  process.on('SIGINT', () => onSignal('SIGINT'))
  process.on('SIGTERM', () => onSignal('SIGTERM'))
  // Last resort on a synchronous exit: signal whatever is still running.
  process.on('exit', () => {
    for (const child of children) child.proc.kill('SIGKILL')
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  })
}

export type ReadyChild = { proc: Subprocess<'pipe', 'pipe', 'pipe'>; info: Record<string, unknown>; stderr(): string }

/**
 * Spawns a Bun helper that prints `BENCH_READY {json}` once listening. Its stdin stays an open pipe
 * (it exits when the pipe closes, i.e. when this process is gone).
 */
export async function spawnReady(name: string, command: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<ReadyChild> {
  const proc = Bun.spawn([...PDEATHSIG, ...command], { env: { ...baseEnv(), ...env }, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  children.add({ name, proc })
  let err = ''
  const decoder = new TextDecoder()
  void (async () => {
    for await (const chunk of proc.stderr) err = (err + decoder.decode(chunk, { stream: true })).slice(-16_384)
  })()
  const { promise, resolve, reject } = Promise.withResolvers<Record<string, unknown>>()
  void (async () => {
    let text = ''
    let found = false
    for await (const chunk of proc.stdout) {
      if (found) continue // keep draining, never grow
      text += decoder.decode(chunk, { stream: true })
      const match = text.match(/BENCH_READY (\{.*\})\n/)
      if (match) {
        found = true
        resolve(JSON.parse(match[1]!) as Record<string, unknown>)
      }
    }
  })()
  void proc.exited.then((code) => reject(new Error(`${name} exited with ${code} before it was ready:\n${err}`)))
  const timer = setTimeout(() => reject(new Error(`${name} not ready within ${timeoutMs} ms:\n${err}`)), timeoutMs)
  try {
    const info = await promise
    return { proc, info, stderr: () => err }
  } finally {
    clearTimeout(timer)
  }
}

export type ServiceHandle = {
  proc: Subprocess
  url: string
  pid: number
  logPath: string
  /** False once the process has exited (crashed, killed by the kernel...). */
  alive(): boolean
  stop(): Promise<void>
}

/** A free loopback TCP port: bound once, then released for the child to take. */
function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = listener
  listener.stop(true)
  return port
}

/**
 * Starts `<binary> <args>` (the compiled service: `serve`) on a free loopback port given in PORT, as an
 * operator would: stdout (its JSON access log) and stderr go to files, not pipes (a pipe would also need
 * a reader in this process, competing for the 2 cores at tens of thousands of log lines a second). Ready
 * when `readyPath` answers at all; nothing else of its log format is relied upon.
 */
export async function startService(
  binary: string,
  env: Record<string, string>,
  logPath: string,
  options: { args?: string[]; readyPath?: string; timeoutMs?: number } = {},
): Promise<ServiceHandle> {
  const { args = ['serve'], readyPath = '/health', timeoutMs = 20_000 } = options
  let lastError = ''
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = freePort()
    const url = `http://127.0.0.1:${port}`
    const proc = Bun.spawn([...PDEATHSIG, binary, ...args], {
      env: { ...baseEnv(), ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdin: 'ignore',
      stdout: Bun.file(logPath),
      stderr: Bun.file(`${logPath}.err`),
    })
    children.add({ name: binary, proc })
    const deadline = Date.now() + timeoutMs
    while (proc.exitCode === null && Date.now() < deadline) {
      const answered = await fetch(`${url}${readyPath}`, { signal: AbortSignal.timeout(1000) }).then(
        async (response) => {
          await response.arrayBuffer()
          return true
        },
        () => false,
      )
      if (answered)
        return {
          proc,
          url,
          pid: proc.pid,
          logPath,
          alive: () => proc.exitCode === null && proc.signalCode === null,
          stop: () => stopChild(proc, 20_000),
        }
      await Bun.sleep(50)
    }
    const log = existsSync(logPath) ? readFileSync(logPath, 'utf8') : ''
    const err = existsSync(`${logPath}.err`) ? readFileSync(`${logPath}.err`, 'utf8') : ''
    const exitCode = proc.exitCode
    await stopChild(proc)
    lastError = `${binary} did not start on port ${port} (exit ${exitCode}):\n${log.slice(-4000)}\n${err.slice(-4000)}`
    if (exitCode === null || !/EADDRINUSE|address already in use/i.test(log + err)) break // only a port race is worth a retry
  }
  throw new Error(lastError)
}

/** VmRSS and VmHWM (peak RSS since start) of a process, in bytes, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? Number.NaN) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
}

/** CPU time (user+system) of a process in ms, from /proc/<pid>/stat. */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12]) // utime, stime (fields 14 and 15 of stat)
  return (ticks * 1000) / 100 // USER_HZ is 100 on Linux
}

/** Runs a Bun helper to completion and returns the JSON of its `BENCH_RESULT {json}` line. */
export async function runForResult<T>(name: string, command: string[], env: Record<string, string> = {}): Promise<T> {
  const proc = Bun.spawn([...PDEATHSIG, ...command], { env: { ...baseEnv(), ...env }, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  const child = { name, proc }
  children.add(child)
  try {
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
    if (code !== 0 || !line) throw new Error(`${name} failed (exit ${code}):\n${out.slice(-2000)}\n${err.slice(-4000)}`)
    return JSON.parse(line.slice('BENCH_RESULT '.length)) as T
  } finally {
    children.delete(child)
  }
}

/**
 * Starts a child (a client command under measurement) registered for cleanup, with the parent-death
 * signal; its stdout and stderr go to `logPath` and `logPath.err`. The caller awaits `proc.exited`.
 */
export function spawnChild(name: string, command: string[], env: Record<string, string>, logPath: string, cwd?: string): Subprocess {
  const proc = Bun.spawn([...PDEATHSIG, ...command], {
    cwd,
    env: { ...baseEnv(), ...env },
    stdin: 'ignore',
    stdout: Bun.file(logPath),
    stderr: Bun.file(`${logPath}.err`),
  })
  const child = { name, proc }
  children.add(child)
  void proc.exited.then(() => children.delete(child))
  return proc
}

/** A command run to its end under measurement: exit code, wall time, and the kernel's account of it. */
export type MeasuredRun = { exitCode: number; wallMs: number; peakRssBytes: number; cpuMs: number; timedOut: boolean }

/**
 * Runs a command to its end under GNU time (`gnuTime`: its path, Debian's `time`; lib/debian.ts
 * ensureCommands installs it) and measures it. Peak RSS is the kernel's `ru_maxrss` of the command, which
 * GNU time reads from its own wait4: a high-water mark kept until exit, so no sampling interval misses a
 * spike and a process that exits quickly is counted as well. (Bun's `resourceUsage()` of a child gave the
 * peak of an earlier, larger child in the bench's process, so it is not used.) CPU is user + system.
 * The command is killed after `timeoutMs` (then `timedOut`); wall time is measured here.
 */
export async function runMeasured(
  name: string,
  command: string[],
  options: { gnuTime: string; logPath: string; env?: Record<string, string>; cwd?: string; timeoutMs: number },
): Promise<MeasuredRun> {
  const account = `${options.logPath}.time`
  rmSync(account, { force: true })
  // The command gets its own parent-death signal: it dies with GNU time, which dies with the bench.
  const timed = [options.gnuTime, '--quiet', '-o', account, '-f', '%M %U %S', ...PDEATHSIG, ...command]
  const started = performance.now()
  const proc = spawnChild(name, timed, options.env ?? {}, options.logPath, options.cwd)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    proc.kill('SIGKILL')
  }, options.timeoutMs)
  const exitCode = await proc.exited
  const wallMs = performance.now() - started
  clearTimeout(timer)
  // Its last line (a command killed by a signal has a line before it saying so); none when GNU time was killed.
  const line = (existsSync(account) ? readFileSync(account, 'utf8') : '').trim().split('\n').at(-1) ?? ''
  const [kib = Number.NaN, user = Number.NaN, system = Number.NaN] = /^\d+ [\d.]+ [\d.]+$/u.test(line) ? line.split(' ').map(Number) : []
  return { exitCode, wallMs, peakRssBytes: kib * 1024, cpuMs: (user + system) * 1000, timedOut }
}
