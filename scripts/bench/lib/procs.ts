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

export type ServiceHandle = { proc: Subprocess; url: string; pid: number; logPath: string; stop(): Promise<void> }

/**
 * Starts the compiled binary with PORT=0 on loopback. Its log goes to a file (a pipe would need a
 * reader in this process, competing for the 2 cores at tens of thousands of log lines a second);
 * the URL comes from its `listening` line.
 */
export async function startService(binary: string, env: Record<string, string>, logPath: string, timeoutMs = 20_000): Promise<ServiceHandle> {
  const proc = Bun.spawn([...PDEATHSIG, binary, 'serve'], {
    env: { ...baseEnv(), PORT: '0', HOST: '127.0.0.1', ...env },
    stdin: 'ignore',
    stdout: Bun.file(logPath),
    stderr: Bun.file(`${logPath}.err`),
  })
  const child = { name: 'alttext', proc }
  children.add(child)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const log = existsSync(logPath) ? readFileSync(logPath, 'utf8') : ''
    const match = log.match(/"msg":"listening","url":"([^"]+)"/)
    if (match) {
      const url = match[1]!
      return { proc, url, pid: proc.pid, logPath, stop: () => stopChild(proc, 20_000) }
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      const err = existsSync(`${logPath}.err`) ? readFileSync(`${logPath}.err`, 'utf8') : ''
      await stopChild(proc)
      throw new Error(`alttext did not start (exit ${proc.exitCode}):\n${log.slice(-4000)}\n${err.slice(-4000)}`)
    }
    await Bun.sleep(20)
  }
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
