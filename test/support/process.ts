// Runs the service as a separate process (source or compiled binary), for crash, signal and CLI tests.
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { COMMANDS, type CommandModule } from '../../src/cli/commands'
import type { Interrupts } from '../../src/cli/shared/io'

export const REPO_ROOT = join(import.meta.dir, '..', '..')
export const SOURCE_COMMAND = [process.execPath, join(REPO_ROOT, 'src', 'main.ts')]

export type ServiceProcess = {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  output(): string
  exited: Promise<number>
}

/** Runs `alttext` with arguments and returns exit code and output (for --help, --version, bad config). */
export async function runCommand(args: string[], env: Record<string, string> = {}, command = SOURCE_COMMAND, cwd = REPO_ROOT) {
  const proc = Bun.spawn([...command, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

/** Interrupts that only `fire` sends: Ctrl-C for a command run in-process. */
export function manualInterrupts(): Interrupts & { fire(): void } {
  const listeners = new Set<() => void>()
  return {
    listen(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    fire() {
      for (const listener of [...listeners]) listener()
    },
  }
}

export type CliOptions = {
  /** The folder the command runs in (REPO_ROOT, as runCommand's). */
  cwd?: string
  interrupts?: Interrupts
  clock?: () => number
  /** Tells the command a terminal of this width is on stderr (progress redrawn in place). */
  tty?: { columns: number }
  /** Runs this instead of the command's own `run` (doctor's runDoctor with short deadlines, say). */
  run?: CommandModule['run']
}

/**
 * `alttext COMMAND …` in this process: runCommand's result without a process to start (a few ms
 * instead of a second). The environment is `env` alone, as runCommand's is PATH and HOME and `env`.
 * For what needs a real process (signals, a TTY, main.ts's own wiring, serve), use runCommand.
 */
export async function runCli(args: string[], env: Record<string, string> = {}, options: CliOptions = {}) {
  const [name, ...rest] = args
  const entry = name === undefined ? undefined : COMMANDS[name]
  if (!entry) throw new Error(`runCli runs the commands of src/cli/commands.ts, not "${args.join(' ')}": use runCommand`)
  let stdout = ''
  let stderr = ''
  const run = options.run ?? (await entry.load()).run
  const io = {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: options.tty !== undefined, columns: options.tty?.columns },
    cwd: options.cwd ?? REPO_ROOT,
    clock: options.clock ?? Date.now,
    interrupts: options.interrupts ?? manualInterrupts(),
    lowerPriority: () => {},
  }
  let code: number
  try {
    code = await run(rest, io)
  } catch (error) {
    // As main.ts says a command's unexpected failure.
    stderr += `alttext ${name}: ${error instanceof Error ? error.message : String(error)}\n`
    code = 1
  }
  return { code, stdout, stderr }
}

/** Starts the service on PORT=0 and resolves once its "listening" log line names the port. */
export async function spawnService(env: Record<string, string>, command = SOURCE_COMMAND, cwd = REPO_ROOT, timeoutMs = 15_000): Promise<ServiceProcess> {
  const proc = Bun.spawn([...command, 'serve'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', OLLAMA_HOST: 'http://127.0.0.1:9', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let text = ''
  let errText = ''
  const decoder = new TextDecoder()
  const { promise: urlPromise, resolve: resolveUrl, reject: rejectUrl } = Promise.withResolvers<string>()
  void (async () => {
    for await (const chunk of proc.stdout) {
      text += decoder.decode(chunk, { stream: true })
      const match = text.match(/"msg":"listening","url":"([^"]+)"/)
      // The log gives the URL to open (`http://localhost:3000/`); callers append paths to it.
      if (match) resolveUrl(match[1]!.replace(/\/$/, ''))
    }
  })()
  void (async () => {
    for await (const chunk of proc.stderr) errText += decoder.decode(chunk, { stream: true })
  })()
  const exited = proc.exited
  void exited.then((code) => rejectUrl(new Error(`service exited with ${code} before listening:\n${text}\n${errText}`)))
  const timer = setTimeout(() => rejectUrl(new Error(`service did not listen within ${timeoutMs} ms:\n${text}\n${errText}`)), timeoutMs)
  try {
    const url = await urlPromise
    return { proc, url, output: () => text + errText, exited }
  } finally {
    clearTimeout(timer)
  }
}
