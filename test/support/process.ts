// Runs the service as a separate process (source or compiled binary), for crash, signal and CLI tests.
import { join } from 'node:path'
import type { Subprocess } from 'bun'

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
