// A throwaway Redis for tests: Debian's redis-server on an ephemeral loopback port, in a temporary folder,
// with nothing written to disk (--save '' --appendonly no). It can be stopped and started again on the same
// port (an outage and its end), or frozen with SIGSTOP (a Redis that hangs).
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'

export const REDIS_SERVER = Bun.which('redis-server') ?? '/usr/bin/redis-server'

/**
 * Whether a Redis test file runs: it needs Debian's redis-server. Without it the file is skipped with a
 * loud line, except under CI (CI=true), where it runs and fails, so a missing package is never silent.
 */
export function redisTestsRun(file: string): boolean {
  if (existsSync(REDIS_SERVER) || process.env.CI === 'true') return true
  console.warn(`[redis test] SKIPPED ${file}: redis-server is not installed (apt install redis-server); under CI=true this fails`)
  return false
}

export type TestRedis = {
  /** redis://[:password@]127.0.0.1:port */
  url: string
  port: number
  /** Stops the server (SIGKILL: no goodbye to clients, like a crash) and waits for its exit. */
  stop(): Promise<void>
  /** Starts it again on the same port, empty. */
  start(): Promise<void>
  /** Freezes the process (SIGSTOP): connections stay open and nothing is answered. */
  pause(): void
  resume(): void
  /** Stops it for good and removes its folder. */
  close(): Promise<void>
}

/** A port free on 127.0.0.1 a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no free port')
  return address.port
}

/** Runs redis-server on `port` and resolves once it accepts connections; rejects with its output if it exits first. */
async function run(port: number, dir: string, password: string | undefined): Promise<Subprocess<'ignore', 'pipe', 'pipe'>> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
  if (password !== undefined) args.push('--requirepass', password)
  const proc = Bun.spawn([REDIS_SERVER, ...args], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const decoder = new TextDecoder()
  let output = ''
  const ready = (async () => {
    for await (const chunk of proc.stdout) {
      output += decoder.decode(chunk, { stream: true })
      if (output.includes('Ready to accept connections')) return true
    }
    return false
  })()
  const ok = await Promise.race([ready, proc.exited.then(() => false)])
  if (!ok) throw new Error(`redis-server did not start on port ${port}:\n${output}${await new Response(proc.stderr).text()}`)
  // Keep reading, so that a full pipe never blocks the server.
  void (async () => {
    for await (const _ of proc.stdout) {
    }
  })()
  return proc
}

export async function startRedis(options: { password?: string } = {}): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'alttext-redis-'))
  let port = 0
  let proc: Subprocess<'ignore', 'pipe', 'pipe'> | null = null
  // Another process may take the port between the check and the start: try a few.
  for (let attempt = 0; proc === null; attempt++) {
    port = await freePort()
    try {
      proc = await run(port, dir, options.password)
    } catch (error) {
      if (attempt >= 4) throw error
    }
  }
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`
  const redis: TestRedis = {
    url: `redis://${auth}127.0.0.1:${port}`,
    port,
    async stop() {
      if (proc === null) return
      proc.kill('SIGKILL')
      await proc.exited
      proc = null
    },
    async start() {
      if (proc !== null) throw new Error('redis-server is running already')
      proc = await run(port, dir, options.password)
    },
    pause() {
      proc?.kill('SIGSTOP')
    },
    resume() {
      proc?.kill('SIGCONT')
    },
    async close() {
      redis.resume()
      await redis.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return redis
}
