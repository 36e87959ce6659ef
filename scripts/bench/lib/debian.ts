// Tools the bench takes from Debian's packages (wrk, the native image codecs' command-line tools):
// installed with apt-get when missing (this project's machines run as root).
import { baseEnv } from './procs'

async function aptGet(args: string[]): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn(['apt-get', ...args], { env: { ...baseEnv(), DEBIAN_FRONTEND: 'noninteractive' }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, out: out + err }
}

/** The path of each command, installing the Debian packages (command → package) of those missing. */
export async function ensureCommands(packages: Record<string, string>): Promise<Record<string, string>> {
  const missing = Object.entries(packages).filter(([command]) => !Bun.which(command))
  if (missing.length > 0) {
    const names = [...new Set(missing.map(([, pkg]) => pkg))]
    if (process.getuid?.() !== 0)
      throw new Error(`${missing.map(([c]) => c).join(', ')} missing and this is not root: run \`sudo apt-get install -y ${names.join(' ')}\` first`)
    console.error(`bench: ${missing.map(([c]) => c).join(', ')} missing; installing with apt-get (Debian: ${names.join(', ')})`)
    let result = await aptGet(['install', '-y', '-q', ...names])
    if (result.code !== 0) {
      await aptGet(['update', '-q'])
      result = await aptGet(['install', '-y', '-q', ...names])
    }
    const still = missing.filter(([command]) => !Bun.which(command))
    if (still.length > 0) throw new Error(`could not install ${names.join(', ')} with apt-get:\n${result.out.slice(-2000)}`)
  }
  return Object.fromEntries(Object.keys(packages).map((command) => [command, Bun.which(command)!]))
}
